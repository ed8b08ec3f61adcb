import type { Config } from '../shared/config.js'
import { BlobProducerRegistry } from './blobs.js'
import { DataSetRegistry } from './dataSets.js'
import { productBlobProducers, productDataSets, productReportSources } from './products.js'
import { ReportSourceRegistry } from './reportSources.js'
import { ExportWorkers } from './workers.js'

/** The export machinery of one running service: what it can export, and the jobs it runs. */
export interface ExportRuntime {
  dataSets: DataSetRegistry
  sources: ReportSourceRegistry
  blobs: BlobProducerRegistry
  workers: ExportWorkers
}

export const createExportRuntime = (config: Config): ExportRuntime => ({
  dataSets: new DataSetRegistry(productDataSets),
  sources: new ReportSourceRegistry(productReportSources),
  blobs: new BlobProducerRegistry(productBlobProducers),
  workers: new ExportWorkers(config.exportsConcurrency),
})

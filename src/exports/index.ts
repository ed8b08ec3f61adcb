import type { Config } from '../shared/config.js'
import { KeyedLock } from '../shared/keyedLock.js'
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
  /**
   * The admission of one organization's reports jobs, serialized on this
   * instance so concurrent requests cannot both slip under the cap: one lock
   * per service instance, shared by every route that admits them (POST
   * /exports and the legacy POST /reports/export).
   */
  reportsAdmission: KeyedLock
}

export const createExportRuntime = (config: Config): ExportRuntime => ({
  dataSets: new DataSetRegistry(productDataSets),
  sources: new ReportSourceRegistry(productReportSources),
  blobs: new BlobProducerRegistry(productBlobProducers),
  workers: new ExportWorkers(config.exportsConcurrency),
  reportsAdmission: new KeyedLock(),
})

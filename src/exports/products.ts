import type { BlobProducer } from './blobs.js'
import type { DataSet } from './dataSets.js'
import type { ReportSource } from './reportSources.js'

/** The product's data sets, one module per export type (src/exports/dataSets/<type>.ts). */
export const productDataSets: readonly DataSet[] = []

/** The sources `reports` draws columns from. */
export const productReportSources: readonly ReportSource[] = []

/** The producers of the `logs`, `daily` and `monthly` blobs. */
export const productBlobProducers: readonly BlobProducer[] = []

import type { Queries } from '../projections/queries.js'
import { CSV_CONTENT_TYPE } from './catalogue.js'
import { recordBatches, type Column } from './csv.js'
import type { OpenedDataSet } from './dataSets.js'
import { Registry } from './registry.js'

/** GET /exports/blobs/{type}: pre-built files, one current file per organization and kind. */
export const blobKinds = ['logs', 'daily', 'monthly'] as const
export type BlobKind = (typeof blobKinds)[number]

export interface BlobPeriod {
  /** `2026-01-14` for a day, `2026-01` for a month. */
  label: string
  /** Inclusive start and exclusive end, ISO 8601. */
  start: string
  end: string
}

/** `logs` and `daily` cover the previous UTC day, `monthly` the previous UTC month. */
export const blobPeriod = (kind: BlobKind, now: Date): BlobPeriod => {
  const year = now.getUTCFullYear()
  const month = now.getUTCMonth()
  if (kind === 'monthly') {
    const start = new Date(Date.UTC(year, month - 1, 1))
    return { label: start.toISOString().slice(0, 7), start: start.toISOString(), end: new Date(Date.UTC(year, month, 1)).toISOString() }
  }
  const end = new Date(Date.UTC(year, month, now.getUTCDate()))
  const start = new Date(end.getTime() - 86_400_000)
  return { label: start.toISOString().slice(0, 10), start: start.toISOString(), end: end.toISOString() }
}

/** node-cron schedules (server time): a little after the period closes. */
export const blobSchedules: Record<BlobKind, string> = {
  daily: '5 0 * * *',
  logs: '15 0 * * *',
  monthly: '25 0 1 * *',
}

export interface BlobContext {
  organizationId: string
  queries: Queries
  period: BlobPeriod
  signal: AbortSignal
}

export interface BlobProducerDefinition<Row> {
  kind: BlobKind
  description: string
  columns: readonly Column<Row>[]
  rows(context: BlobContext): AsyncIterable<Row>
}

export interface BlobProducer {
  kind: BlobKind
  description: string
  contentType: string
  open(context: BlobContext): OpenedDataSet
}

export const defineBlobProducer = <Row>(definition: BlobProducerDefinition<Row>): BlobProducer => ({
  kind: definition.kind,
  description: definition.description,
  contentType: CSV_CONTENT_TYPE,
  open: (context) => ({ header: definition.columns.map((c) => c.name), batches: recordBatches(definition.columns, definition.rows(context)) }),
})

/** What the blob jobs produce; a kind without a producer is never built and answers 404. */
export class BlobProducerRegistry extends Registry<BlobKind, BlobProducer> {
  constructor(initial: readonly BlobProducer[] = []) {
    super((producer) => producer.kind, initial)
  }
}

export const blobFileName = (kind: BlobKind, period: string): string => `${kind}-${period}.csv`

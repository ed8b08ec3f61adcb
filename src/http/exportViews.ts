import { Type } from 'typebox'
import type { RecordedOf } from '../events/catalogue.js'
import type { ExportEvent } from '../events/export.js'
import { exportTypes } from '../exports/catalogue.js'
import type { ExportJobDoc, ExportJobStatus } from '../projections/exports.js'
import { Timestamp, Uuid } from './schemas.js'

export const ExportTypeName = Type.Union(exportTypes.map((type) => Type.Literal(type)), { description: 'export type' })

export const ExportStatusName = Type.Union([Type.Literal('queued'), Type.Literal('running'), Type.Literal('done'), Type.Literal('failed')], {
  description: 'queued → running → done | failed (running → queued when interrupted); done and failed are final',
})

export const ExportProgress = Type.Object({
  rows: Type.Integer({ description: 'rows written so far' }),
  totalRows: Type.Union([Type.Integer(), Type.Null()], { description: 'rows the export will have, when known ahead' }),
  percent: Type.Union([Type.Integer({ minimum: 0, maximum: 100 }), Type.Null()], { description: '100 once done; null when the total is unknown' }),
})

export const ExportJob = Type.Object({
  orderID: Uuid,
  type: Type.String({ description: 'export type' }),
  status: ExportStatusName,
  error: Type.Optional(Type.String({ description: 'why the job failed (status failed only)' })),
  progress: ExportProgress,
  attempts: Type.Integer({ description: 'runs started (a job interrupted by a restart runs again)' }),
  parameters: Type.Object({}, { additionalProperties: true, description: 'the request body without `type`' }),
  requestedAt: Timestamp,
  startedAt: Type.Optional(Timestamp),
  completedAt: Type.Optional(Timestamp),
  failedAt: Type.Optional(Timestamp),
  expiresAt: Type.Optional(Type.String({ format: 'date-time', description: 'when the file stops being served' })),
  expiredAt: Type.Optional(Type.String({ format: 'date-time', description: 'present once the file has expired (GET …/file answers 410)' })),
  file: Type.Optional(Type.Object({
    fileId: Type.String({ format: 'uuid', description: 'what the legacy file routes take (GET /v1/export/orders/file/{fileid}, GET /v1/reports/export/download/{fileid})' }),
    fileName: Type.String(),
    contentType: Type.String(),
    size: Type.Integer({ description: 'bytes' }),
    rowCount: Type.Integer({ description: 'data rows, header excluded' }),
    sha256: Type.String({ description: 'hex SHA-256 of the content' }),
  })),
})

const percentOf = (status: ExportJobStatus, rows: number, totalRows: number | null): number | null => {
  if (status === 'done') return 100
  if (totalRows === null) return null
  if (totalRows === 0) return 0
  return Math.min(99, Math.floor((rows * 100) / totalRows))
}

/** A job's expiry: recorded by the expiry job, or due by the clock already (the file is never served past it). */
export const expiredAtOf = (doc: ExportJobDoc, now: Date): string | null => {
  if (doc.expiredAt !== null) return doc.expiredAt
  if (doc.expiresAt !== null && new Date(doc.expiresAt) <= now) return doc.expiresAt
  return null
}

const optional = <K extends string>(key: K, value: string | null): Partial<Record<K, string>> => {
  const field: Partial<Record<K, string>> = {}
  if (value !== null) field[key] = value
  return field
}

export const exportJobView = (doc: ExportJobDoc, now: Date) => ({
  orderID: doc._id,
  type: doc.exportType,
  status: doc.status,
  ...optional('error', doc.error),
  progress: { rows: doc.rows, totalRows: doc.totalRows, percent: percentOf(doc.status, doc.rows, doc.totalRows) },
  attempts: doc.attempts,
  parameters: doc.parameters,
  requestedAt: doc.requestedAt,
  ...optional('startedAt', doc.startedAt),
  ...optional('completedAt', doc.completedAt),
  ...optional('failedAt', doc.failedAt),
  ...optional('expiresAt', doc.expiresAt),
  ...optional('expiredAt', expiredAtOf(doc, now)),
  ...(doc.file === null || doc.rowCount === null ? {} : {
    file: { fileId: doc.file.fileId, fileName: doc.file.fileName, contentType: doc.file.contentType, size: doc.file.size, rowCount: doc.rowCount, sha256: doc.file.sha256 },
  }),
})

/** The data of an `export.updated` server-sent event. */
export interface ExportUpdate {
  id: string
  status: ExportJobStatus
  type: string
  progress: { rows: number; totalRows: number | null; percent: number | null }
  error?: string
  expiredAt?: string
}

const progress = (status: ExportJobStatus, rows: number, totalRows: number | null) => ({ rows, totalRows, percent: percentOf(status, rows, totalRows) })

/** What an export event tells a subscriber, from the event alone. */
export const updateOfEvent = (event: RecordedOf<ExportEvent['type']>): ExportUpdate => {
  const base = { id: event.data.orderId, type: event.data.exportType }
  switch (event.type) {
    case 'ExportRequested':
    case 'ExportInterrupted':
      return { ...base, status: 'queued', progress: progress('queued', 0, null) }
    case 'ExportStarted':
      return { ...base, status: 'running', progress: progress('running', 0, null) }
    case 'ExportProgressed':
      return { ...base, status: 'running', progress: progress('running', event.data.rows, event.data.totalRows) }
    case 'ExportCompleted':
      return { ...base, status: 'done', progress: progress('done', event.data.rowCount, event.data.rowCount) }
    case 'ExportFailed':
      return { ...base, status: 'failed', progress: progress('failed', 0, null), error: event.data.error }
    case 'ExportExpired':
      return { ...base, status: 'done', progress: progress('done', 0, null), expiredAt: event.data.expiredAt }
    case 'ExportFileDeleted':
      return { ...base, status: 'done', progress: progress('done', 0, null) }
    default: {
      const _never: never = event
      return _never
    }
  }
}

/**
 * Whether the update of an event of this type must be read from the job's
 * read model: these events do not carry the job's rows (a failure keeps the
 * rows written so far; expiry and file deletion keep the completed job's)
 * nor, for a deleted file, the expiry. The others carry every field of the
 * update, set from them by the projection, so they cost no lookup on the
 * progress fan-out.
 */
export const needsJobDoc = (type: ExportEvent['type']): boolean => {
  switch (type) {
    case 'ExportRequested':
    case 'ExportStarted':
    case 'ExportProgressed':
    case 'ExportCompleted':
    case 'ExportInterrupted':
      return false
    case 'ExportFailed':
    case 'ExportExpired':
    case 'ExportFileDeleted':
      return true
    default: {
      const _never: never = type
      return _never
    }
  }
}

/**
 * A live event's update from the job's read model, as a reconnecting client
 * would get it; from the event alone when the document is missing or has not
 * reached the event (its projection failed and was left behind).
 */
export const updateOfJob = (event: RecordedOf<ExportEvent['type']>, doc: ExportJobDoc | null, now: Date): ExportUpdate =>
  doc === null || (doc._position ?? 0) < event.position ? updateOfEvent(event) : updateOfDoc(doc, now)

/** The same update from the read model, for a client catching up after a reconnection. */
export const updateOfDoc = (doc: ExportJobDoc, now: Date): ExportUpdate => {
  const expiredAt = expiredAtOf(doc, now)
  return {
    id: doc._id, status: doc.status, type: doc.exportType, progress: progress(doc.status, doc.rows, doc.totalRows),
    ...(doc.error === null ? {} : { error: doc.error }),
    ...(expiredAt === null ? {} : { expiredAt }),
  }
}

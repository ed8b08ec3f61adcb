import type { Event, RequestKey } from './types.js'

/**
 * What a job was asked for: the POST /exports body without its `type`. Which
 * fields a type accepts is fixed by its body schema (src/exports/catalogue.ts);
 * the event keeps them as plain JSON.
 */
export interface ExportParameters {
  after?: string
  before?: string
  /** `payments` and `reports`: the filter object of the type's body schema. */
  filters?: Record<string, unknown>
  /** `csv-a`. */
  typeFile?: string
  /** `reports`. */
  format?: string
  /** `reports`: `source.column` names. */
  columns?: string[]
}

export interface ExportFile {
  fileId: string
  fileName: string
  contentType: string
  size: number
  sha256: string
}

/** Stream `export-<orderId>`: one asynchronous export job. Every event names the job's organization and type. */
export type ExportRequested = Event<'ExportRequested', {
  orderId: string
  organizationId: string
  exportType: string
  parameters: ExportParameters
  requestedBy: string | null
  requestedAt: string
  /** The requester's `Idempotency-Key` and its request's hash; absent when it was requested without one. */
  idempotency?: RequestKey
}>
/** A runner claimed the job; `attemptId` names this run so a stale runner cannot write over a newer one. */
export type ExportStarted = Event<'ExportStarted', {
  orderId: string
  organizationId: string
  exportType: string
  attemptId: string
  attempt: number
  startedAt: string
}>
/** Rows written so far; also the heartbeat of the running attempt. `totalRows` is null when the data set cannot count ahead. */
export type ExportProgressed = Event<'ExportProgressed', {
  orderId: string
  organizationId: string
  exportType: string
  attemptId: string
  rows: number
  totalRows: number | null
  at: string
}>
export type ExportCompleted = Event<'ExportCompleted', {
  orderId: string
  organizationId: string
  exportType: string
  attemptId: string
  file: ExportFile
  rowCount: number
  completedAt: string
  /** When the file stops being served (completion plus the retention period). */
  expiresAt: string
}>
export type ExportFailed = Event<'ExportFailed', {
  orderId: string
  organizationId: string
  exportType: string
  error: string
  failedAt: string
}>
/** The running attempt stopped without finishing (service stopped, or no heartbeat); the job is queued again. */
export type ExportInterrupted = Event<'ExportInterrupted', {
  orderId: string
  organizationId: string
  exportType: string
  attemptId: string
  reason: string
  interruptedAt: string
}>
/** The retention period passed: the file is no longer served and its content is deleted. */
export type ExportExpired = Event<'ExportExpired', {
  orderId: string
  organizationId: string
  exportType: string
  fileId: string
  expiredAt: string
}>
export type ExportFileDeleted = Event<'ExportFileDeleted', {
  orderId: string
  organizationId: string
  exportType: string
  fileId: string
  deletedAt: string
}>

export type ExportEvent =
  | ExportRequested
  | ExportStarted
  | ExportProgressed
  | ExportCompleted
  | ExportFailed
  | ExportInterrupted
  | ExportExpired
  | ExportFileDeleted

export const exportEventTypes = [
  'ExportRequested', 'ExportStarted', 'ExportProgressed', 'ExportCompleted', 'ExportFailed', 'ExportInterrupted', 'ExportExpired',
  'ExportFileDeleted',
] as const satisfies ReadonlyArray<ExportEvent['type']>

/** Stream `exportBlob-<id>` (one per organization and blob kind): each pre-built file as it is produced. */
export type ExportBlobProduced = Event<'ExportBlobProduced', {
  organizationId: string
  kind: string
  /** What the file covers: `2026-01-14` for a day, `2026-01` for a month. */
  period: string
  file: ExportFile
  rowCount: number
  producedAt: string
  /** The file this one replaces (its content is deleted), or null. */
  replacesFileId: string | null
}>

export type ExportBlobEvent = ExportBlobProduced

/** Stream `legacyExportUsage-<organizationId>`: every call of a legacy export route, before or after its sunset. */
export type LegacyExportRouteCalled = Event<'LegacyExportRouteCalled', {
  organizationId: string
  /** `GET /export/receivables`: method and legacy path without the /v1 prefix. */
  route: string
  calledBy: string | null
  afterSunset: boolean
  calledAt: string
}>

export type LegacyExportUsageEvent = LegacyExportRouteCalled

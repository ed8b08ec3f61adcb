import type { ExportBlobEvent, ExportEvent, ExportFile, ExportParameters } from '../events/export.js'
import type { RequestKey } from '../events/types.js'
import { AppError } from '../shared/errors.js'
import { deterministicId } from '../shared/ids.js'
import { money } from '../shared/money.js'
import type { Aggregate } from './decider.js'
import type { CommandHandler } from './handler.js'
import { canonical, createOnceUnderKey, hashRequest } from './idempotency.js'

export type ExportStatus = 'queued' | 'running' | 'done' | 'failed'

export type ExportCommand =
  | {
    type: 'RequestExport'
    orderId: string
    organizationId: string
    exportType: string
    parameters: ExportParameters
    requestedBy: string | null
    now: string
    /** The requester's `Idempotency-Key` (the order id from `keyedExportId`) and its request's hash (`exportRequestHash`). */
    idempotency?: RequestKey
  }
  | { type: 'StartExport'; attemptId: string; now: string }
  | { type: 'RecordExportProgress'; attemptId: string; rows: number; totalRows: number | null; now: string }
  | { type: 'CompleteExport'; attemptId: string; file: ExportFile; rowCount: number; now: string; expiresAt: string }
  /** `attemptId` null: the job is failed from outside its run (e.g. it was interrupted too often). */
  | { type: 'FailExport'; attemptId: string | null; error: string; now: string }
  | { type: 'InterruptExport'; attemptId: string; reason: string; maxAttempts: number; now: string }
  | { type: 'ExpireExport'; now: string }
  | { type: 'RecordExportFileDeleted'; now: string }

export interface ExportState {
  status: ExportStatus | 'none'
  orderId: string
  organizationId: string
  exportType: string
  attempts: number
  attemptId: string | null
  file: ExportFile | null
  expiresAt: string | null
  expired: boolean
  fileDeleted: boolean
  /** What the job was asked for: who may see it depends on it (a report's columns). */
  parameters: ExportParameters
  /** The `Idempotency-Key` it was requested with, and its request's hash; absent when it was requested without one. */
  idempotency?: RequestKey
}

const requireJob = (state: ExportState): void => {
  if (state.status === 'none') throw new AppError('NOT_FOUND', 'export not found', { resource: 'export' })
}

/** Only the attempt that holds the job may report on it: a runner whose job was taken over must stop. */
const requireAttempt = (state: ExportState, attemptId: string): void => {
  requireJob(state)
  if (state.status !== 'running' || state.attemptId !== attemptId) {
    throw new AppError('EXPORT_ATTEMPT_SUPERSEDED', `attempt ${attemptId} no longer holds export ${state.orderId}`, {
      orderID: state.orderId, status: state.status,
    })
  }
}

const keys = (state: ExportState) => ({ orderId: state.orderId, organizationId: state.organizationId, exportType: state.exportType })

const isFinal = (state: ExportState) => state.status === 'done' || state.status === 'failed'

/**
 * An export job: `queued` → `running` → `done` | `failed`; a running attempt
 * that is interrupted goes back to `queued` until it has run `maxAttempts`
 * times, then fails. A done job's file expires once (its status stays `done`).
 */
export const exportAggregate: Aggregate<ExportCommand, ExportEvent, ExportState> = {
  streamType: 'export',
  eventTypes: ['ExportRequested', 'ExportStarted', 'ExportProgressed', 'ExportCompleted', 'ExportFailed', 'ExportInterrupted',
    'ExportExpired', 'ExportFileDeleted'],
  initialState: () => ({
    status: 'none', orderId: '', organizationId: '', exportType: '', parameters: {}, attempts: 0, attemptId: null, file: null, expiresAt: null, expired: false, fileDeleted: false,
  }),
  decide(command, state) {
    switch (command.type) {
      case 'RequestExport':
        if (state.status !== 'none') {
          // A concurrent request with the same Key requested it first: `requestExportOnce` answers that job.
          if (command.idempotency !== undefined) return []
          throw new AppError('ALREADY_EXISTS', `export ${command.orderId} already exists`)
        }
        return [{ type: 'ExportRequested', data: {
          orderId: command.orderId, organizationId: command.organizationId, exportType: command.exportType,
          parameters: command.parameters, requestedBy: command.requestedBy, requestedAt: command.now,
          ...(command.idempotency === undefined ? {} : { idempotency: command.idempotency }),
        } }]
      case 'StartExport':
        requireJob(state)
        if (state.status !== 'queued') return []
        return [{ type: 'ExportStarted', data: { ...keys(state), attemptId: command.attemptId, attempt: state.attempts + 1, startedAt: command.now } }]
      case 'RecordExportProgress':
        requireAttempt(state, command.attemptId)
        return [{ type: 'ExportProgressed', data: {
          ...keys(state), attemptId: command.attemptId, rows: command.rows, totalRows: command.totalRows, at: command.now,
        } }]
      case 'CompleteExport':
        requireAttempt(state, command.attemptId)
        return [{ type: 'ExportCompleted', data: {
          ...keys(state), attemptId: command.attemptId, file: command.file, rowCount: command.rowCount, completedAt: command.now, expiresAt: command.expiresAt,
        } }]
      case 'FailExport':
        if (command.attemptId !== null) requireAttempt(state, command.attemptId)
        else requireJob(state)
        if (isFinal(state)) return []
        return [{ type: 'ExportFailed', data: { ...keys(state), error: command.error, failedAt: command.now } }]
      case 'InterruptExport':
        requireJob(state)
        if (state.status !== 'running' || state.attemptId !== command.attemptId) return []
        if (state.attempts >= command.maxAttempts) {
          return [{ type: 'ExportFailed', data: {
            ...keys(state),
            error: `the export was interrupted ${state.attempts} times (last: ${command.reason}); create it again`,
            failedAt: command.now,
          } }]
        }
        return [{ type: 'ExportInterrupted', data: { ...keys(state), attemptId: command.attemptId, reason: command.reason, interruptedAt: command.now } }]
      case 'ExpireExport':
        requireJob(state)
        if (state.status !== 'done' || state.expired || state.file === null) return []
        // The file expired when its retention ended, however late the expiry job noticed.
        return [{ type: 'ExportExpired', data: {
          ...keys(state), fileId: state.file.fileId,
          expiredAt: state.expiresAt !== null && new Date(state.expiresAt) < new Date(command.now) ? state.expiresAt : command.now,
        } }]
      case 'RecordExportFileDeleted':
        requireJob(state)
        if (!state.expired || state.fileDeleted || state.file === null) return []
        return [{ type: 'ExportFileDeleted', data: { ...keys(state), fileId: state.file.fileId, deletedAt: command.now } }]
      default: {
        const _never: never = command
        return _never
      }
    }
  },
  evolve(state, event) {
    switch (event.type) {
      case 'ExportRequested': {
        const { orderId, organizationId, exportType, parameters, idempotency } = event.data
        return { ...state, status: 'queued', orderId, organizationId, exportType, parameters, ...(idempotency === undefined ? {} : { idempotency }) }
      }
      case 'ExportStarted':
        return { ...state, status: 'running', attempts: event.data.attempt, attemptId: event.data.attemptId }
      case 'ExportProgressed':
        return state
      case 'ExportCompleted':
        return { ...state, status: 'done', attemptId: null, file: event.data.file, expiresAt: event.data.expiresAt }
      case 'ExportFailed':
        return { ...state, status: 'failed', attemptId: null }
      case 'ExportInterrupted':
        return { ...state, status: 'queued', attemptId: null }
      case 'ExportExpired':
        return { ...state, expired: true }
      case 'ExportFileDeleted':
        return { ...state, fileDeleted: true }
      default: {
        const _never: never = event
        return _never
      }
    }
  },
}

export type ExportBlobCommand = {
  type: 'RecordExportBlob'
  organizationId: string
  kind: string
  period: string
  file: ExportFile
  rowCount: number
  now: string
}

export interface ExportBlobState {
  period: string | null
  fileId: string | null
}

/** The pre-built file of one organization and blob kind: one per period, each replacing the last. */
export const exportBlobAggregate: Aggregate<ExportBlobCommand, ExportBlobEvent, ExportBlobState> = {
  streamType: 'exportBlob',
  eventTypes: ['ExportBlobProduced'],
  initialState: () => ({ period: null, fileId: null }),
  decide(command, state) {
    if (state.period === command.period) return []
    return [{ type: 'ExportBlobProduced', data: {
      organizationId: command.organizationId, kind: command.kind, period: command.period, file: command.file, rowCount: command.rowCount,
      producedAt: command.now, replacesFileId: state.fileId !== null && state.fileId !== command.file.fileId ? state.fileId : null,
    } }]
  },
  evolve: (_state, event) => ({ period: event.data.period, fileId: event.data.file.fileId }),
}

/** The id of the export job an organization's `Idempotency-Key` names: one job per Key, whatever the concurrency. */
export const keyedExportId = (organizationId: string, key: string): string => deterministicId('export', organizationId, key)

const DECIMAL = /^\d+(\.\d+)?$/

const instant = (value: unknown): unknown => (typeof value === 'string' && !Number.isNaN(Date.parse(value)) ? new Date(value).toISOString() : value)
const amount = (value: unknown): unknown => (typeof value === 'string' && DECIMAL.test(value) ? money(value).toFixed() : value)
const set = (value: unknown): unknown => (Array.isArray(value) ? [...new Set(value)].sort() : value)

/** A filter as the data set reads it: lists of choices as sets (order and repeats aside), amounts by value, one value as a list of one. */
const comparableFilters = (exportType: string, filters: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(filters).map(([name, value]) => {
    if (exportType === 'reports') return [name, set(typeof value === 'string' ? [value] : value)]
    return [name, name === 'minAmount' || name === 'maxAmount' ? amount(value) : set(value)]
  }))

/**
 * What makes two requests with one Key "the same": the type and the
 * parameters as the job reads them, so a client that writes a retry
 * otherwise is not refused: times as instants (`…T00:00:00Z` and
 * `…T00:00:00.000+00:00`), amounts by value, lists of choices in any order
 * (report columns keep theirs: they order the file), fields in any order.
 */
export const exportRequestHash = (exportType: string, parameters: ExportParameters): string => {
  const { after, before, filters, ...rest } = parameters
  return hashRequest([exportType, canonical({
    ...rest, after: instant(after), before: instant(before), filters: filters === undefined ? undefined : comparableFilters(exportType, filters),
  })])
}

/**
 * An export request under an `Idempotency-Key` (its order id from
 * `keyedExportId`): the first requests the job, the same request again gets
 * it back (`created: false`) whatever it has become (running, done, expired),
 * another request with the Key is refused (409 `IDEMPOTENCY_KEY_REUSED`),
 * naming the job only to a caller who may read it (`mayRead`).
 * `request` makes the job (its checks, then the command) and decides nothing
 * when the job exists by then.
 */
export const requestExportOnce = (
  commands: CommandHandler, command: Extract<ExportCommand, { type: 'RequestExport' }> & { idempotency: RequestKey },
  mayRead: (state: ExportState) => boolean,
  request: () => Promise<{ events: readonly unknown[]; position: number }>,
): Promise<{ created: boolean; position: number }> => createOnceUnderKey({
  requested: command.idempotency, what: 'export request', details: { orderID: command.orderId },
  load: () => commands.load(exportAggregate, command.orderId), exists: (state) => state.status !== 'none', recordedKey: (state) => state.idempotency,
  mayView: { allows: mayRead, refusal: 'this Idempotency-Key was already used by another caller, for a job this caller may not read' },
  create: request,
})

import type { ExportFile, ExportParameters } from '../events/export.js'
import { applyAt, defineProjection, updateAt } from './projection.js'
import type { Filter, ReadStore } from './readStore.js'

export type ExportJobStatus = 'queued' | 'running' | 'done' | 'failed'

export interface ExportJobDoc {
  _id: string
  _position?: number
  organizationId: string
  exportType: string
  parameters: ExportParameters
  status: ExportJobStatus
  attempts: number
  /** The running attempt, so a recovery can interrupt exactly it. */
  attemptId: string | null
  requestedBy: string | null
  requestedAt: string
  startedAt: string | null
  /** Last sign of life of the running attempt (start or progress). */
  heartbeatAt: string | null
  completedAt: string | null
  failedAt: string | null
  error: string | null
  rows: number
  totalRows: number | null
  file: ExportFile | null
  /** The file's id, top level so the legacy file routes find the job by it. */
  fileId: string | null
  rowCount: number | null
  expiresAt: string | null
  expiredAt: string | null
  fileDeletedAt: string | null
  updatedAt: string
}

const collection = {
  name: 'export_jobs',
  // The job list is read newest first; a type's jobs (the reports cap) by time.
  indexes: [{ organizationId: 1, _position: 1 }, { status: 1 }, { fileId: 1 }, { organizationId: 1, requestedAt: -1, _id: -1 },
    { organizationId: 1, exportType: 1, requestedAt: -1 }],
} as const

export const exportJobsProjection = defineProjection({
  name: 'exportJobs',
  handles: ['ExportRequested', 'ExportStarted', 'ExportProgressed', 'ExportCompleted', 'ExportFailed', 'ExportInterrupted', 'ExportExpired',
    'ExportFileDeleted'],
  collections: [collection],
  async project(store, event, position) {
    const docs = store.collection<ExportJobDoc>(collection)
    const id = event.data.orderId
    switch (event.type) {
      case 'ExportRequested':
        return applyAt(docs, id, position, () => ({
          _id: id, organizationId: event.data.organizationId, exportType: event.data.exportType, parameters: event.data.parameters,
          status: 'queued' as const, attempts: 0, attemptId: null, requestedBy: event.data.requestedBy, requestedAt: event.data.requestedAt, startedAt: null,
          heartbeatAt: null, completedAt: null, failedAt: null, error: null, rows: 0, totalRows: null, file: null, fileId: null, rowCount: null,
          expiresAt: null, expiredAt: null, fileDeletedAt: null, updatedAt: event.data.requestedAt,
        }))
      case 'ExportStarted':
        return updateAt(docs, id, position, (doc) => ({
          ...doc, status: 'running' as const, attempts: event.data.attempt, attemptId: event.data.attemptId, startedAt: event.data.startedAt, heartbeatAt: event.data.startedAt,
          rows: 0, totalRows: null, updatedAt: event.data.startedAt,
        }))
      case 'ExportProgressed':
        return updateAt(docs, id, position, (doc) => ({
          ...doc, rows: event.data.rows, totalRows: event.data.totalRows, heartbeatAt: event.data.at, updatedAt: event.data.at,
        }))
      case 'ExportCompleted':
        return updateAt(docs, id, position, (doc) => ({
          ...doc, status: 'done' as const, completedAt: event.data.completedAt, rows: event.data.rowCount, totalRows: event.data.rowCount,
          rowCount: event.data.rowCount, file: event.data.file, fileId: event.data.file.fileId, expiresAt: event.data.expiresAt,
          heartbeatAt: null, attemptId: null, updatedAt: event.data.completedAt,
        }))
      case 'ExportFailed':
        return updateAt(docs, id, position, (doc) => ({
          ...doc, status: 'failed' as const, error: event.data.error, failedAt: event.data.failedAt, heartbeatAt: null, attemptId: null, updatedAt: event.data.failedAt,
        }))
      case 'ExportInterrupted':
        return updateAt(docs, id, position, (doc) => ({
          ...doc, status: 'queued' as const, heartbeatAt: null, attemptId: null, rows: 0, totalRows: null, updatedAt: event.data.interruptedAt,
        }))
      case 'ExportExpired':
        return updateAt(docs, id, position, (doc) => ({ ...doc, expiredAt: event.data.expiredAt, updatedAt: event.data.expiredAt }))
      case 'ExportFileDeleted':
        return updateAt(docs, id, position, (doc) => ({ ...doc, fileDeletedAt: event.data.deletedAt, updatedAt: event.data.deletedAt }))
      default: {
        const _never: never = event
        return _never
      }
    }
  },
})

export interface ExportJobListQuery {
  organizationId: string
  /** Only these types (the ones the caller may see). */
  types: readonly string[]
  status?: ExportJobStatus
  requestedFrom?: string
  requestedTo?: string
  offset: number
  limit: number
}

export const exportJobQueries = (store: ReadStore) => {
  const docs = store.collection<ExportJobDoc>(collection)
  return {
    get: async (organizationId: string, orderId: string) => {
      const doc = await docs.get(orderId)
      return doc !== null && doc.organizationId === organizationId ? doc : null
    },
    /** Any organization's job: for the runner and the scheduled jobs only. */
    byId: (orderId: string) => docs.get(orderId),
    byFileId: (organizationId: string, fileId: string) => docs.findOne({ fileId, organizationId }),
    list: async (query: ExportJobListQuery) => {
      const filter: Filter = { organizationId: query.organizationId, exportType: { $in: [...query.types] } }
      if (query.status !== undefined) filter['status'] = query.status
      const requested: Record<string, string> = {}
      if (query.requestedFrom !== undefined) requested['$gte'] = query.requestedFrom
      if (query.requestedTo !== undefined) requested['$lt'] = query.requestedTo
      if (Object.keys(requested).length > 0) filter['requestedAt'] = requested
      const [items, total] = await Promise.all([
        docs.find(filter, { sort: { requestedAt: -1, _id: -1 }, skip: query.offset, limit: query.limit }),
        docs.count(filter),
      ])
      return { items, total }
    },
    /** The oldest queued jobs: the export queue. */
    queued: (limit: number, excluding: readonly string[]) =>
      docs.find({ status: 'queued', _id: { $nin: [...excluding] } }, { sort: { requestedAt: 1, _id: 1 }, limit }),
    /** Running jobs whose last heartbeat is older than `before`. */
    stale: (before: string) => docs.stream({ status: 'running', heartbeatAt: { $lt: before } }),
    /** Every running job, whatever its heartbeat. */
    running: () => docs.stream({ status: 'running' }),
    /** Done jobs whose retention has passed and whose expiry is not recorded yet. */
    dueForExpiry: (now: string) => docs.stream({ status: 'done', expiredAt: null, expiresAt: { $lte: now } }),
    /** The organization's jobs of these types changed after a global position, oldest change first (SSE catch-up). */
    changedSince: (organizationId: string, position: number, types: readonly string[]) =>
      docs.stream({ organizationId, exportType: { $in: [...types] }, _position: { $gt: position } }, { sort: { _position: 1 } }),
    /** Reports jobs of an organization still queued or running, and those requested since a moment (the cap). */
    reportsActivity: async (organizationId: string, since: string) => {
      const [active, recent] = await Promise.all([
        docs.count({ organizationId, exportType: 'reports', status: { $in: ['queued', 'running'] } }),
        docs.find({ organizationId, exportType: 'reports', requestedAt: { $gte: since } }, { sort: { requestedAt: 1 } }),
      ])
      return { active, recentRequests: recent.map((doc) => doc.requestedAt) }
    },
  }
}

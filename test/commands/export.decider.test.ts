import t from 'tap'
import { exportAggregate, exportBlobAggregate, exportRequestHash } from '../../src/commands/export.js'
import type { ExportCompleted, ExportRequested, ExportStarted } from '../../src/events/export.js'
import { scenario } from '../helpers/deciders.js'

const now = '2026-03-01T10:00:00.000Z'
const job = scenario(exportAggregate)
const keys = { orderId: 'o1', organizationId: 'org', exportType: 'receivables' }
const requested: ExportRequested = { type: 'ExportRequested', data: {
  orderId: 'o1', organizationId: 'org', exportType: 'receivables', parameters: { after: now }, requestedBy: 'u1', requestedAt: now,
} }
const started = (attempt: number, attemptId = `a${attempt}`): ExportStarted => ({ type: 'ExportStarted', data: { ...keys, attemptId, attempt, startedAt: now } })
const file = { fileId: 'f1', fileName: 'receivables-2026-03-01.csv', contentType: 'text/csv; charset=utf-8', size: 10, sha256: 'x' }
const completed: ExportCompleted = { type: 'ExportCompleted', data: {
  ...keys, attemptId: 'a1', file, rowCount: 3, completedAt: now, expiresAt: '2026-03-08T10:00:00.000Z',
} }

t.test('a requested job is queued once; a claim starts it once', async (t) => {
  job.given().when({ type: 'RequestExport', ...keys, parameters: { after: now }, requestedBy: 'u1', now }).then(t, [requested])
  job.given(requested).when({ type: 'RequestExport', ...keys, parameters: {}, requestedBy: 'u1', now }).thenRefused(t, 'ALREADY_EXISTS')
  const idempotency = { key: 'month-end', requestHash: 'h1' }
  const keyed: ExportRequested = { ...requested, data: { ...requested.data, idempotency } }
  job.given().when({ type: 'RequestExport', ...keys, parameters: { after: now }, requestedBy: 'u1', now, idempotency }).then(t, [keyed])
  job.given(keyed).when({ type: 'RequestExport', ...keys, parameters: { after: now }, requestedBy: 'u2', now, idempotency })
    .thenNothing(t, 'a concurrent duplicate under the Key lost the race: nothing decided')
  t.same(exportAggregate.evolve(exportAggregate.initialState(), keyed).idempotency, idempotency)
  t.equal(exportRequestHash('receivables', { after: now, before: now }), exportRequestHash('receivables', { before: now, after: now }), 'fields in any order')
  t.not(exportRequestHash('receivables', { after: now }), exportRequestHash('installments', { after: now }), 'the type counts')
  t.equal(exportRequestHash('receivables', { after: '2026-03-01T10:00:00Z' }), exportRequestHash('receivables', { after: '2026-03-01T05:00:00.000-05:00' }),
    'times as instants')
  t.not(exportRequestHash('receivables', { after: '2026-03-01T10:00:00Z' }), exportRequestHash('receivables', { after: '2026-03-01T10:00:01Z' }))
  t.equal(exportRequestHash('payments', { filters: { status: ['pending', 'failed'], minAmount: '100' } }),
    exportRequestHash('payments', { filters: { minAmount: '100.00', status: ['failed', 'pending'] } }), 'lists of choices as sets, amounts by value')
  t.not(exportRequestHash('payments', { filters: { minAmount: '100' } }), exportRequestHash('payments', { filters: { maxAmount: '100' } }))
  t.equal(exportRequestHash('reports', { columns: ['c.a'], filters: { 'c.b': 'x' } }), exportRequestHash('reports', { columns: ['c.a'], filters: { 'c.b': ['x'] } }),
    'a report filter\'s one value is a list of one')
  t.equal(exportRequestHash('reports', { columns: ['c.a'], filters: { 'c.b': ['x', 'y', 'x'] } }), exportRequestHash('reports', { columns: ['c.a'], filters: { 'c.b': ['y', 'x'] } }),
    'a value named twice in a report filter\'s list, once')
  t.not(exportRequestHash('reports', { columns: ['c.a', 'c.b'] }), exportRequestHash('reports', { columns: ['c.b', 'c.a'] }), 'report columns keep their order: they order the file')
  job.given(requested).when({ type: 'StartExport', attemptId: 'a1', now }).then(t, [started(1)])
  job.given(requested, started(1)).when({ type: 'StartExport', attemptId: 'a2', now }).thenNothing(t, 'a second runner gets nothing')
  job.given().when({ type: 'StartExport', attemptId: 'a1', now }).thenRefused(t, 'NOT_FOUND')
})

t.test('only the attempt holding the job reports progress, completes or fails it', async (t) => {
  job.given(requested, started(1)).when({ type: 'RecordExportProgress', attemptId: 'a1', rows: 10, totalRows: 20, now })
    .then(t, [{ type: 'ExportProgressed', data: { ...keys, attemptId: 'a1', rows: 10, totalRows: 20, at: now } }])
  job.given(requested, started(1)).when({ type: 'RecordExportProgress', attemptId: 'old', rows: 10, totalRows: null, now })
    .thenRefused(t, 'EXPORT_ATTEMPT_SUPERSEDED')
  job.given(requested, started(1)).when({ type: 'CompleteExport', attemptId: 'a1', file, rowCount: 3, now, expiresAt: '2026-03-08T10:00:00.000Z' })
    .then(t, [completed])
  job.given(requested, started(1), completed).when({ type: 'FailExport', attemptId: 'a1', error: 'x', now }).thenRefused(t, 'EXPORT_ATTEMPT_SUPERSEDED')
  job.given(requested, started(1), completed).when({ type: 'FailExport', attemptId: null, error: 'x', now }).thenNothing(t, 'done is final')
})

t.test('an interrupted attempt goes back to the queue until the last attempt, which fails', async (t) => {
  job.given(requested, started(1)).when({ type: 'InterruptExport', attemptId: 'a1', reason: 'restart', maxAttempts: 2, now })
    .then(t, [{ type: 'ExportInterrupted', data: { ...keys, attemptId: 'a1', reason: 'restart', interruptedAt: now } }])
  const interrupted = { type: 'ExportInterrupted' as const, data: { ...keys, attemptId: 'a1', reason: 'restart', interruptedAt: now } }
  job.given(requested, started(1), interrupted, started(2)).when({ type: 'InterruptExport', attemptId: 'a2', reason: 'restart', maxAttempts: 2, now })
    .then(t, [{ type: 'ExportFailed', data: { ...keys, error: 'the export was interrupted 2 times (last: restart); create it again', failedAt: now } }])
  job.given(requested, started(1), interrupted, started(2)).when({ type: 'InterruptExport', attemptId: 'a1', reason: 'late', maxAttempts: 2, now })
    .thenNothing(t, 'an interruption of an older attempt is ignored')
})

t.test('a done file expires once, then its deletion is recorded once', async (t) => {
  const expired = { type: 'ExportExpired' as const, data: { ...keys, fileId: 'f1', expiredAt: '2026-03-08T10:00:00.000Z' } }
  job.given(requested, started(1), completed).when({ type: 'ExpireExport', now: '2026-03-08T10:10:00.000Z' }).then(t, [expired], 'expired when the retention ended')
  job.given(requested, started(1), completed).when({ type: 'ExpireExport', now })
    .then(t, [{ type: 'ExportExpired', data: { ...keys, fileId: 'f1', expiredAt: now } }], 'an early expiry is recorded when it happens')
  job.given(requested, started(1), completed, expired).when({ type: 'ExpireExport', now }).thenNothing(t)
  job.given(requested).when({ type: 'ExpireExport', now }).thenNothing(t, 'a queued job has no file to expire')
  job.given(requested, started(1), completed).when({ type: 'RecordExportFileDeleted', now }).thenNothing(t, 'not before expiry')
  job.given(requested, started(1), completed, expired).when({ type: 'RecordExportFileDeleted', now })
    .then(t, [{ type: 'ExportFileDeleted', data: { ...keys, fileId: 'f1', deletedAt: now } }])
})

t.test('a blob is recorded once per period and names the file it replaces', async (t) => {
  const blob = scenario(exportBlobAggregate)
  const command = { type: 'RecordExportBlob' as const, organizationId: 'org', kind: 'daily', period: '2026-03-01', file, rowCount: 1, now }
  const first = { type: 'ExportBlobProduced' as const, data: {
    organizationId: 'org', kind: 'daily', period: '2026-03-01', file, rowCount: 1, producedAt: now, replacesFileId: null,
  } }
  blob.given().when(command).then(t, [first])
  blob.given(first).when(command).thenNothing(t)
  const next = { ...file, fileId: 'f2' }
  blob.given(first).when({ ...command, period: '2026-03-02', file: next })
    .then(t, [{ type: 'ExportBlobProduced', data: { ...first.data, period: '2026-03-02', file: next, replacesFileId: 'f1' } }])
})

import t from 'tap'
import type { RecordedOf } from '../../src/events/catalogue.js'
import { exportEventTypes } from '../../src/events/export.js'
import { needsJobDoc, updateOfJob } from '../../src/http/exportViews.js'
import type { ExportJobDoc } from '../../src/projections/exports.js'

const NOW = new Date('2026-03-20T00:00:00.000Z')

const envelope = (position: number) => ({
  id: `event-${position}`, streamId: 'export-o1', revision: 3, position, recordedAt: '2026-03-17T09:10:00.000Z',
  metadata: { organizationId: 'org1', actorId: null, correlationId: 'o1', causationId: null, occurredAt: '2026-03-17T09:10:00.000Z', schemaVersion: 1 },
})

const fileDeleted = (position: number): RecordedOf<'ExportFileDeleted'> => ({
  ...envelope(position),
  type: 'ExportFileDeleted',
  data: { orderId: 'o1', organizationId: 'org1', exportType: 'receivables', fileId: 'f1', deletedAt: '2026-03-17T09:10:00.000Z' },
})

const expiredJob = (position: number): ExportJobDoc => ({
  _id: 'o1', _position: position, organizationId: 'org1', exportType: 'receivables', parameters: {}, status: 'done', attempts: 1, attemptId: null,
  requestedBy: null, requestedAt: '2026-03-10T09:00:00.000Z', startedAt: '2026-03-10T09:00:00.000Z', heartbeatAt: null,
  completedAt: '2026-03-10T09:00:01.000Z', failedAt: null, error: null, rows: 5, totalRows: 5,
  file: { fileId: 'f1', fileName: 'receivables-2026-03-10.csv', contentType: 'text/csv; charset=utf-8', size: 100, sha256: 'ab' },
  fileId: 'f1', rowCount: 5, expiresAt: '2026-03-17T09:00:00.000Z', expiredAt: '2026-03-17T09:00:00.000Z',
  fileDeletedAt: '2026-03-17T09:10:00.000Z', updatedAt: '2026-03-17T09:10:00.000Z',
})

const fromEventAlone = { id: 'o1', status: 'done', type: 'receivables', progress: { rows: 0, totalRows: null, percent: 100 } }

t.test('an event\'s update comes from the job once the job has reached the event', async (t) => {
  t.same(updateOfJob(fileDeleted(9), expiredJob(9), NOW), {
    id: 'o1', status: 'done', type: 'receivables', progress: { rows: 5, totalRows: 5, percent: 100 }, expiredAt: '2026-03-17T09:00:00.000Z',
  })
  t.same(updateOfJob(fileDeleted(9), expiredJob(12), NOW).progress.rows, 5, 'or gone past it')
})

t.test('without the job, or with a job behind the event, the update is what the event says', async (t) => {
  t.same(updateOfJob(fileDeleted(9), null, NOW), fromEventAlone)
  t.same(updateOfJob(fileDeleted(9), expiredJob(8), NOW), fromEventAlone)
})

t.test('only failures, expiries and file deletions need the job: the others carry their whole update', async (t) => {
  t.same(exportEventTypes.filter(needsJobDoc), ['ExportFailed', 'ExportExpired', 'ExportFileDeleted'])
})

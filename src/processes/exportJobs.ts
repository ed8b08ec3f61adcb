import { exportAggregate, exportBlobAggregate } from '../commands/export.js'
import { blobFileName, blobKinds, blobPeriod, blobSchedules, type BlobKind } from '../exports/blobs.js'
import { csvStream } from '../exports/csv.js'
import type { Services } from '../services.js'
import { deterministicId } from '../shared/ids.js'
import { recoverExports, systemContext } from './exportRunner.js'
import type { ScheduledJob } from './scheduler.js'

/** Marks done jobs whose retention has passed as expired; the cleanup manager then deletes their content. */
export const exportExpiryJob: ScheduledJob<Services> = {
  name: 'exportExpiry',
  schedule: '*/10 * * * *',
  async run(services) {
    const now = services.clock.now().toISOString()
    const due: Array<{ id: string; organizationId: string }> = []
    for await (const job of services.queries.exportJobs.dueForExpiry(now)) due.push({ id: job._id, organizationId: job.organizationId })
    for (const job of due) {
      await services.execute(exportAggregate, job.id, { type: 'ExpireExport', now }, systemContext(job.organizationId, job.id))
    }
  },
}

/** Requeues (or fails) running jobs whose runner is gone, then starts queued jobs. */
export const exportRecoveryJob: ScheduledJob<Services> = {
  name: 'exportRecovery',
  schedule: '* * * * *',
  run: (services) => recoverExports(services),
}

const PAGE = 100

/** Builds one organization's blob of a kind for the period that just closed, unless it exists. */
const produceBlob = async (services: Services, kind: BlobKind, organizationId: string): Promise<void> => {
  const producer = services.exports.blobs.get(kind)
  if (producer === undefined) return
  const now = services.clock.now()
  const period = blobPeriod(kind, now)
  const current = await services.queries.exportBlobs.current(organizationId, kind)
  if (current?.period === period.label) return
  const opened = producer.open({ organizationId, queries: services.queries, period, signal: new AbortController().signal })
  let rowCount = 0
  async function* counted(): AsyncIterable<string[][]> {
    for await (const batch of opened.batches) {
      rowCount += batch.length
      yield batch
    }
  }
  const fileId = deterministicId('export-blob', organizationId, kind, period.label)
  const fileName = blobFileName(kind, period.label)
  const stored = await services.files.put(fileId, csvStream(opened.header, counted()), { contentType: producer.contentType, filename: fileName, organizationId })
  await services.execute(exportBlobAggregate, deterministicId('export-blob', organizationId, kind), {
    type: 'RecordExportBlob', organizationId, kind, period: period.label, rowCount, now: now.toISOString(),
    file: { fileId, fileName, contentType: producer.contentType, size: stored.size, sha256: stored.sha256 },
  }, systemContext(organizationId, fileId))
}

const blobJob = (kind: BlobKind, name: string): ScheduledJob<Services> => ({
  name,
  schedule: blobSchedules[kind],
  async run(services) {
    if (services.exports.blobs.get(kind) === undefined) return
    for (let offset = 0; ; offset += PAGE) {
      const { items } = await services.queries.organizations.list({ offset, limit: PAGE })
      for (const organization of items) {
        if (!organization.active) continue
        try {
          await produceBlob(services, kind, organization._id)
        } catch (error) {
          services.logger.error({ err: error, organizationId: organization._id, kind }, 'could not produce an export blob')
        }
      }
      if (items.length < PAGE) return
    }
  },
})

export const exportBlobJobName = (kind: BlobKind): string => `exportBlob:${kind}`

export const exportScheduledJobs: ReadonlyArray<ScheduledJob<Services>> = [
  exportExpiryJob,
  exportRecoveryJob,
  ...blobKinds.map((kind) => blobJob(kind, exportBlobJobName(kind))),
]

import type { CommandContext } from '../commands/handler.js'
import { exportAggregate } from '../commands/export.js'
import type { ExportFile } from '../events/export.js'
import { exportFileName, parseExportBody, type ExportBody } from '../exports/catalogue.js'
import { csvStream, CellError } from '../exports/csv.js'
import type { DataSet, DataSetContext } from '../exports/dataSets.js'
import type { ExportJobDoc } from '../projections/exports.js'
import type { Services } from '../services.js'
import { isAppError, type FieldError } from '../shared/errors.js'
import { deterministicId, newId } from '../shared/ids.js'
import { defineProcess } from './process.js'

/** A failure whose message is meant for the user who asked for the export (stored as the job's `error`). */
export class ExportJobError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'ExportJobError'
  }
}

export const systemContext = (organizationId: string, correlationId: string, causationId: string | null = null): CommandContext => ({
  organizationId, actorId: null, correlationId, causationId,
})

/** One content id per job: a resumed attempt overwrites what an interrupted one may have left. */
export const exportFileId = (orderId: string): string => deterministicId('export-file', orderId)

export const isoNow = (services: Services): string => services.clock.now().toISOString()

const invalidParameters = (errors: readonly FieldError[]) =>
  new ExportJobError(`the export parameters are not valid: ${errors.map((e) => `${e.field} ${e.message}`).join('; ')}`)

/** The data set and checked body of a job, or the reason it cannot run. */
export const resolveExport = (services: Services, exportType: string, parameters: object): { dataSet: DataSet; body: ExportBody } => {
  const parsed = parseExportBody({ ...parameters, type: exportType })
  if ('errors' in parsed) throw invalidParameters(parsed.errors)
  const dataSet = services.exports.dataSets.get(parsed.body.type)
  if (dataSet === undefined) throw new ExportJobError(`export type ${exportType} is not available in this version of the service`)
  const errors = dataSet.check(parsed.body)
  if (errors.length > 0) throw invalidParameters(errors)
  return { dataSet, body: parsed.body }
}

const tooLarge = (max: number) =>
  new ExportJobError(`the report has more than ${max} rows (EXPORTS_REPORTS_MAX_ROWS); narrow its period, filters or columns`)

/** Appends progress events one at a time (rows and the heartbeat timer share the stream). */
class ProgressRecorder {
  private chain: Promise<void> = Promise.resolve()
  failure: unknown = null

  constructor(private readonly services: Services, private readonly job: ExportJobDoc, private readonly attemptId: string) {}

  record(rows: number, totalRows: number | null): Promise<void> {
    this.chain = this.chain.then(async () => {
      if (this.failure !== null) return
      try {
        await this.services.commands.execute(exportAggregate, this.job._id, {
          type: 'RecordExportProgress', attemptId: this.attemptId, rows, totalRows, now: isoNow(this.services),
        }, systemContext(this.job.organizationId, this.job._id))
      } catch (error) {
        this.failure = error
      }
    })
    return this.settled()
  }

  /** Resolves once every progress event asked for is recorded; rejects with the first failure. */
  settled(): Promise<void> {
    return this.chain.then(() => {
      if (this.failure !== null) throw this.failure
    })
  }
}

const writeExport = async (services: Services, job: ExportJobDoc, attemptId: string, signal: AbortSignal): Promise<{ file: ExportFile; rowCount: number }> => {
  const { config } = services
  const { dataSet, body } = resolveExport(services, job.exportType, job.parameters)
  const context: DataSetContext = { organizationId: job.organizationId, queries: services.queries, requestedAt: job.requestedAt, signal }
  const cap = body.type === 'reports' ? config.exportsReportsMaxRows : Number.POSITIVE_INFINITY
  const totalRows = dataSet.count === null ? null : await dataSet.count(body, context)
  if (totalRows !== null && totalRows > cap) throw tooLarge(cap)
  const progress = new ProgressRecorder(services, job, attemptId)
  if (totalRows !== null) await progress.record(0, totalRows)
  // A stop during the count: a data set opened with an aborted signal might wait for an abort event that never comes.
  signal.throwIfAborted()
  const opened = dataSet.open(body, context)
  let rows = 0
  const heartbeat = setInterval(() => void progress.record(rows, totalRows).catch(() => undefined), config.exportsHeartbeatSeconds * 1000)
  heartbeat.unref()
  const every = config.exportsProgressEveryRows
  async function* counted(): AsyncIterable<string[][]> {
    for await (const batch of opened.batches) {
      signal.throwIfAborted()
      if (progress.failure !== null) throw progress.failure
      const before = rows
      rows += batch.length
      if (rows > cap) throw tooLarge(cap)
      // One progress event per EXPORTS_PROGRESS_EVERY_ROWS rows passed; recorded in order, without holding the file back.
      for (let mark = (Math.floor(before / every) + 1) * every; mark <= rows; mark += every) void progress.record(mark, totalRows).catch(() => undefined)
      yield batch
    }
  }
  const fileId = exportFileId(job._id)
  const fileName = exportFileName(job.exportType, job.requestedAt)
  const content = csvStream(opened.header, counted())
  const abort = () => {
    if (!content.destroyed) content.destroy(signal.reason instanceof Error ? signal.reason : new Error('aborted'))
  }
  // The file store's pipeline reports the error; after it has finished, an abort must not surface as an unhandled 'error'.
  content.on('error', () => undefined)
  signal.addEventListener('abort', abort, { once: true })
  try {
    const stored = await services.files.put(fileId, content, { contentType: dataSet.contentType, filename: fileName, organizationId: job.organizationId })
    signal.throwIfAborted()
    await progress.settled()
    return { file: { fileId, fileName, contentType: dataSet.contentType, size: stored.size, sha256: stored.sha256 }, rowCount: rows }
  } finally {
    clearInterval(heartbeat)
    signal.removeEventListener('abort', abort)
  }
}

const userMessage = (error: unknown): string | null => {
  if (error instanceof ExportJobError || error instanceof CellError) return error.message
  if (isAppError(error) && error.status < 500) return error.message
  return null
}

/** Runs one claimed attempt to its end: completed, failed, or (when this instance stops) interrupted and queued again. */
export const runExport = async (services: Services, job: ExportJobDoc, attemptId: string, signal: AbortSignal): Promise<void> => {
  const context = systemContext(job.organizationId, job._id)
  const { config } = services
  try {
    // Claimed while the instance was stopping: recorded as interrupted before anything is read.
    signal.throwIfAborted()
    const { file, rowCount } = await writeExport(services, job, attemptId, signal)
    const now = services.clock.now()
    await services.execute(exportAggregate, job._id, {
      type: 'CompleteExport', attemptId, file, rowCount, now: now.toISOString(),
      expiresAt: new Date(now.getTime() + config.exportsRetentionDays * 86_400_000).toISOString(),
    }, context)
  } catch (error) {
    try {
      if (isAppError(error) && error.code === 'EXPORT_ATTEMPT_SUPERSEDED') {
        services.logger.warn({ orderId: job._id, attemptId }, 'export attempt was superseded; abandoning it')
      } else if (signal.aborted) {
        await services.execute(exportAggregate, job._id, {
          type: 'InterruptExport', attemptId, reason: 'the service stopped while the export ran', maxAttempts: config.exportsMaxAttempts, now: isoNow(services),
        }, context)
      } else {
        const message = userMessage(error)
        if (message === null) services.logger.error({ err: error, orderId: job._id }, 'export failed')
        await services.execute(exportAggregate, job._id, {
          type: 'FailExport', attemptId, now: isoNow(services),
          error: message ?? `the export failed on an internal error (order ${job._id}); create it again or contact support`,
        }, context)
      }
    } catch (recordError) {
      // The job stays running; the recovery job interrupts it once its heartbeat is stale.
      services.logger.error({ err: recordError, orderId: job._id }, 'could not record how an export ended')
    }
  }
}

const claimWhileFree = async (services: Services): Promise<void> => {
  const { workers } = services.exports
  const skipped = new Set<string>()
  while (workers.free > 0) {
    const candidates = await services.queries.exportJobs.queued(workers.free, [...workers.active, ...skipped])
    if (candidates.length === 0) return
    for (const job of candidates) {
      if (workers.free === 0) return
      const attemptId = newId()
      try {
        const claimed = await services.execute(exportAggregate, job._id, { type: 'StartExport', attemptId, now: isoNow(services) },
          systemContext(job.organizationId, job._id))
        if (claimed.events.length === 0) {
          skipped.add(job._id)
          continue
        }
      } catch (error) {
        services.logger.warn({ err: error, orderId: job._id }, 'could not claim an export job')
        skipped.add(job._id)
        continue
      }
      workers.start(job._id, (signal) => runExport(services, job, attemptId, signal), () => void pumpExports(services))
    }
  }
}

/**
 * Claims queued jobs (oldest first) while this instance has free slots.
 * Claiming appends ExportStarted with the stream's expected revision, so of
 * several instances exactly one runs a job.
 */
export const pumpExports = async (services: Services): Promise<void> => {
  const { workers } = services.exports
  if (workers.stopping) return
  if (workers.pumping !== null) {
    workers.pumpAgain = true
    return workers.pumping
  }
  workers.pumping = (async () => {
    do {
      workers.pumpAgain = false
      await claimWhileFree(services)
    } while (workers.pumpAgain && !workers.stopping)
  })().finally(() => {
    workers.pumping = null
  })
  return workers.pumping
}

/**
 * Running jobs with no heartbeat for EXPORTS_STALE_AFTER_SECONDS lost their
 * runner (crash, killed instance): they are queued again, or failed once they
 * have run EXPORTS_MAX_ATTEMPTS times. Then queued jobs are claimed.
 *
 * `atStart` on the embedded log: DATA_DIR's lock makes this process the only
 * one appending to it, so a job another runner holds cannot exist and every
 * running job this process has not claimed was cut off by a crash; waiting
 * for its heartbeat to go stale would only leave it `running` for minutes.
 * On EventStoreDB other instances' runners may hold jobs, so the heartbeat
 * rule applies at start too.
 */
export const recoverExports = async (services: Services, options: { atStart?: boolean } = {}): Promise<void> => {
  const { config, exports: { workers } } = services
  const now = services.clock.now()
  const soleRunner = options.atStart === true && config.eventStoreUrl === undefined
  const before = new Date(now.getTime() - config.exportsStaleAfterSeconds * 1000).toISOString()
  const candidates = soleRunner ? services.queries.exportJobs.running() : services.queries.exportJobs.stale(before)
  const stale: ExportJobDoc[] = []
  for await (const job of candidates) if (!workers.active.has(job._id)) stale.push(job)
  for (const job of stale) {
    if (job.attemptId === null) continue
    const lastSign = job.heartbeatAt ?? job.startedAt ?? job.requestedAt
    await services.execute(exportAggregate, job._id, {
      type: 'InterruptExport', attemptId: job.attemptId, maxAttempts: config.exportsMaxAttempts, now: now.toISOString(),
      reason: soleRunner ? `the service restarted while it ran (last heartbeat ${lastSign})` : `its runner stopped: no heartbeat since ${lastSign}`,
    }, systemContext(job.organizationId, job._id))
  }
  await pumpExports(services)
}

/** Starts queued jobs as they are requested or put back in the queue; at start, recovers what a crash left behind. */
export const exportRunnerProcess = defineProcess<Services, 'ExportRequested' | 'ExportInterrupted'>({
  name: 'exportRunner',
  handles: ['ExportRequested', 'ExportInterrupted'],
  handle: (_event, services) => pumpExports(services),
  recover: (services) => recoverExports(services, { atStart: true }),
})

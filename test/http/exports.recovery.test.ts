import t from 'tap'
import type { Test } from 'tap'
import { exportAggregate } from '../../src/commands/export.js'
import type { Runtime } from '../../src/runtime.js'
import { ManualClock } from '../../src/shared/clock.js'
import { createTestApp } from '../helpers/app.js'
import { tempDir } from '../helpers/config.js'
import { blockingDataSet, fixtureDataSet, jobEvent, jobSettled, postExport } from '../helpers/exports.js'

/** The job's log: claimed, interrupted, claimed again, completed. */
const resumedOnce = async (t: Test, runtime: Runtime, orderID: string) => {
  const history: string[] = []
  for await (const event of runtime.history(`export-${orderID}`)) history.push(event.type)
  t.same(history.slice(0, 4), ['ExportRequested', 'ExportStarted', 'ExportInterrupted', 'ExportStarted'])
  t.equal(history.at(-1), 'ExportCompleted')
}

t.test('a job running when the service stops is interrupted, then resumed by the next start', async (t) => {
  const dataDir = tempDir()
  const clock = new ManualClock('2026-03-10T09:00:00.000Z')
  let running: () => void = () => undefined
  const started = new Promise<void>((resolve) => { running = resolve })
  const first = await createTestApp(t, { clock, config: { dataDir }, beforeStart: (runtime) => runtime.exports.dataSets.register(blockingDataSet('receivables', running)) })
  const orderID: string = (await postExport(first, { type: 'receivables' })).json().data.orderID
  await started
  const interrupted = jobEvent(first.runtime, orderID, 'ExportInterrupted')
  await first.runtime.exports.workers.stop()
  await interrupted
  await first.close()

  const second = await createTestApp(t, { clock, config: { dataDir }, beforeStart: (runtime) => runtime.exports.dataSets.register(fixtureDataSet('receivables', 3)) })
  const doc = await jobSettled(second.runtime, orderID)
  t.match(doc, { status: 'done', attempts: 2, rowCount: 3 })
  await resumedOnce(t, second.runtime, orderID)
})

t.test('a job claimed while the service is stopping is interrupted without running, and the stop waits for it', async (t) => {
  const dataDir = tempDir()
  const clock = new ManualClock('2026-03-10T09:00:00.000Z')
  let opened = 0
  const blocking = blockingDataSet('receivables')
  const first = await createTestApp(t, {
    clock, config: { dataDir },
    beforeStart: (runtime) => runtime.exports.dataSets.register({
      ...blocking,
      open: (body, context) => {
        opened += 1
        return blocking.open(body, context)
      },
    }),
  })
  // Holds the runner's claim until the stop has begun.
  const commands = first.runtime.commands
  const execute = commands.execute.bind(commands)
  let claiming: () => void = () => undefined
  const claimInFlight = new Promise<void>((resolve) => { claiming = resolve })
  let release: () => void = () => undefined
  const released = new Promise<void>((resolve) => { release = resolve })
  commands.execute = (async (aggregate, id, command, context) => {
    if (typeof command === 'object' && command !== null && 'type' in command && command.type === 'StartExport') {
      claiming()
      await released
    }
    return execute(aggregate, id, command, context)
  }) as typeof commands.execute
  const orderID: string = (await postExport(first, { type: 'receivables' })).json().data.orderID
  await claimInFlight
  const stopped = first.runtime.exports.workers.stop()
  release()
  await stopped

  t.equal(opened, 0, 'the job never reads its data set')
  t.equal(first.runtime.exports.workers.active.size, 0, 'no job outlives the stop')
  const history: string[] = []
  for await (const event of first.runtime.history(`export-${orderID}`)) history.push(event.type)
  t.same(history, ['ExportRequested', 'ExportStarted', 'ExportInterrupted'], 'the log records the interruption')
  t.match(await first.runtime.queries.exportJobs.byId(orderID), { status: 'queued', attempts: 1 }, 'the job is back in the queue')
  await first.close()

  const second = await createTestApp(t, { clock, config: { dataDir }, beforeStart: (runtime) => runtime.exports.dataSets.register(fixtureDataSet('receivables', 3)) })
  t.match(await jobSettled(second.runtime, orderID), { status: 'done', attempts: 2, rowCount: 3 }, 'the next start runs it at once')
})

/** An instance that accepts jobs but runs none, then vanishes with both jobs marked running (a crash); the second has already run twice. */
const crashWithTwoRunningJobs = async (t: Test, dataDir: string, clock: ManualClock): Promise<string[]> => {
  const crashed = await createTestApp(t, { clock, config: { dataDir, processesEnabled: false }, beforeStart: (runtime) => runtime.exports.dataSets.register(fixtureDataSet('receivables', 2)) })
  const ids: string[] = []
  for (let i = 0; i < 2; i++) ids.push((await postExport(crashed, { type: 'receivables' })).json().data.orderID)
  const context = { organizationId: crashed.organizationId, actorId: null, correlationId: 'crash' }
  for (const id of ids) await crashed.runtime.execute(exportAggregate, id, { type: 'StartExport', attemptId: `dead-${id}`, now: clock.now().toISOString() }, context)
  const last = ids[1] ?? ''
  await crashed.runtime.execute(exportAggregate, last, { type: 'InterruptExport', attemptId: `dead-${last}`, reason: 'test', maxAttempts: 2, now: clock.now().toISOString() }, context)
  await crashed.runtime.execute(exportAggregate, last, { type: 'StartExport', attemptId: `dead2-${last}`, now: clock.now().toISOString() }, context)
  await crashed.close()
  return ids
}

t.test('on the embedded log, the next start requeues jobs a crash left running at once, and fails those at their last attempt', async (t) => {
  const dataDir = tempDir()
  const clock = new ManualClock('2026-03-10T09:00:00.000Z')
  const [resumedId = '', failedId = ''] = await crashWithTwoRunningJobs(t, dataDir, clock)
  clock.advance(5_000)

  // Heartbeats 5 s old, far from stale: DATA_DIR's lock is what tells that no other runner holds them.
  const config = { dataDir, exportsStaleAfterSeconds: 120, exportsMaxAttempts: 2 }
  const restarted = await createTestApp(t, { clock, config, beforeStart: (runtime) => runtime.exports.dataSets.register(fixtureDataSet('receivables', 2)) })
  t.match(await jobSettled(restarted.runtime, resumedId), { status: 'done', attempts: 2, rowCount: 2 })
  const failed = await jobSettled(restarted.runtime, failedId)
  t.match(failed, { status: 'failed', attempts: 2 })
  t.equal(failed.error, 'the export was interrupted 2 times (last: the service restarted while it ran (last heartbeat 2026-03-10T09:00:00.000Z)); create it again')
  await resumedOnce(t, restarted.runtime, resumedId)
})

t.test('the recovery job requeues a running job only once its heartbeat is stale, and fails it after the last attempt', async (t) => {
  const dataDir = tempDir()
  const clock = new ManualClock('2026-03-10T09:00:00.000Z')
  const [resumedId = '', failedId = ''] = await crashWithTwoRunningJobs(t, dataDir, clock)

  // Without process managers nothing recovers at start: only the per-minute job, which trusts a fresh heartbeat (another instance's runner on a shared log).
  const config = { dataDir, exportsStaleAfterSeconds: 120, exportsMaxAttempts: 2, processesEnabled: false }
  const restarted = await createTestApp(t, { clock, config, beforeStart: (runtime) => runtime.exports.dataSets.register(fixtureDataSet('receivables', 2)) })
  await restarted.runtime.scheduler.runNow('exportRecovery')
  t.same((await restarted.runtime.queries.exportJobs.byId(resumedId))?.status, 'running', 'a fresh heartbeat is trusted')
  clock.advance(121_000)
  await restarted.runtime.scheduler.runNow('exportRecovery')
  t.match(await jobSettled(restarted.runtime, resumedId), { status: 'done', attempts: 2 })
  const failed = await jobSettled(restarted.runtime, failedId)
  t.match(failed, { status: 'failed', attempts: 2 })
  t.equal(failed.error, 'the export was interrupted 2 times (last: its runner stopped: no heartbeat since 2026-03-10T09:00:00.000Z); create it again')
})

t.test('one instance runs at most EXPORTS_CONCURRENCY jobs; the rest wait queued', async (t) => {
  let startedCount = 0
  let twoStarted: () => void = () => undefined
  const both = new Promise<void>((resolve) => { twoStarted = resolve })
  const svc = await createTestApp(t, {
    config: { exportsConcurrency: 2 },
    beforeStart: (runtime) => runtime.exports.dataSets.register(blockingDataSet('receivables', () => {
      startedCount += 1
      if (startedCount === 2) twoStarted()
    })),
  })
  const ids: string[] = []
  for (let i = 0; i < 3; i++) ids.push((await postExport(svc, { type: 'receivables' })).json().data.orderID)
  await both
  const statuses = await Promise.all(ids.map(async (id) => (await svc.runtime.queries.exportJobs.byId(id))?.status))
  t.same(statuses, ['running', 'running', 'queued'], 'oldest first')
  t.equal(svc.runtime.exports.workers.active.size, 2)
  t.equal(startedCount, 2)
})

import t from 'tap'
import type { DomainEventType, RecordedEvent } from '../../src/events/catalogue.js'
import { SqliteEventStore } from '../../src/events/sqlite.js'
import type { NewEvent } from '../../src/events/types.js'
import type { CheckpointStore } from '../../src/processes/checkpoints.js'
import { defineProcess, isRefusal, ProcessSupervisor, type BatchOutcome, type ProcessManager } from '../../src/processes/process.js'
import { AppError } from '../../src/shared/errors.js'

const HANDLED: DomainEventType = 'PaymentOrderApproved'
const OTHER: DomainEventType = 'CreditDisbursed'

const newEvent = (n: number, type: DomainEventType): NewEvent => ({
  id: `event-${n}`, type, data: {} as NewEvent['data'],
  metadata: { organizationId: 'org', actorId: null, correlationId: `c-${n}`, causationId: null, occurredAt: '2026-01-01T00:00:00.000Z', schemaVersion: 1 },
}) as NewEvent

/** Checkpoints in memory, every save remembered in order. */
class MemoryCheckpoints implements CheckpointStore {
  readonly saves: number[] = []
  constructor(private position = 0) {}
  async get(): Promise<number> {
    return this.position
  }
  async set(_name: string, position: number): Promise<void> {
    this.position = position
    this.saves.push(position)
  }
  async flush(): Promise<void> {}
}

const logger = () => {
  const lines: Array<{ level: string; message: string }> = []
  const at = (level: string) => (_object: object, message: string) => { lines.push({ level, message }) }
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') }
}

/** A manager that records each batch it is handed and answers what `decide` says; `seen` resolves once `count` events arrived. */
const recordingManager = (decide: (batch: readonly RecordedEvent[], call: number) => BatchOutcome = () => ({ failedAt: null })) => {
  const batches: string[][] = []
  const waiters: Array<{ count: number; resolve: () => void }> = []
  const manager: ProcessManager<null> = {
    name: 'recording',
    handles: [HANDLED],
    handle: async () => {},
    handleBatch: async (batch) => {
      batches.push(batch.map((e) => e.id))
      const outcome = decide(batch, batches.length)
      for (const waiter of waiters.filter((w) => batches.length >= w.count)) waiter.resolve()
      return outcome
    },
  }
  const calls = (count: number) => new Promise<void>((resolve) => {
    if (batches.length >= count) resolve()
    else waiters.push({ count, resolve })
  })
  return { manager, batches, calls }
}

const setup = async (t: { teardown(fn: () => unknown): void }, manager: ProcessManager<null>, options: { checkpoints?: MemoryCheckpoints; maxAttempts?: number } = {}) => {
  const store = new SqliteEventStore({ file: ':memory:' })
  const checkpoints = options.checkpoints ?? new MemoryCheckpoints()
  const log = logger()
  const supervisor = new ProcessSupervisor(store, checkpoints, [manager], null, {
    logger: log, projectionsReached: async () => {}, retryDelayMs: 1, maxAttempts: options.maxAttempts ?? 100,
  })
  t.teardown(async () => {
    await supervisor.stop()
    await store.close()
  })
  const append = async (n: number, type: DomainEventType) => (await store.append(`stream-${n}`, [newEvent(n, type)], 'no_stream')).position
  return { store, checkpoints, supervisor, log, append }
}

t.test('the events already in the log reach the manager as one batch of the types it handles, in log order; later ones in a later batch', async (t) => {
  const recording = recordingManager()
  const { supervisor, append, checkpoints } = await setup(t, recording.manager)
  await append(1, HANDLED)
  await append(2, OTHER)
  await append(3, HANDLED)
  const last = await append(4, HANDLED)
  await supervisor.start()
  await recording.calls(1)
  t.same(recording.batches, [['event-1', 'event-3', 'event-4']])
  const later = await append(5, HANDLED)
  await recording.calls(2)
  t.same(recording.batches[1], ['event-5'])
  await supervisor.stop()
  t.ok(checkpoints.saves.includes(last), 'the checkpoint moved past the first batch once it was handled')
  t.equal(checkpoints.saves.at(-1), later)
})

t.test('a batch whose middle event fails: the checkpoint stays before it, and it is redelivered with the events after it', async (t) => {
  const recording = recordingManager((_batch, call) => (call === 1 ? { failedAt: 1, error: new Error('the second event failed') } : { failedAt: null }))
  const { supervisor, append, checkpoints, log } = await setup(t, recording.manager)
  await append(1, HANDLED)
  const failing = await append(2, HANDLED)
  const last = await append(3, HANDLED)
  await supervisor.start()
  await recording.calls(2)
  t.same(recording.batches, [['event-1', 'event-2', 'event-3'], ['event-2', 'event-3']], 'the retry starts at the failed event')
  await supervisor.stop()
  t.ok(checkpoints.saves.every((position) => position < failing || position >= last), 'no checkpoint between the failed event and the end of its batch')
  t.equal(checkpoints.saves.at(-1), last)
  t.match(log.lines, [{ level: 'warn', message: 'process manager failed; retrying' }])
})

t.test('stopped while an event keeps failing: the checkpoint stays at the event before it, and a restart hands it over again', async (t) => {
  const checkpoints = new MemoryCheckpoints()
  const failingManager = recordingManager((batch) => {
    const index = batch.findIndex((e) => e.id === 'event-2')
    return index === -1 ? { failedAt: null } : { failedAt: index, error: new Error('still failing') }
  })
  const first = await setup(t, failingManager.manager, { checkpoints })
  const handled = await first.append(1, HANDLED)
  await first.append(2, HANDLED)
  await first.append(3, HANDLED)
  await first.supervisor.start()
  await failingManager.calls(3)
  await first.supervisor.stop()
  t.equal(await checkpoints.get(), handled, 'only the event before the failing one counts as handled')

  const healthy = recordingManager()
  const restarted = new ProcessSupervisor(first.store, checkpoints, [healthy.manager], null, {
    logger: first.log, projectionsReached: async () => {}, retryDelayMs: 1,
  })
  await restarted.start()
  await healthy.calls(1)
  await restarted.stop()
  t.same(healthy.batches, [['event-2', 'event-3']])
})

t.test('an event the service refuses on every attempt is given up (logged, counted) and the rest of its batch goes on', async (t) => {
  const refusal = new AppError('CREDIT_NOT_PAYABLE', 'the credit takes no payment')
  const recording = recordingManager((batch) => (batch[0]?.id === 'event-1' ? { failedAt: 0, error: refusal } : { failedAt: null }))
  const { supervisor, append, checkpoints, log } = await setup(t, recording.manager, { maxAttempts: 2 })
  await append(1, HANDLED)
  const last = await append(2, HANDLED)
  await supervisor.start()
  await recording.calls(3)
  await supervisor.stop()
  t.same(recording.batches, [['event-1', 'event-2'], ['event-1', 'event-2'], ['event-2']])
  t.equal(checkpoints.saves.at(-1), last)
  t.same(log.lines.filter((l) => l.level === 'error').map((l) => l.message), ['process manager gave up on an event the service refuses every time'])
  t.same(supervisor.status(), [{ name: 'recording', retrying: null, givenUp: 1 }])
})

t.test('an event failing otherwise (a store unreachable, a defect) is retried past maxAttempts until it passes, and shows in the status meanwhile', async (t) => {
  let failuresLeft = 6
  const recording = recordingManager((batch) => (batch[0]?.id === 'event-1' && failuresLeft-- > 0
    ? { failedAt: 0, error: new Error('read store unreachable') }
    : { failedAt: null }))
  const statuses: ReturnType<ProcessSupervisor<null>['status']>[] = []
  const { supervisor, append, checkpoints, log } = await setup(t, recording.manager, { maxAttempts: 2 })
  const first = await append(1, HANDLED)
  const last = await append(2, HANDLED)
  await supervisor.start()
  await recording.calls(4)
  statuses.push(supervisor.status())
  await recording.calls(7)
  await supervisor.stop()
  t.same(recording.batches.map((batch) => batch[0]), Array(7).fill('event-1'), 'the same event, seven times: nothing was given up')
  t.match(statuses[0], [{ name: 'recording', givenUp: 0, retrying: { eventId: 'event-1', type: HANDLED, position: first } }])
  t.notOk('error' in (statuses[0]?.[0]?.retrying ?? {}), 'the error is logged, not shown on the public health route')
  t.ok((statuses[0]?.[0]?.retrying?.attempts ?? 0) >= 3)
  t.same(supervisor.status(), [{ name: 'recording', retrying: null, givenUp: 0 }], 'cleared once it passed')
  t.equal(checkpoints.saves.at(-1), last)
  t.ok(log.lines.some((l) => l.level === 'error' && l.message === 'process manager keeps failing on an event; retrying until it passes'), 'said once the attempts passed maxAttempts')
  t.notOk(log.lines.some((l) => l.message.startsWith('process manager gave up')))
})

t.test('stopping ends a pause between attempts at once', async (t) => {
  const recording = recordingManager(() => ({ failedAt: 0, error: new Error('down') }))
  const store = new SqliteEventStore({ file: ':memory:' })
  t.teardown(() => store.close())
  const supervisor = new ProcessSupervisor(store, new MemoryCheckpoints(), [recording.manager], null, {
    logger: logger(), projectionsReached: async () => {}, retryDelayMs: 3_600_000, maxRetryDelayMs: 3_600_000,
  })
  await store.append('stream-1', [newEvent(1, HANDLED)], 'no_stream')
  await supervisor.start()
  await recording.calls(1)
  await supervisor.stop()
  t.same(recording.batches, [['event-1']], 'stopped during the hour-long pause (the test would time out otherwise)')
})

t.test('a manager without a batch handler handles a batch one event after the other and stops at the first failure', async (t) => {
  const seen: string[] = []
  const manager = defineProcess<null, 'PaymentOrderApproved'>({
    name: 'oneByOne',
    handles: ['PaymentOrderApproved'],
    async handle(event) {
      seen.push(event.id)
      if (event.id === 'event-2') throw new Error('refused')
    },
  })
  const { store, append } = await setup(t, manager)
  for (const n of [1, 2, 3]) await append(n, HANDLED)
  const events: RecordedEvent[] = []
  for await (const event of store.readAll()) events.push(event)
  const outcome = await manager.handleBatch(events, null)
  t.same(seen, ['event-1', 'event-2'], 'the event after the failure was not handled')
  t.match(outcome, { failedAt: 1, error: { message: 'refused' } })
})

t.test('a refusal is a 4xx of the service that a retry meets again; a concurrent write, a timeout or a rate limit may pass', async (t) => {
  t.ok(isRefusal(new AppError('CREDIT_NOT_PAYABLE', 'no')))
  t.ok(isRefusal(new AppError('NOT_FOUND', 'no')))
  t.notOk(isRefusal(new AppError('CONCURRENCY_CONFLICT', 'changed concurrently')))
  t.notOk(isRefusal(new AppError('TOO_MANY_REQUESTS', 'later')))
  t.ok(isRefusal(new AppError('EXPORT_TYPE_UNAVAILABLE', 'not in this version')), 'what this version does not implement')
  t.notOk(isRefusal(new AppError('INTERNAL', 'broken')))
  t.notOk(isRefusal(new AppError('SERVICE_UNAVAILABLE', 'later')))
  t.notOk(isRefusal(new Error('SQLITE_FULL')))
})

import type { CommandContext } from '../commands/handler.js'
import { isEventOf, type DomainEventType, type RecordedEvent, type RecordedOf } from '../events/catalogue.js'
import type { EventStore, EventSubscription } from '../events/store.js'
import { setTimeout as delay } from 'node:timers/promises'
import { AppError } from '../shared/errors.js'
import type { CheckpointStore } from './checkpoints.js'

export interface ProcessLogger {
  debug(object: object, message: string): void
  info(object: object, message: string): void
  warn(object: object, message: string): void
  error(object: object, message: string): void
}

/**
 * How far a batch got: every event before `failedAt` is fully handled; the
 * supervisor redelivers the rest, from `failedAt` on (managers are
 * idempotent, so an event after it that was handled meets its own records).
 */
export type BatchOutcome = { failedAt: null } | { failedAt: number; error: unknown }

/**
 * A process manager reacts to events by issuing commands, and records what it
 * did as events keyed by the triggering event, so a redelivery (restart,
 * rebuild) neither loses nor repeats an action.
 */
export interface ProcessManager<Deps> {
  name: string
  handles: readonly DomainEventType[]
  handle(event: RecordedEvent, deps: Deps): Promise<void>
  /**
   * The supervisor's entry point: the events of `handles` its subscription
   * had at hand, in log order. By default one after the other, stopping at
   * the first failure; a manager may handle a batch together (the webhook
   * firing records all of its starts in shared commits).
   */
  handleBatch(events: readonly RecordedEvent[], deps: Deps): Promise<BatchOutcome>
  /** Runs once before the manager follows the log (e.g. to settle work a crash interrupted). */
  recover?(deps: Deps): Promise<void>
}

/** Handles events one after the other; stops at the first that fails. */
export const handleInTurn = async <E>(events: readonly E[], handle: (event: E) => Promise<void>): Promise<BatchOutcome> => {
  for (const [index, event] of events.entries()) {
    try {
      await handle(event)
    } catch (error) {
      return { failedAt: index, error }
    }
  }
  return { failedAt: null }
}

/**
 * Handles the events of each key in log order, the keys concurrently (their
 * commands then share group commits); reports the earliest event that failed
 * (a key's events after its failure are not handled).
 */
export const handleInTurnPerKey = async <E>(events: readonly E[], keyOf: (event: E) => string, handle: (event: E) => Promise<void>): Promise<BatchOutcome> => {
  const queues = new Map<string, Array<{ event: E; index: number }>>()
  for (const [index, event] of events.entries()) {
    const key = keyOf(event)
    const queue = queues.get(key)
    if (queue === undefined) queues.set(key, [{ event, index }])
    else queue.push({ event, index })
  }
  const failures = await Promise.all([...queues.values()].map(async (queue) => {
    const outcome = await handleInTurn(queue.map((item) => item.event), handle)
    return outcome.failedAt === null ? null : { failedAt: queue[outcome.failedAt]?.index ?? 0, error: outcome.error }
  }))
  let earliest: BatchOutcome = { failedAt: null }
  for (const failure of failures) {
    if (failure !== null && (earliest.failedAt === null || failure.failedAt < earliest.failedAt)) earliest = failure
  }
  return earliest
}

export const defineProcess = <Deps, T extends DomainEventType>(definition: {
  name: string
  handles: readonly T[]
  handle(event: RecordedOf<T>, deps: Deps): Promise<void>
  /**
   * Events with different keys do not depend on each other (e.g. they act on
   * different aggregates): a batch handles each key's events in log order and
   * the keys concurrently. Without it, one event after the other.
   */
  inTurnPer?(event: RecordedOf<T>): string
  handleBatch?(events: ReadonlyArray<RecordedOf<T>>, deps: Deps): Promise<BatchOutcome>
  recover?(deps: Deps): Promise<void>
}): ProcessManager<Deps> => {
  const handle = async (event: RecordedEvent, deps: Deps): Promise<void> => {
    if (isEventOf(event, definition.handles)) await definition.handle(event, deps)
  }
  const { handleBatch, inTurnPer } = definition
  const keyOf = (event: RecordedEvent): string => (inTurnPer !== undefined && isEventOf(event, definition.handles) ? inTurnPer(event) : '')
  return {
    name: definition.name,
    handles: definition.handles,
    handle,
    handleBatch: async (events, deps) => {
      if (handleBatch === undefined) return handleInTurnPerKey(events, keyOf, (event) => handle(event, deps))
      // The supervisor only hands a manager the types it handles; anything else is not part of the batch.
      const own = events.filter((event): event is RecordedOf<T> => isEventOf(event, definition.handles))
      if (own.length !== events.length) throw new Error(`${definition.name}: a batch holds events it does not handle`)
      return handleBatch(own, deps)
    },
    ...(definition.recover === undefined ? {} : { recover: definition.recover }),
  }
}

/** The context of a command issued in reaction to an event: its organization and correlation, caused by it. */
export const causedBy = (event: RecordedEvent, actorId: string | null = event.metadata.actorId): CommandContext => ({
  organizationId: event.metadata.organizationId,
  actorId,
  correlationId: event.metadata.correlationId,
  causationId: event.id,
})

export interface ProcessRunnerOptions {
  logger: ProcessLogger
  /** Resolves when the read models have processed a position, so a manager reads what its event changed. */
  projectionsReached(position: number): Promise<void>
  /** Attempts at an event the service refuses (see `isRefusal`) before it is given up. */
  maxAttempts?: number
  retryDelayMs?: number
  /** The longest pause between two attempts at an event that keeps failing otherwise. */
  maxRetryDelayMs?: number
  now?: () => Date
  /** Unhandled events between checkpoint saves. */
  checkpointEvery?: number
  /** Most events of the log taken into one batch. */
  batchSize?: number
}

/** Failures that say nothing of the next attempt's: a conflict with a concurrent write, a timeout, a rate limit. */
const TRANSIENT_CODES: ReadonlySet<string> = new Set(['CONCURRENCY_CONFLICT', 'REQUEST_TIMEOUT', 'TOO_MANY_REQUESTS', 'EXPORT_RATE_LIMITED'])

/**
 * A refusal the same command meets again however often it is retried (a rule
 * of the domain, a document that is not there, something this version does
 * not implement). Anything else (the event
 * store or read store unreachable, a disk full, a defect) may pass, and
 * giving its event up would lose what it was to do: a payment applied, a
 * limit released, a webhook fired.
 */
export const isRefusal = (error: unknown): boolean =>
  error instanceof AppError && ((error.status >= 400 && error.status < 500 && !TRANSIENT_CODES.has(error.code)) || error.status === 501)

/** What a manager is doing wrong, for /v1/health. */
export interface ProcessStatus {
  name: string
  /** The event it keeps failing on and retries (null while nothing fails); the errors themselves are logged, not shown here. */
  retrying: { eventId: string; type: string; position: number; attempts: number; since: string } | null
  /** Events given up since the start: refused `maxAttempts` times, each logged. */
  givenUp: number
}

const NOT_YET = Symbol('not yet')

/**
 * Reads a subscription in batches: the first event as soon as there is one,
 * then whatever else the subscription yields before the event loop turns
 * (the rest of the page it has read), never waiting for more. A pull that did
 * not answer in time is kept for the next batch.
 */
export class BatchReader {
  private pending: Promise<IteratorResult<RecordedEvent>> | undefined

  constructor(private readonly iterator: AsyncIterator<RecordedEvent>, private readonly max: number) {}

  /** The next events in log order (at least one), or null when the subscription ended. */
  async next(): Promise<RecordedEvent[] | null> {
    const first = await (this.pending ?? this.iterator.next())
    this.pending = undefined
    if (first.done === true) return null
    const batch = [first.value]
    const turn = new Promise<typeof NOT_YET>((resolve) => setImmediate(resolve, NOT_YET))
    while (batch.length < this.max) {
      const pull = this.iterator.next()
      const result = await Promise.race([pull, turn])
      if (result === NOT_YET) {
        this.pending = pull
        break
      }
      if (result.done === true) {
        this.pending = pull
        break
      }
      batch.push(result.value)
    }
    return batch
  }
}

/**
 * Follows the global log for each process manager, each from its own
 * checkpoint, handing it the events it handles in batches (see BatchReader);
 * the checkpoint only moves past events whose batch got that far.
 */
export class ProcessSupervisor<Deps> {
  private readonly loops: Array<{ subscription: EventSubscription; done: Promise<void> }> = []
  private running = false
  // Ends the pauses between attempts when the supervisor stops.
  private stopping = new AbortController()
  private readonly statuses = new Map<string, ProcessStatus>()

  constructor(
    private readonly eventStore: EventStore,
    private readonly checkpoints: CheckpointStore,
    private readonly managers: ReadonlyArray<ProcessManager<Deps>>,
    private readonly deps: Deps,
    private readonly options: ProcessRunnerOptions,
  ) {}

  async start(): Promise<void> {
    this.running = true
    this.stopping = new AbortController()
    for (const manager of this.managers) {
      this.statuses.set(manager.name, { name: manager.name, retrying: null, givenUp: 0 })
      await manager.recover?.(this.deps)
      // A manager that only recovers at start has nothing to follow.
      if (manager.handles.length === 0) continue
      const from = await this.checkpoints.get(manager.name)
      const subscription = this.eventStore.subscribe(from, { types: manager.handles })
      this.loops.push({ subscription, done: this.follow(manager, subscription) })
    }
  }

  private async follow(manager: ProcessManager<Deps>, subscription: EventSubscription): Promise<void> {
    const handles = new Set<string>(manager.handles)
    const reader = new BatchReader(subscription[Symbol.asyncIterator](), this.options.batchSize ?? 256)
    let unsaved = 0
    let saved = 0
    let last = 0
    try {
      for (let read = await reader.next(); read !== null && this.running; read = await reader.next()) {
        const batch = read.filter((event) => handles.has(event.type))
        const end = read.at(-1)?.position ?? last
        if (batch.length === 0) {
          last = end
          unsaved += read.length
          if (unsaved >= (this.options.checkpointEvery ?? 500)) {
            unsaved = 0
            saved = last
            await this.checkpoints.set(manager.name, last)
          }
          continue
        }
        await this.options.projectionsReached(batch.at(-1)?.position ?? end)
        const handled = await this.handleWithRetry(manager, batch)
        // Stopped in the middle of a batch: what was not handled is redelivered after the restart.
        if (handled < batch.length) {
          const through = batch[handled - 1]?.position
          last = through === undefined ? saved : through
          break
        }
        last = end
        unsaved = 0
        saved = last
        await this.checkpoints.set(manager.name, last)
      }
    } catch (error) {
      if (this.running) this.options.logger.error({ err: error, process: manager.name }, 'process manager stopped on a read error')
    } finally {
      if (last > saved) await this.checkpoints.set(manager.name, last).catch(() => undefined)
    }
  }

  /** Each manager's failing event and the events it gave up, in the order the managers run. */
  status(): ProcessStatus[] {
    return [...this.statuses.values()].map((status) => ({ ...status }))
  }

  /**
   * Hands the batch to the manager; from an event that failed on, retries
   * with backoff (doubling up to `maxRetryDelayMs`). An event the service
   * refuses (`isRefusal`) is given up after `maxAttempts` (logged, counted
   * in `status()`) and the batch goes on; any other failure is retried until
   * it passes or the supervisor stops, so that nothing the event was to do
   * is lost. Answers how many events of the batch are done (fewer than all
   * only when the supervisor stopped).
   */
  private async handleWithRetry(manager: ProcessManager<Deps>, batch: readonly RecordedEvent[]): Promise<number> {
    const attempts = this.options.maxAttempts ?? 5
    const status = this.statuses.get(manager.name) ?? { name: manager.name, retrying: null, givenUp: 0 }
    let done = 0
    let attempt = 1
    while (done < batch.length) {
      if (!this.running) return done
      const rest = batch.slice(done)
      let outcome: BatchOutcome
      try {
        outcome = await manager.handleBatch(rest, this.deps)
      } catch (error) {
        outcome = { failedAt: 0, error }
      }
      if (outcome.failedAt === null || outcome.failedAt > 0) status.retrying = null
      if (outcome.failedAt === null) return batch.length
      if (outcome.failedAt > 0) attempt = 1
      done += outcome.failedAt
      const event = batch[done]
      if (event === undefined) return batch.length
      const context = { err: outcome.error, process: manager.name, event: event.id, type: event.type, attempt }
      if (attempt >= attempts && isRefusal(outcome.error)) {
        this.options.logger.error(context, 'process manager gave up on an event the service refuses every time')
        status.retrying = null
        status.givenUp += 1
        done++
        attempt = 1
        continue
      }
      status.retrying = {
        eventId: event.id, type: event.type, position: event.position, attempts: attempt,
        since: status.retrying?.eventId === event.id ? status.retrying.since : (this.options.now?.() ?? new Date()).toISOString(),
      }
      if (attempt === attempts) this.options.logger.error(context, 'process manager keeps failing on an event; retrying until it passes')
      else this.options.logger.warn(context, 'process manager failed; retrying')
      const pause = Math.min((this.options.retryDelayMs ?? 200) * 2 ** Math.min(attempt - 1, 30), this.options.maxRetryDelayMs ?? 30_000)
      await delay(pause, undefined, { signal: this.stopping.signal }).catch(() => undefined)
      attempt++
    }
    return done
  }

  async stop(): Promise<void> {
    if (!this.running) return
    this.running = false
    this.stopping.abort()
    await Promise.all(this.loops.map(async (loop) => {
      await loop.subscription.close()
      await loop.done
    }))
    this.loops.length = 0
    await this.checkpoints.flush()
  }
}

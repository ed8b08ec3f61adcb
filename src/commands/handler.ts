import type { DomainEvent, RecordedEvent } from '../events/catalogue.js'
import { requireKnownType } from '../events/serialization.js'
import { schemaVersionOf } from '../events/upcasters.js'
import { WrongExpectedRevisionError, type EventStore } from '../events/store.js'
import type { EventMetadata, ExpectedRevision, NewEvent } from '../events/types.js'
import type { Clock } from '../shared/clock.js'
import { AppError } from '../shared/errors.js'
import { deepFreeze } from '../shared/freeze.js'
import { KeyedLock } from '../shared/keyedLock.js'
import { LRUCache } from 'lru-cache'
import { newId } from '../shared/ids.js'
import type { Aggregate } from './decider.js'

/** Who issues a command and why: becomes the metadata of the events it appends. */
export interface CommandContext {
  organizationId: string | null
  actorId: string | null
  correlationId: string
  causationId?: string | null
}

export interface CommandResult<E extends DomainEvent, S> {
  /** The events appended (empty when the command changed nothing). */
  events: E[]
  state: S
  /** Revision of the stream after the command, or 'no_stream'. */
  revision: number | 'no_stream'
  /**
   * Global position of the last appended event; when nothing was appended, of the stream's last event (0 for no
   * stream), so a caller that waits for it reads its own earlier write, or a concurrent one that made this a repeat.
   */
  position: number
}

export interface LoadedAggregate<S> {
  state: S
  revision: number | 'no_stream'
  /** Global position of the stream's last event (0 for no stream). */
  position: number
}

export interface LoadOptions {
  /** Only events that occurred by then. */
  asOf?: Date
  /** Only events earlier in the global log than this position (what a past event saw). */
  before?: number
}

interface CachedState {
  aggregate: object
  state: unknown
  revision: number
  position: number
}

const belongsTo = <E extends DomainEvent>(aggregate: { eventTypes: ReadonlyArray<E['type']> }, event: RecordedEvent): event is RecordedEvent & E =>
  (aggregate.eventTypes as readonly string[]).includes(event.type)

export interface CommandHandlerDeps {
  eventStore: EventStore
  clock: Clock
  maxRetries: number
  /** Folded states kept in memory (0 disables the cache). */
  cacheSize?: number
}

/**
 * A random pause before retrying after a conflict with another process's
 * writer, growing with the attempt (up to 4, 8, 16 ms), so that the losers of
 * one race do not reload together and race each other again in the next
 * group commit.
 */
const retryPause = (attempt: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, Math.random() * 4 * 2 ** attempt))

/**
 * The one generic command handler: read the stream, fold it, decide, append
 * with the expected revision; on a revision conflict re-read and decide again
 * a bounded number of times, then answer 409.
 */
export class CommandHandler {
  /**
   * Folded states by stream. A load still asks the store for events after the
   * cached revision (unless the store knows there are none: `knownCurrent`),
   * so writes by other processes are seen; and a state that
   * is stale anyway can never be appended from, since the expected revision
   * would not match and the retry reloads. States are frozen: shared, never edited.
   */
  private readonly states: LRUCache<string, CachedState> | null
  /**
   * Commands on one stream run one at a time in this instance, so they meet no
   * conflict among themselves: twelve disbursements at once against one credit
   * limit, racing optimistically, had 21 to 65 of 360 answer 409 after every
   * retry (docs/architecture.md). The retries remain for writers in other processes.
   */
  private readonly streams = new KeyedLock()

  constructor(private readonly deps: CommandHandlerDeps) {
    const size = deps.cacheSize ?? 10_000
    this.states = size > 0 ? new LRUCache<string, CachedState>({ max: size }) : null
  }

  load<C, E extends DomainEvent, S>(
    aggregate: Aggregate<C, E, S>, id: string, options: LoadOptions & { withEvents: true },
  ): Promise<LoadedAggregate<S> & { events: RecordedEvent[] }>
  load<C, E extends DomainEvent, S>(aggregate: Aggregate<C, E, S>, id: string, options?: LoadOptions): Promise<LoadedAggregate<S>>
  async load<C, E extends DomainEvent, S>(
    aggregate: Aggregate<C, E, S>,
    id: string,
    options: LoadOptions & { withEvents?: boolean } = {},
  ): Promise<LoadedAggregate<S> & { events: RecordedEvent[] }> {
    const streamId = `${aggregate.streamType}-${id}`
    // A view of the past (asOf, before) or a load that wants the events bypasses the cache of current states.
    const full = options.asOf !== undefined || options.before !== undefined || options.withEvents === true
    const cached = full ? undefined : this.states?.get(streamId)
    const fromCache = cached !== undefined && cached.aggregate === aggregate
    // The cached state was folded by this very aggregate, so it has its state type.
    let state = fromCache ? (cached.state as S) : aggregate.initialState()
    let revision: number | 'no_stream' = fromCache ? cached.revision : 'no_stream'
    let position = fromCache ? cached.position : 0
    // Nothing to read when the store vouches nothing was appended after the cached revision (no query, no iterator).
    if (fromCache && this.deps.eventStore.knownCurrent?.(streamId, cached.revision) === true) return { state, revision, position, events: [] }
    const events: RecordedEvent[] = []
    const from = typeof revision === 'number' ? { fromRevision: revision + 1 } : {}
    for await (const event of this.deps.eventStore.readStream(streamId, from)) {
      if (options.asOf !== undefined && new Date(event.metadata.occurredAt) > options.asOf) break
      if (options.before !== undefined && event.position >= options.before) break
      requireKnownType(event)
      revision = event.revision
      position = event.position
      if (full) events.push(event)
      if (belongsTo(aggregate, event)) state = aggregate.evolve(state, event)
    }
    if (!full && typeof revision === 'number') this.remember(streamId, aggregate, state, revision, position)
    return { state, revision, position, events }
  }

  private remember(streamId: string, aggregate: object, state: unknown, revision: number, position: number): void {
    this.states?.set(streamId, { aggregate, state: deepFreeze(state), revision, position })
  }

  execute<C, E extends DomainEvent, S>(
    aggregate: Aggregate<C, E, S>,
    id: string,
    command: C,
    context: CommandContext,
  ): Promise<CommandResult<E, S>> {
    return this.streams.run(`${aggregate.streamType}-${id}`, () => this.decideAndAppend(aggregate, id, command, context))
  }

  private async decideAndAppend<C, E extends DomainEvent, S>(
    aggregate: Aggregate<C, E, S>,
    id: string,
    command: C,
    context: CommandContext,
  ): Promise<CommandResult<E, S>> {
    const streamId = `${aggregate.streamType}-${id}`
    for (let attempt = 0; ; attempt++) {
      const { state, revision, position } = await this.load(aggregate, id)
      const events = aggregate.decide(command, state)
      if (events.length === 0) return { events, state, revision, position }
      const expected: ExpectedRevision = revision === 'no_stream' ? 'no_stream' : revision
      try {
        const result = await this.deps.eventStore.append(streamId, events.map((e) => this.toNewEvent(e, context)), expected)
        const next = events.reduce((s, e) => aggregate.evolve(s, e), state)
        this.remember(streamId, aggregate, next, result.revision, result.position)
        return { events, state: next, revision: result.revision, position: result.position }
      } catch (error) {
        if (!(error instanceof WrongExpectedRevisionError)) throw error
        if (attempt >= this.deps.maxRetries) {
          throw new AppError('CONCURRENCY_CONFLICT', `${aggregate.streamType} ${id} was changed concurrently; retry the request`, {
            stream: streamId,
          })
        }
        await retryPause(attempt)
      }
    }
  }

  /** Appends events decided elsewhere (e.g. a reservation stream) with an explicit expectation. */
  async appendRaw<E extends DomainEvent>(streamId: string, events: E[], expected: ExpectedRevision, context: CommandContext) {
    return this.deps.eventStore.append(streamId, events.map((e) => this.toNewEvent(e, context)), expected)
  }

  private toNewEvent<E extends DomainEvent>(event: E, context: CommandContext): NewEvent<E> {
    const metadata: EventMetadata = {
      organizationId: context.organizationId,
      actorId: context.actorId,
      correlationId: context.correlationId,
      causationId: context.causationId ?? null,
      occurredAt: this.deps.clock.now().toISOString(),
      schemaVersion: schemaVersionOf(event.type),
    }
    return { id: newId(), type: event.type, data: event.data, metadata }
  }
}

import type { DomainEvent, RecordedEvent } from '../events/catalogue.js'
import { schemaVersionOf } from '../events/upcasters.js'
import { WrongExpectedRevisionError, type EventStore } from '../events/store.js'
import type { EventMetadata, ExpectedRevision, NewEvent } from '../events/types.js'
import type { Clock } from '../shared/clock.js'
import { AppError } from '../shared/errors.js'
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
  /** Global position of the last appended event; 0 when nothing was appended. */
  position: number
}

export interface LoadedAggregate<S> {
  state: S
  revision: number | 'no_stream'
  events: RecordedEvent[]
}

const belongsTo = <E extends DomainEvent>(aggregate: { eventTypes: ReadonlyArray<E['type']> }, event: RecordedEvent): event is RecordedEvent & E =>
  (aggregate.eventTypes as readonly string[]).includes(event.type)

export interface CommandHandlerDeps {
  eventStore: EventStore
  clock: Clock
  maxRetries: number
}

/**
 * The one generic command handler: read the stream, fold it, decide, append
 * with the expected revision; on a revision conflict re-read and decide again
 * a bounded number of times, then answer 409.
 */
export class CommandHandler {
  constructor(private readonly deps: CommandHandlerDeps) {}

  async load<C, E extends DomainEvent, S>(
    aggregate: Aggregate<C, E, S>,
    id: string,
    /** `asOf`: events that occurred by then; `before`: events earlier in the global log than that position (what a past event saw). */
    options: { asOf?: Date; before?: number } = {},
  ): Promise<LoadedAggregate<S>> {
    const streamId = `${aggregate.streamType}-${id}`
    let state = aggregate.initialState()
    let revision: number | 'no_stream' = 'no_stream'
    const events: RecordedEvent[] = []
    for await (const event of this.deps.eventStore.readStream(streamId)) {
      if (options.asOf !== undefined && new Date(event.metadata.occurredAt) > options.asOf) break
      if (options.before !== undefined && event.position >= options.before) break
      revision = event.revision
      events.push(event)
      if (belongsTo(aggregate, event)) state = aggregate.evolve(state, event)
    }
    return { state, revision, events }
  }

  async execute<C, E extends DomainEvent, S>(
    aggregate: Aggregate<C, E, S>,
    id: string,
    command: C,
    context: CommandContext,
  ): Promise<CommandResult<E, S>> {
    const streamId = `${aggregate.streamType}-${id}`
    for (let attempt = 0; ; attempt++) {
      const { state, revision } = await this.load(aggregate, id)
      const events = aggregate.decide(command, state)
      if (events.length === 0) return { events, state, revision, position: 0 }
      const expected: ExpectedRevision = revision === 'no_stream' ? 'no_stream' : revision
      try {
        const result = await this.deps.eventStore.append(streamId, events.map((e) => this.toNewEvent(e, context)), expected)
        const next = events.reduce((s, e) => aggregate.evolve(s, e), state)
        return { events, state: next, revision: result.revision, position: result.position }
      } catch (error) {
        if (!(error instanceof WrongExpectedRevisionError)) throw error
        if (attempt >= this.deps.maxRetries) {
          throw new AppError('CONCURRENCY_CONFLICT', `${aggregate.streamType} ${id} was changed concurrently; retry the request`, {
            stream: streamId,
          })
        }
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

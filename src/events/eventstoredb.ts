import {
  ANY,
  BACKWARDS,
  END,
  EventStoreDBClient,
  FORWARDS,
  NO_STREAM,
  START,
  STREAM_EXISTS,
  StreamNotFoundError,
  WrongExpectedVersionError,
  excludeSystemEvents,
  jsonEvent,
  type AllStreamResolvedEvent,
  type AppendExpectedRevision,
  type ReadPosition,
  type ResolvedEvent,
} from '@eventstore/db-client'
import { subscriptionToObservable } from './observable.js'
import { toRecorded, type StoredEvent } from './serialization.js'
import { WrongExpectedRevisionError, type EventStore, type EventSubscription } from './store.js'
import type { RecordedEvent } from './catalogue.js'
import type { AppendResult, EventMetadata, ExpectedRevision, NewEvent, ReadAllOptions, ReadStreamOptions } from './types.js'

const toExpected = (expected: ExpectedRevision): AppendExpectedRevision => {
  if (expected === 'no_stream') return NO_STREAM
  if (expected === 'any') return ANY
  if (expected === 'stream_exists') return STREAM_EXISTS
  return BigInt(expected)
}

const isSystem = (streamId: string, type: string) => streamId.startsWith('$') || type.startsWith('$')

const isMetadata = (value: unknown): value is EventMetadata =>
  typeof value === 'object' && value !== null && 'correlationId' in value && 'occurredAt' in value

const toStoredEvent = (resolved: ResolvedEvent | AllStreamResolvedEvent): StoredEvent | undefined => {
  const event = resolved.event
  if (event === undefined || !event.isJson || isSystem(event.streamId, event.type)) return undefined
  if (!isMetadata(event.metadata)) return undefined
  return {
    id: event.id,
    streamId: event.streamId,
    revision: Number(event.revision),
    // The prepare position is unique per event and grows along $all; the commit position is shared by a batch.
    position: event.position === undefined ? -1 : Number(event.position.prepare),
    type: event.type,
    data: event.data,
    metadata: event.metadata,
    recordedAt: event.created.toISOString(),
  }
}

/** Resuming "after p" starts at the earliest log record p can belong to; events at or before p are skipped. */
const resumeFrom = (after: number): ReadPosition =>
  after <= 0 ? START : { commit: BigInt(after), prepare: BigInt(after) }

export class EventStoreDbEventStore implements EventStore {
  readonly kind = 'eventstoredb' as const
  private readonly client: EventStoreDBClient

  constructor(connectionString: string) {
    this.client = EventStoreDBClient.connectionString`${connectionString}`
  }

  async append(streamId: string, events: NewEvent[], expectedRevision: ExpectedRevision): Promise<AppendResult> {
    try {
      const result = await this.client.appendToStream(
        streamId,
        events.map((e) => jsonEvent({ id: e.id, type: e.type, data: { ...e.data }, metadata: { ...e.metadata } })),
        { expectedRevision: toExpected(expectedRevision) },
      )
      const revision = Number(result.nextExpectedRevision)
      const position = events.length === 1 && result.position !== undefined
        ? Number(result.position.prepare)
        : await this.positionOfLast(streamId)
      return { revision, position }
    } catch (error) {
      if (error instanceof WrongExpectedVersionError) {
        const actual = typeof error.actualVersion === 'bigint' ? Number(error.actualVersion) : 'no_stream'
        throw new WrongExpectedRevisionError(streamId, expectedRevision, actual)
      }
      throw error
    }
  }

  private async positionOfLast(streamId: string): Promise<number> {
    for await (const resolved of this.client.readStream(streamId, { direction: BACKWARDS, fromRevision: END, maxCount: 1 })) {
      const position = resolved.event?.position
      if (position !== undefined) return Number(position.prepare)
    }
    return this.headPosition()
  }

  async *readStream(streamId: string, options: ReadStreamOptions = {}): AsyncIterable<RecordedEvent> {
    const backwards = options.direction === 'backwards'
    const reading = this.client.readStream(streamId, {
      direction: backwards ? BACKWARDS : FORWARDS,
      fromRevision: options.fromRevision === undefined ? (backwards ? END : START) : BigInt(options.fromRevision),
      ...(options.maxCount === undefined ? {} : { maxCount: options.maxCount }),
    })
    try {
      for await (const resolved of reading) {
        const stored = toStoredEvent(resolved)
        if (stored !== undefined) yield toRecorded(stored)
      }
    } catch (error) {
      if (error instanceof StreamNotFoundError) return
      throw error
    }
  }

  async *readAll(options: ReadAllOptions = {}): AsyncIterable<RecordedEvent> {
    const backwards = options.direction === 'backwards'
    const after = options.after
    const reading = this.client.readAll({
      direction: backwards ? BACKWARDS : FORWARDS,
      fromPosition: after === undefined ? (backwards ? END : START) : resumeFrom(after),
    })
    let remaining = options.maxCount ?? Number.POSITIVE_INFINITY
    for await (const resolved of reading) {
      if (remaining <= 0) break
      const stored = toStoredEvent(resolved)
      if (stored === undefined) continue
      if (after !== undefined && (backwards ? stored.position >= after : stored.position <= after)) continue
      remaining -= 1
      yield toRecorded(stored)
    }
  }

  subscribe(after: number): EventSubscription {
    const subscription = this.client.subscribeToAll({ fromPosition: resumeFrom(after), filter: excludeSystemEvents() })
    async function* iterate(): AsyncGenerator<RecordedEvent> {
      for await (const resolved of subscription) {
        const stored = toStoredEvent(resolved)
        if (stored === undefined || stored.position <= after) continue
        yield toRecorded(stored)
      }
    }
    const iterator = iterate()
    return {
      [Symbol.asyncIterator]: () => iterator,
      close: async () => {
        await subscription.unsubscribe()
        await iterator.return(undefined)
      },
    }
  }

  subscribeToAll(after: number) {
    return subscriptionToObservable(() => this.subscribe(after))
  }

  async headPosition(): Promise<number> {
    for await (const event of this.readAll({ direction: 'backwards', maxCount: 1 })) return event.position
    return 0
  }

  async streamRevision(streamId: string): Promise<number | 'no_stream'> {
    for await (const event of this.readStream(streamId, { direction: 'backwards', maxCount: 1 })) return event.revision
    return 'no_stream'
  }

  async ping(): Promise<void> {
    await this.headPosition()
  }

  async close(): Promise<void> {
    await this.client.dispose()
  }
}

import type { Observable } from 'rxjs'
import type { RecordedEvent } from './catalogue.js'
import type { AppendResult, ExpectedRevision, NewEvent, ReadAllOptions, ReadStreamOptions } from './types.js'

/** Raised by an adapter when the expected revision does not match the stream. */
export class WrongExpectedRevisionError extends Error {
  constructor(
    readonly streamId: string,
    readonly expected: ExpectedRevision,
    readonly actual: number | 'no_stream',
  ) {
    super(`stream ${streamId}: expected revision ${String(expected)}, actual ${String(actual)}`)
    this.name = 'WrongExpectedRevisionError'
  }
}

/** A live subscription to the global log: pull-based so a slow consumer never buffers the log in memory. */
export interface EventSubscription extends AsyncIterable<RecordedEvent> {
  close(): Promise<void>
}

export interface EventStore {
  readonly kind: 'sqlite' | 'eventstoredb'
  append(streamId: string, events: NewEvent[], expectedRevision: ExpectedRevision): Promise<AppendResult>
  readStream(streamId: string, options?: ReadStreamOptions): AsyncIterable<RecordedEvent>
  readAll(options?: ReadAllOptions): AsyncIterable<RecordedEvent>
  /**
   * Catch-up from `after` (exclusive; 0 = from the start) that turns live, as
   * a pull-based iterator. `types` is a hint: an adapter that can skips other
   * types before parsing them, but a consumer still checks each event's type.
   * An event may be one frozen object shared by every subscriber (the SQLite
   * store's tail of fresh commits): a consumer never edits one.
   */
  subscribe(after: number, options?: { types?: readonly string[] }): EventSubscription
  /** The same catch-up subscription as an rxjs Observable (for fan-out consumers that never block). */
  subscribeToAll(after: number): Observable<RecordedEvent>
  /** Position of the last event of the global log (0 when empty). */
  headPosition(): Promise<number>
  /** Current revision of a stream, or 'no_stream'. */
  streamRevision(streamId: string): Promise<number | 'no_stream'>
  /**
   * True only when the store knows, without reading, that `revision` is
   * still the stream's last: it committed or read that revision itself and
   * nothing has been written by anyone else since. False means "read to find
   * out". Optional: an adapter that cannot know leaves it out.
   */
  knownCurrent?(streamId: string, revision: number): boolean
  ping(): Promise<void>
  close(): Promise<void>
}

/** An rxjs view over the pull subscription; unsubscribing closes it. */
export { subscriptionToObservable } from './observable.js'


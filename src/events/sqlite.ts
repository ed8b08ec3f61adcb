import type Database from 'better-sqlite3'
import { Worker } from 'node:worker_threads'
import { LRUCache } from 'lru-cache'
import { Subject } from 'rxjs'
import { subscriptionToObservable } from './observable.js'
import { toRecorded, type StoredEvent } from './serialization.js'
import { fromLogRow, fromParsedRow, LOG_COLUMNS, parseMetadata, type LogRow } from './sqliteLogRow.js'
import { LogReadAhead } from './sqliteReadAhead.js'
import { openEventDatabase, type EventRow } from './sqliteSchema.js'
import { CommittedTail, type TailRead } from './sqliteTail.js'
import { SqliteWriter, type WriteOutcome, type WriteRequest } from './sqliteWriter.js'
import { WrongExpectedRevisionError, type EventStore, type EventSubscription } from './store.js'
import type { RecordedEvent } from './catalogue.js'
import type { AppendResult, ExpectedRevision, NewEvent, ReadAllOptions, ReadStreamOptions } from './types.js'
import { deepFreeze } from '../shared/freeze.js'

interface PendingAppend {
  streamId: string
  events: NewEvent[]
  expected: ExpectedRevision
  resolve(result: AppendResult): void
  reject(error: unknown): void
}

/** Most appends committed together in one transaction (one fsync). */
const MAX_GROUP = 256

/** Where a group of appends is committed: in this thread, or in the writer thread. */
interface WriterChannel {
  commit(group: WriteRequest[]): Promise<WriteOutcome[]>
  close(): Promise<void>
}

class InlineWriter implements WriterChannel {
  private readonly writer: SqliteWriter
  constructor(db: Database.Database) {
    this.writer = new SqliteWriter(db)
  }
  async commit(group: WriteRequest[]): Promise<WriteOutcome[]> {
    return this.writer.commit(group)
  }
  async close(): Promise<void> {}
}

/** The writer thread: commits (and their fsync) happen off the event loop. */
class WorkerWriter implements WriterChannel {
  private readonly worker: Worker
  private readonly waiting = new Map<number, { resolve(outcomes: WriteOutcome[]): void; reject(error: Error): void }>()
  private nextId = 0
  private failure: Error | null = null

  constructor(file: string, synchronous: 'FULL' | 'NORMAL') {
    this.worker = new Worker(new URL('./sqliteWriterWorker.mjs', import.meta.url), { workerData: { file, synchronous } })
    this.worker.on('message', (message: { id: number; outcomes?: WriteOutcome[]; error?: string }) => {
      const waiter = this.waiting.get(message.id)
      if (waiter === undefined) return
      this.waiting.delete(message.id)
      if (message.outcomes !== undefined) waiter.resolve(message.outcomes)
      else waiter.reject(new Error(message.error ?? 'append failed'))
    })
    this.worker.on('error', (error) => this.fail(error))
    this.worker.on('exit', (code) => this.fail(new Error(`event store writer exited (${code})`)))
  }

  private fail(error: Error): void {
    this.failure ??= error
    for (const waiter of this.waiting.values()) waiter.reject(error)
    this.waiting.clear()
  }

  commit(group: WriteRequest[]): Promise<WriteOutcome[]> {
    if (this.failure !== null) return Promise.reject(this.failure)
    const id = this.nextId++
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject })
      this.worker.postMessage({ id, group })
    })
  }

  async close(): Promise<void> {
    if (this.failure !== null) return
    const exited = new Promise<void>((resolve) => this.worker.once('exit', () => resolve()))
    this.worker.postMessage({ close: true })
    await exited
  }
}

export interface SqliteEventStoreOptions {
  /** File path, or ':memory:'. */
  file: string
  synchronous?: 'FULL' | 'NORMAL'
  /** How often a waiting subscription looks for events appended by another process. */
  pollIntervalMs?: number
  pageSize?: number
  /**
   * Commit in this thread (default) or in a worker thread, which keeps the
   * fsync off the event loop but costs a message round trip per group: in
   * `npm run bench` the worker gave 27 % of raw SQLite appends and 1,332
   * orders/s against 67 % and 1,878 orders/s inline (see docs/benchmarks.md).
   */
  writer?: 'worker' | 'inline'
  /** How many of its latest committed events the store keeps for its subscriptions (0: none, every subscription reads the log). */
  recentEvents?: number
  /**
   * A subscription to every event type that starts at least this many events
   * behind the head (a rebuild, a start without a snapshot) reads the log up
   * to that head in a thread of its own (src/events/sqliteReadAhead.ts);
   * 0: never. File stores only.
   */
  readAheadFrom?: number
}

const toStored = (row: EventRow): StoredEvent => ({
  id: row.id,
  streamId: row.stream_id,
  revision: row.revision,
  position: row.position,
  type: row.type,
  data: JSON.parse(row.data),
  metadata: parseMetadata(row.metadata),
  recordedAt: row.recorded_at,
})

/**
 * The events of an append just committed, as a read of their rows would give
 * them (same JSON text parsed, same upcasting), frozen to be shared. An
 * append's events take consecutive positions and revisions ending at its result.
 */
/** The events of a committed append, parsed and frozen, each with the length of its JSON. */
function* committedEvents(request: WriteRequest, result: AppendResult): Generator<[RecordedEvent, number]> {
  const lastIndex = request.events.length - 1
  for (const [index, event] of request.events.entries()) {
    yield [deepFreeze(toRecorded(fromLogRow([
      result.position - lastIndex + index, request.streamId, result.revision - lastIndex + index, event.id, event.type, event.data, event.metadata, event.recordedAt,
    ]))), event.data.length + event.metadata.length]
  }
}

function* recordedFrom(rows: readonly LogRow[]): Generator<RecordedEvent> {
  for (const row of rows) yield toRecorded(fromLogRow(row))
}

const toRequest = (item: PendingAppend): WriteRequest => ({
  streamId: item.streamId,
  expected: item.expected,
  events: item.events.map((e) => ({
    id: e.id, type: e.type, data: JSON.stringify(e.data), metadata: JSON.stringify(e.metadata), recordedAt: e.metadata.occurredAt,
  })),
})

/**
 * The embedded event store: one SQLite table in WAL mode whose rowid is the
 * global position. Expected-revision checks and the append run in one
 * immediate transaction, so concurrent writers (other processes included) are
 * serialized by SQLite and a conflict is reported exactly as EventStoreDB does.
 *
 * Group commit: appends wait while the previous group commits, then go
 * together in one transaction, and so one fsync; each runs in its own
 * savepoint, so a refused append changes nothing and never affects the
 * others. Every caller is answered after its commit: an acknowledged append is
 * durable.
 */
export class SqliteEventStore implements EventStore {
  readonly kind = 'sqlite' as const
  private readonly db: Database.Database
  private readonly writer: WriterChannel
  private readonly appended = new Subject<number>()
  private readonly pollIntervalMs: number
  private readonly pageSize: number
  private readonly file: string
  private readonly readAheadFrom: number
  private readonly readAheads = new Set<LogReadAhead>()
  private readonly openSubscriptions = new Set<() => void>()
  private closed = false
  private readonly statements
  private pending: PendingAppend[] = []
  private flushing: Promise<void> | null = null
  /** The last revision of streams this connection appended to or read to the end; cleared when another connection commits. */
  private readonly lastRevisions = new LRUCache<string, number>({ max: 100_000 })
  private dataVersion: number
  /** The data version read once in this turn of the event loop (see `turnDataVersion`). */
  private versionThisTurn: number | undefined
  private readonly tail: CommittedTail<RecordedEvent> | null
  /** The data version read before the tail's latest commit: while it stands, no other connection has appended after the tail. */
  private tailVersion = -1

  constructor(options: SqliteEventStoreOptions) {
    const synchronous = options.synchronous ?? 'FULL'
    this.db = openEventDatabase(options.file, synchronous)
    this.writer = options.file === ':memory:' || options.writer !== 'worker'
      ? new InlineWriter(this.db)
      : new WorkerWriter(options.file, synchronous)
    this.pollIntervalMs = options.pollIntervalMs ?? 200
    this.pageSize = options.pageSize ?? 1000
    this.file = options.file
    this.readAheadFrom = options.file === ':memory:' ? 0 : options.readAheadFrom ?? 50_000
    this.statements = {
      streamRevision: this.db.prepare<[string], { revision: number }>(
        'SELECT revision FROM events WHERE stream_id = ? ORDER BY revision DESC LIMIT 1'),
      streamForwards: this.db.prepare<[string, number, number], EventRow>(
        'SELECT * FROM events WHERE stream_id = ? AND revision >= ? ORDER BY revision ASC LIMIT ?'),
      streamBackwards: this.db.prepare<[string, number, number], EventRow>(
        'SELECT * FROM events WHERE stream_id = ? AND revision <= ? ORDER BY revision DESC LIMIT ?'),
      allForwards: this.db.prepare<[number, number], LogRow>(
        `SELECT ${LOG_COLUMNS} FROM events WHERE position > ? ORDER BY position ASC LIMIT ?`).raw(true),
      allBackwards: this.db.prepare<[number, number], LogRow>(
        `SELECT ${LOG_COLUMNS} FROM events WHERE position < ? ORDER BY position DESC LIMIT ?`).raw(true),
      head: this.db.prepare<[], { head: number | null }>('SELECT MAX(position) AS head FROM events'),
      typedForwards: this.db.prepare<[number, number, string, number], LogRow>(
        `SELECT ${LOG_COLUMNS} FROM events WHERE position > ? AND position <= ? AND type IN (SELECT value FROM json_each(?)) ORDER BY position ASC LIMIT ?`).raw(true),
      // Changes when another connection (another process, or the writer thread) commits; this connection's own commits leave it.
      dataVersion: this.db.prepare<[], number>('PRAGMA data_version').pluck(),
    }
    this.dataVersion = this.statements.dataVersion.get() ?? 0
    const recent = options.recentEvents ?? 4096
    this.tail = recent > 0 ? new CommittedTail(recent) : null
  }

  private freshDataVersion(): number {
    if (this.versionThisTurn === undefined) setImmediate(() => { this.versionThisTurn = undefined })
    this.versionThisTurn = this.statements.dataVersion.get() ?? 0
    return this.versionThisTurn
  }

  /**
   * The data version, read at most once per turn of the event loop: the
   * command handler asks before every load, and the pragma is a read
   * transaction of its own. Another connection's commit in the same turn is
   * seen at the next; a command that decided from the state before it is
   * refused at its append (expected revision) and retried.
   */
  private turnDataVersion(): number {
    return this.versionThisTurn ?? this.freshDataVersion()
  }

  knownCurrent(streamId: string, revision: number): boolean {
    if (this.closed) return false
    const version = this.turnDataVersion()
    if (version !== this.dataVersion) {
      this.dataVersion = version
      this.lastRevisions.clear()
      return false
    }
    return this.lastRevisions.get(streamId) === revision
  }

  /** Revisions only grow: a read that ended before a later append of this process must not move the known revision back. */
  private sawRevision(streamId: string, revision: number): void {
    const known = this.lastRevisions.get(streamId)
    if (known === undefined || known < revision) this.lastRevisions.set(streamId, revision)
  }

  async append(streamId: string, events: NewEvent[], expectedRevision: ExpectedRevision): Promise<AppendResult> {
    this.assertOpen()
    if (events.length === 0) throw new Error('append needs at least one event')
    return new Promise<AppendResult>((resolve, reject) => {
      this.pending.push({ streamId, events, expected: expectedRevision, resolve, reject })
      // Appends made in this event-loop turn join the group; later ones wait for the commit in progress.
      this.flushing ??= new Promise<void>((done) => setImmediate(done)).then(() => this.flush())
    })
  }

  private async flush(): Promise<void> {
    try {
      while (this.pending.length > 0) {
        const group = this.pending.splice(0, MAX_GROUP)
        const requests = group.map(toRequest)
        // Read before the transaction: a commit of another connection after this read can only make the tail look stale, never current.
        const versionBefore = this.tail === null ? 0 : this.freshDataVersion()
        let outcomes: WriteOutcome[]
        try {
          outcomes = await this.writer.commit(requests)
        } catch (error) {
          for (const item of group) item.reject(error)
          continue
        }
        let head = 0
        for (const [index, item] of group.entries()) {
          const outcome = outcomes[index]
          const request = requests[index]
          if (outcome === undefined || request === undefined) item.reject(new Error('append lost'))
          else if ('ok' in outcome) {
            head = Math.max(head, outcome.ok.position)
            this.sawRevision(item.streamId, outcome.ok.revision)
            if (outcome.inserted) this.addToTail(request, outcome.ok, versionBefore)
            item.resolve(outcome.ok)
          } else if ('wrongExpected' in outcome) {
            this.lastRevisions.delete(item.streamId)
            item.reject(new WrongExpectedRevisionError(item.streamId, outcome.wrongExpected.expected, outcome.wrongExpected.actual))
          } else item.reject(new Error(outcome.failed))
        }
        if (head > 0) this.appended.next(head)
      }
    } finally {
      this.flushing = null
    }
  }

  private addToTail(request: WriteRequest, result: AppendResult, versionBefore: number): void {
    if (this.tail === null) return
    for (const [event, bytes] of committedEvents(request, result)) this.tail.add(event, bytes)
    this.tailVersion = versionBefore
  }

  /**
   * What the tail holds after `after`; when it holds nothing newer, whether
   * the log does: not while no other connection has committed since the
   * tail's latest commit. Null sends the caller to the log.
   */
  private recent(after: number, types: ReadonlySet<string> | null): TailRead<RecordedEvent> | null {
    const read = this.tail?.after(after, types, this.pageSize) ?? null
    if (read === null || read.through > after) return read
    return this.turnDataVersion() === this.tailVersion ? read : null
  }

  async *readStream(streamId: string, options: ReadStreamOptions = {}): AsyncIterable<RecordedEvent> {
    this.assertOpen()
    const backwards = options.direction === 'backwards'
    let remaining = options.maxCount ?? Number.POSITIVE_INFINITY
    let from = options.fromRevision ?? (backwards ? Number.MAX_SAFE_INTEGER : 0)
    while (remaining > 0) {
      const limit = Math.min(this.pageSize, remaining)
      const rows = backwards
        ? this.statements.streamBackwards.all(streamId, from, limit)
        : this.statements.streamForwards.all(streamId, from, limit)
      const last = rows.at(-1)
      const end = rows.length < limit
      // One statement read the page: a short forward page ended at the stream's last revision of that moment.
      if (end && !backwards && last !== undefined) this.sawRevision(streamId, last.revision)
      for (const row of rows) yield toRecorded(toStored(row))
      if (end || last === undefined) return
      remaining -= rows.length
      from = backwards ? last.revision - 1 : last.revision + 1
    }
  }

  async *readAll(options: ReadAllOptions = {}): AsyncIterable<RecordedEvent> {
    this.assertOpen()
    const backwards = options.direction === 'backwards'
    let remaining = options.maxCount ?? Number.POSITIVE_INFINITY
    let after = options.after ?? (backwards ? Number.MAX_SAFE_INTEGER : 0)
    while (remaining > 0) {
      const rows = this.page(after, Math.min(this.pageSize, remaining), backwards)
      for (const row of rows) yield toRecorded(fromLogRow(row))
      if (rows.length === 0) return
      remaining -= rows.length
      const last = rows[rows.length - 1]
      if (last === undefined) return
      after = last[0]
    }
  }

  private page(after: number, limit: number, backwards = false): LogRow[] {
    return backwards ? this.statements.allBackwards.all(after, limit) : this.statements.allForwards.all(after, limit)
  }

  /**
   * The next page after `after` of the given types only, and how far it
   * looked: up to the head read first when the page is not full (rows up to
   * a committed head never appear later), so a subscription to rare types
   * does not scan the same stretch of other events again on every wake.
   */
  private typedPage(after: number, types: string): { rows: LogRow[]; through: number } {
    const head = this.statements.head.get()?.head ?? 0
    const rows = this.statements.typedForwards.all(after, head, types, this.pageSize)
    const last = rows.at(-1)
    return { rows, through: rows.length < this.pageSize || last === undefined ? Math.max(after, head) : last[0] }
  }

  /** The next page of the log after `after` (of the given types only, as JSON, when given), each row parsed as it is taken. */
  private logPage(after: number, types: string | null): { events: Iterable<RecordedEvent>; through: number } {
    const { rows, through } = types === null ? { rows: this.page(after, this.pageSize), through: after } : this.typedPage(after, types)
    return { events: recordedFrom(rows), through }
  }

  subscribe(after: number, options: { types?: readonly string[] } = {}): EventSubscription {
    this.assertOpen()
    const types = options.types === undefined ? null : JSON.stringify(options.types)
    const typeSet = options.types === undefined ? null : new Set(options.types)
    let position = after
    let active = true
    let wake: (() => void) | undefined
    const stop = () => {
      active = false
      wake?.()
    }
    this.openSubscriptions.add(stop)
    const notified = this.appended.subscribe(() => wake?.())
    const waitForMore = () =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(done, this.pollIntervalMs)
        function done() {
          clearTimeout(timer)
          wake = undefined
          resolve()
        }
        wake = done
      })
    const store = this
    async function* iterate(): AsyncGenerator<RecordedEvent> {
      try {
        const ahead = typeSet === null ? store.readAhead(position) : null
        if (ahead !== null) {
          try {
            for (let rows = await ahead.next(); rows !== null; rows = await ahead.next()) {
              for (const row of rows) {
                if (!active) return
                position = row[0]
                yield toRecorded(fromParsedRow(row))
              }
            }
          } catch {
            // The thread failed (it could not open the file, or died): the rest is read here, from the last event handed out.
          } finally {
            await ahead.close()
          }
        }
        while (active) {
          const { events, through } = store.closed ? { events: [], through: position }
            : store.recent(position, typeSet) ?? store.logPage(position, types)
          let yielded = 0
          for (const event of events) {
            if (!active) return
            position = event.position
            yielded += 1
            yield event
          }
          if (yielded === 0 || through > position) {
            position = Math.max(position, through)
            if (yielded === 0) await waitForMore()
          }
        }
      } finally {
        notified.unsubscribe()
        store.openSubscriptions.delete(stop)
      }
    }
    const iterator = iterate()
    return {
      [Symbol.asyncIterator]: () => iterator,
      close: async () => {
        stop()
        await iterator.return(undefined)
      },
    }
  }

  /** A thread reading the log ahead for a subscription starting this far behind the head, or null. */
  private readAhead(after: number): LogReadAhead | null {
    if (this.readAheadFrom === 0 || this.closed) return null
    const head = this.statements.head.get()?.head ?? 0
    if (head - after < this.readAheadFrom) return null
    const ahead = new LogReadAhead(this.file, after, head, this.pageSize, () => this.readAheads.delete(ahead))
    this.readAheads.add(ahead)
    return ahead
  }

  /** How many subscriptions are reading the log ahead in a thread right now. */
  get readAheadThreads(): number {
    return this.readAheads.size
  }

  subscribeToAll(after: number) {
    return subscriptionToObservable(() => this.subscribe(after))
  }

  async headPosition(): Promise<number> {
    this.assertOpen()
    return this.statements.head.get()?.head ?? 0
  }

  async streamRevision(streamId: string): Promise<number | 'no_stream'> {
    this.assertOpen()
    return this.statements.streamRevision.get(streamId)?.revision ?? 'no_stream'
  }

  async ping(): Promise<void> {
    this.assertOpen()
    this.statements.head.get()
  }

  async close(): Promise<void> {
    if (this.closed) return
    await this.flushing
    this.closed = true
    this.tail?.clear()
    for (const stop of [...this.openSubscriptions]) stop()
    // A subscription whose consumer stopped pulling never gets to end its thread itself.
    await Promise.all([...this.readAheads].map((ahead) => ahead.close()))
    this.appended.complete()
    await this.writer.close()
    this.db.close()
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('event store is closed')
  }
}

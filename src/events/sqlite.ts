import Database from 'better-sqlite3'
import fs from 'node:fs'
import path from 'node:path'
import { Subject } from 'rxjs'
import { subscriptionToObservable } from './observable.js'
import { toRecorded, type StoredEvent } from './serialization.js'
import { WrongExpectedRevisionError, type EventStore, type EventSubscription } from './store.js'
import type { RecordedEvent } from './catalogue.js'
import type { AppendResult, EventMetadata, ExpectedRevision, NewEvent, ReadAllOptions, ReadStreamOptions } from './types.js'

interface Row {
  position: number
  stream_id: string
  revision: number
  id: string
  type: string
  data: string
  metadata: string
  recorded_at: string
}

interface PendingAppend {
  streamId: string
  events: NewEvent[]
  expected: ExpectedRevision
  resolve(result: AppendResult): void
  reject(error: unknown): void
}

/** Most appends committed together in one transaction (one fsync). */
const MAX_GROUP = 256

export interface SqliteEventStoreOptions {
  /** File path, or ':memory:'. */
  file: string
  synchronous?: 'FULL' | 'NORMAL'
  /** How often a waiting subscription looks for events appended by another process. */
  pollIntervalMs?: number
  pageSize?: number
}

const parseMetadata = (text: string): EventMetadata => JSON.parse(text)

const toStored = (row: Row): StoredEvent => ({
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
 * The embedded event store: one SQLite table in WAL mode whose rowid is the
 * global position. Expected-revision checks and the append run in one
 * immediate transaction, so concurrent writers (other processes included) are
 * serialized by SQLite and a conflict is reported exactly as EventStoreDB does.
 *
 * Group commit: appends that arrive in the same event-loop turn share one
 * transaction, and so one fsync; each runs in its own savepoint, so a refused
 * append changes nothing and never affects the others. Every caller is
 * answered after the shared commit, so an acknowledged append is durable.
 */
export class SqliteEventStore implements EventStore {
  readonly kind = 'sqlite' as const
  private readonly db: Database.Database
  private readonly appended = new Subject<number>()
  private readonly pollIntervalMs: number
  private readonly pageSize: number
  private readonly openSubscriptions = new Set<() => void>()
  private closed = false
  private readonly statements
  private readonly appendOne: Database.Transaction<(streamId: string, events: NewEvent[], expected: ExpectedRevision) => AppendResult>
  private readonly appendGroup: Database.Transaction<(group: PendingAppend[]) => Array<AppendResult | { error: unknown }>>
  private pending: PendingAppend[] = []
  private flushScheduled = false

  constructor(options: SqliteEventStoreOptions) {
    if (options.file !== ':memory:') fs.mkdirSync(path.dirname(options.file), { recursive: true })
    this.db = new Database(options.file)
    this.db.pragma('journal_mode = WAL')
    this.db.pragma(`synchronous = ${options.synchronous ?? 'FULL'}`)
    this.db.pragma('busy_timeout = 5000')
    this.db.exec(`
      CREATE TABLE IF NOT EXISTS events (
        position INTEGER PRIMARY KEY,
        stream_id TEXT NOT NULL,
        revision INTEGER NOT NULL,
        id TEXT NOT NULL UNIQUE,
        type TEXT NOT NULL,
        data TEXT NOT NULL,
        metadata TEXT NOT NULL,
        recorded_at TEXT NOT NULL,
        UNIQUE (stream_id, revision)
      )`)
    this.pollIntervalMs = options.pollIntervalMs ?? 200
    this.pageSize = options.pageSize ?? 1000
    this.statements = {
      streamRevision: this.db.prepare<[string], { revision: number }>(
        'SELECT revision FROM events WHERE stream_id = ? ORDER BY revision DESC LIMIT 1'),
      byId: this.db.prepare<[string], Row>('SELECT * FROM events WHERE id = ?'),
      insert: this.db.prepare<[string, number, string, string, string, string, string]>(
        'INSERT INTO events (stream_id, revision, id, type, data, metadata, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?)'),
      streamForwards: this.db.prepare<[string, number, number], Row>(
        'SELECT * FROM events WHERE stream_id = ? AND revision >= ? ORDER BY revision ASC LIMIT ?'),
      streamBackwards: this.db.prepare<[string, number, number], Row>(
        'SELECT * FROM events WHERE stream_id = ? AND revision <= ? ORDER BY revision DESC LIMIT ?'),
      allForwards: this.db.prepare<[number, number], Row>(
        'SELECT * FROM events WHERE position > ? ORDER BY position ASC LIMIT ?'),
      allBackwards: this.db.prepare<[number, number], Row>(
        'SELECT * FROM events WHERE position < ? ORDER BY position DESC LIMIT ?'),
      head: this.db.prepare<[], { head: number | null }>('SELECT MAX(position) AS head FROM events'),
    }
    // Nested inside appendGroup, better-sqlite3 runs this as a savepoint.
    this.appendOne = this.db.transaction((streamId: string, events: NewEvent[], expected: ExpectedRevision) =>
      this.appendInTransaction(streamId, events, expected))
    this.appendGroup = this.db.transaction((group: PendingAppend[]) =>
      group.map((item) => {
        try {
          return this.appendOne(item.streamId, item.events, item.expected)
        } catch (error) {
          return { error }
        }
      }))
  }

  async append(streamId: string, events: NewEvent[], expectedRevision: ExpectedRevision): Promise<AppendResult> {
    this.assertOpen()
    if (events.length === 0) throw new Error('append needs at least one event')
    return new Promise<AppendResult>((resolve, reject) => {
      this.pending.push({ streamId, events, expected: expectedRevision, resolve, reject })
      if (!this.flushScheduled) {
        this.flushScheduled = true
        setImmediate(() => this.flush())
      }
    })
  }

  private flush(): void {
    this.flushScheduled = false
    while (this.pending.length > 0) {
      const group = this.pending.splice(0, MAX_GROUP)
      if (this.closed) {
        for (const item of group) item.reject(new Error('event store is closed'))
        continue
      }
      let outcomes: Array<AppendResult | { error: unknown }>
      try {
        outcomes = this.appendGroup.immediate(group)
      } catch (error) {
        for (const item of group) item.reject(error)
        continue
      }
      let head = 0
      for (const [index, item] of group.entries()) {
        const outcome = outcomes[index]
        if (outcome === undefined || 'error' in outcome) {
          item.reject(outcome?.error ?? new Error('append lost'))
        } else {
          head = Math.max(head, outcome.position)
          item.resolve(outcome)
        }
      }
      if (head > 0) this.appended.next(head)
    }
  }

  private appendInTransaction(streamId: string, events: NewEvent[], expected: ExpectedRevision): AppendResult {
    const current = this.statements.streamRevision.get(streamId)?.revision
    const repeated = this.repeatedAppend(streamId, events)
    if (repeated !== undefined) return repeated
    const actual: number | 'no_stream' = current ?? 'no_stream'
    const ok =
      expected === 'any' ||
      (expected === 'no_stream' && current === undefined) ||
      (expected === 'stream_exists' && current !== undefined) ||
      (typeof expected === 'number' && current === expected)
    if (!ok) throw new WrongExpectedRevisionError(streamId, expected, actual)
    let revision = current ?? -1
    let position = 0
    for (const event of events) {
      revision += 1
      const info = this.statements.insert.run(
        streamId, revision, event.id, event.type, JSON.stringify(event.data), JSON.stringify(event.metadata), event.metadata.occurredAt)
      position = Number(info.lastInsertRowid)
    }
    return { revision, position }
  }

  /** EventStoreDB treats a re-sent append (same event ids, same stream) as done; so does this store. */
  private repeatedAppend(streamId: string, events: NewEvent[]): AppendResult | undefined {
    const first = events[0]
    if (first === undefined) return undefined
    const existing = this.statements.byId.get(first.id)
    if (existing === undefined) return undefined
    let last: Row = existing
    for (const [index, event] of events.entries()) {
      const row = this.statements.byId.get(event.id)
      if (row === undefined || row.stream_id !== streamId || row.revision !== existing.revision + index) {
        throw new WrongExpectedRevisionError(streamId, 'no_stream', existing.revision)
      }
      last = row
    }
    return { revision: last.revision, position: last.position }
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
      for (const row of rows) yield toRecorded(toStored(row))
      if (rows.length < limit) return
      remaining -= rows.length
      const last = rows[rows.length - 1]
      if (last === undefined) return
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
      for (const row of rows) yield toRecorded(toStored(row))
      if (rows.length === 0) return
      remaining -= rows.length
      const last = rows[rows.length - 1]
      if (last === undefined) return
      after = last.position
    }
  }

  private page(after: number, limit: number, backwards = false): Row[] {
    return backwards ? this.statements.allBackwards.all(after, limit) : this.statements.allForwards.all(after, limit)
  }

  subscribe(after: number): EventSubscription {
    this.assertOpen()
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
        while (active) {
          const rows = store.closed ? [] : store.page(position, store.pageSize)
          if (rows.length === 0) {
            await waitForMore()
            continue
          }
          for (const row of rows) {
            if (!active) return
            position = row.position
            yield toRecorded(toStored(row))
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
    this.closed = true
    for (const stop of [...this.openSubscriptions]) stop()
    this.appended.complete()
    this.db.close()
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('event store is closed')
  }
}

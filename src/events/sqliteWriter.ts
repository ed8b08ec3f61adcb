import type Database from 'better-sqlite3'
import { errorMessage } from '../shared/errors.js'
import type { EventRow } from './sqliteSchema.js'
import type { AppendResult, ExpectedRevision } from './types.js'

/** One append as it crosses to the writer: data and metadata already JSON text. */
export interface WriteRequest {
  streamId: string
  expected: ExpectedRevision
  events: Array<{ id: string; type: string; data: string; metadata: string; recordedAt: string }>
}

export type WriteOutcome =
  /** `inserted` is false for a re-sent append, whose events were already in the log. */
  | { ok: AppendResult; inserted: boolean }
  | { wrongExpected: { expected: ExpectedRevision; actual: number | 'no_stream' } }
  | { failed: string }

class RefusedAppend extends Error {
  constructor(readonly actual: number | 'no_stream') {
    super('wrong expected revision')
  }
}

/**
 * The write side of the embedded log, synchronous: a group of appends runs in
 * one transaction (one fsync), each in its own savepoint, so a refused or
 * failing append changes nothing and never affects the others.
 */
export class SqliteWriter {
  private readonly statements
  private readonly appendOne: Database.Transaction<(request: WriteRequest) => { ok: AppendResult; inserted: boolean }>
  private readonly appendGroup: Database.Transaction<(group: WriteRequest[]) => WriteOutcome[]>

  constructor(db: Database.Database) {
    this.statements = {
      streamRevision: db.prepare<[string], { revision: number }>('SELECT revision FROM events WHERE stream_id = ? ORDER BY revision DESC LIMIT 1'),
      byId: db.prepare<[string], EventRow>('SELECT * FROM events WHERE id = ?'),
      insert: db.prepare<[string, number, string, string, string, string, string]>(
        'INSERT INTO events (stream_id, revision, id, type, data, metadata, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?)'),
    }
    // Nested inside appendGroup, better-sqlite3 runs this as a savepoint.
    this.appendOne = db.transaction((request: WriteRequest) => this.appendInTransaction(request))
    this.appendGroup = db.transaction((group: WriteRequest[]) =>
      group.map((request): WriteOutcome => {
        try {
          return this.appendOne(request)
        } catch (error) {
          if (error instanceof RefusedAppend) return { wrongExpected: { expected: request.expected, actual: error.actual } }
          return { failed: errorMessage(error) }
        }
      }))
  }

  commit(group: WriteRequest[]): WriteOutcome[] {
    return this.appendGroup.immediate(group)
  }

  private appendInTransaction(request: WriteRequest): { ok: AppendResult; inserted: boolean } {
    const repeated = this.repeatedAppend(request)
    if (repeated !== undefined) return { ok: repeated, inserted: false }
    const current = this.statements.streamRevision.get(request.streamId)?.revision
    const expected = request.expected
    const ok =
      expected === 'any' ||
      (expected === 'no_stream' && current === undefined) ||
      (expected === 'stream_exists' && current !== undefined) ||
      (typeof expected === 'number' && current === expected)
    if (!ok) throw new RefusedAppend(current ?? 'no_stream')
    let revision = current ?? -1
    let position = 0
    for (const event of request.events) {
      revision += 1
      const info = this.statements.insert.run(request.streamId, revision, event.id, event.type, event.data, event.metadata, event.recordedAt)
      position = Number(info.lastInsertRowid)
    }
    return { ok: { revision, position }, inserted: true }
  }

  /** EventStoreDB treats a re-sent append (same event ids, same stream) as done; so does this store. */
  private repeatedAppend(request: WriteRequest): AppendResult | undefined {
    const first = request.events[0]
    if (first === undefined) return undefined
    const existing = this.statements.byId.get(first.id)
    if (existing === undefined) return undefined
    let last: EventRow = existing
    for (const [index, event] of request.events.entries()) {
      const row = this.statements.byId.get(event.id)
      if (row === undefined || row.stream_id !== request.streamId || row.revision !== existing.revision + index) {
        throw new RefusedAppend(existing.revision)
      }
      last = row
    }
    return { revision: last.revision, position: last.position }
  }
}

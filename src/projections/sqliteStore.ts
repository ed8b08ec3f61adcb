import Database from 'better-sqlite3'
import fs from 'node:fs'
import path from 'node:path'
import { Query } from 'mingo'
import { compileFilter } from './memoryFilter.js'
import { specOf, type CollectionSpec, type Filter, type FindOptions, type ReadCollection, type ReadDocument, type ReadStore } from './readStore.js'
import { after, orderBy, orderKeys, pushdown, type OrderKey, type Pushdown } from './sqlitePushdown.js'
import { createMetadata, Table } from './sqliteTables.js'

export interface SqliteReadStoreOptions {
  /** The database file (':memory:' for tests). */
  file: string
  /** Writes after which the open transaction is committed. */
  commitEvery?: number
  /** Longest time a write waits in the open transaction before it is committed. */
  commitAfterMs?: number
  /** Documents read per query while streaming. */
  pageSize?: number
}

/** Documents come back exactly as a projection put them (parsed from the JSON written by put). */
const parse = <T>(text: unknown): T => JSON.parse(String(text)) as T

/** The whole filter in JavaScript, as the embedded memory store evaluates it: the compiled predicate, mingo where it cannot answer. */
const matcherOf = (filter: Filter): ((doc: ReadDocument) => boolean) => {
  const fast = compileFilter(filter)
  let query: Query | undefined
  const full = (doc: ReadDocument) => (query ??= new Query(filter)).test(doc as unknown as Record<string, unknown>)
  if (fast === null) return full
  return (doc) => fast(doc) ?? full(doc)
}

type Row = [rowid: number, doc: string, ...keys: unknown[]]

interface Plan {
  push: Pushdown
  /** SQL order (empty: rowid), or null when JavaScript sorts. */
  keys: OrderKey[] | null
}

class SqliteCollection<T extends ReadDocument> implements ReadCollection<T> {
  constructor(private readonly store: SqliteReadStore, private readonly spec: CollectionSpec) {}

  private table(): Table {
    return this.store.table(this.spec)
  }

  async get(id: string): Promise<T | null> {
    const text: unknown = this.store.statement(`SELECT doc FROM ${this.table().identifier} WHERE _id = ?`).pluck().get(id)
    return text === undefined ? null : parse<T>(text)
  }

  async findOne(filter: Filter): Promise<T | null> {
    for await (const doc of this.stream(filter, { limit: 1 })) return doc
    return null
  }

  async find(filter: Filter, options: FindOptions = {}): Promise<T[]> {
    const found: T[] = []
    for await (const doc of this.stream(filter, options)) found.push(doc)
    return found
  }

  async *stream(filter: Filter, options: FindOptions = {}): AsyncIterable<T> {
    const table = this.table()
    const plan = this.plan(table, filter, options)
    if (plan.keys === null) {
      yield* this.sortedInJavaScript(filter, options)
      return
    }
    const matches = matcherOf(filter)
    let skip = options.skip ?? 0
    let left = options.limit ?? Number.POSITIVE_INFINITY
    // Skip and limit go to SQL only when it selects exactly the matching documents.
    let offset = plan.push.exact ? skip : 0
    if (plan.push.exact) skip = 0
    // An order no index gives would make SQLite sort the whole match set for every page: then one query reads it all.
    const whole = plan.keys.length > 0 && this.store.sortsWholeMatch(table, plan.push, plan.keys)
    let last: Row | undefined
    while (left > 0) {
      const size = whole ? (plan.push.exact && Number.isFinite(left) ? left : -1) : plan.push.exact ? Math.min(this.store.pageSize, left) : this.store.pageSize
      const rows = this.store.page(table, plan.push, plan.keys, last, size, offset)
      offset = 0
      for (const row of rows) {
        const doc = parse<T>(row[1])
        if (!matches(doc)) continue
        if (skip > 0) { skip -= 1; continue }
        yield doc
        if (--left <= 0) return
      }
      if (whole || rows.length < size) return
      last = rows[rows.length - 1]
    }
  }

  async count(filter: Filter = {}): Promise<number> {
    const table = this.table()
    const push = pushdown(filter, (field) => table.isPlain(field))
    if (push.exact) return Number(this.store.statement(`SELECT count(*) FROM ${table.identifier} WHERE ${push.where}`).pluck().get(...push.params))
    let n = 0
    for await (const _doc of this.stream(filter)) n += 1
    return n
  }

  async put(doc: T): Promise<void> {
    const table = this.table()
    this.store.write(() => {
      table.noteWrite(doc)
      // An update in place keeps the row (and its place in rowid order), as a replacement does in the memory store.
      this.store.statement(`INSERT INTO ${table.identifier} (_id, doc) VALUES (?, ?) ON CONFLICT (_id) DO UPDATE SET doc = excluded.doc`)
        .run(doc._id, JSON.stringify(doc))
    })
  }

  async delete(id: string): Promise<void> {
    const table = this.table()
    this.store.write(() => this.store.statement(`DELETE FROM ${table.identifier} WHERE _id = ?`).run(id))
  }

  async deleteMany(filter: Filter): Promise<number> {
    const table = this.table()
    const push = pushdown(filter, (field) => table.isPlain(field))
    if (push.exact) return this.store.write(() => this.store.statement(`DELETE FROM ${table.identifier} WHERE ${push.where}`).run(...push.params).changes)
    const doomed: string[] = []
    for await (const doc of this.stream(filter)) doomed.push(doc._id)
    for (const id of doomed) await this.delete(id)
    return doomed.length
  }

  private plan(table: Table, filter: Filter, options: FindOptions): Plan {
    const plain = (field: string) => table.isPlain(field)
    return { push: pushdown(filter, plain), keys: options.sort === undefined ? [] : orderKeys(options.sort, plain) }
  }

  /** A sort SQL cannot do exactly (a field not known to be plain): every match is gathered and sorted as MongoDB would. */
  private async *sortedInJavaScript(filter: Filter, options: FindOptions): AsyncIterable<T> {
    const matching: T[] = []
    for await (const doc of this.stream(filter)) matching.push(doc)
    const sorted = new Query({}).find<T>(matching).sort(options.sort ?? {}).all()
    const from = options.skip ?? 0
    yield* sorted.slice(from, options.limit === undefined ? undefined : from + options.limit)
  }
}

/**
 * The persistent embedded read store: one SQLite table per collection in
 * DATA_DIR/read-store.sqlite, documents as JSON text, so read models larger
 * than memory stay on disk. Queries push down to SQL what translates exactly
 * (sqlitePushdown.ts) and every document read is checked against the whole
 * filter in JavaScript, so results are the memory and MongoDB stores'.
 *
 * Writes go into one open transaction, committed after `commitEvery` writes,
 * `commitAfterMs` after the first one, and at close. Checkpoints are written in
 * the same transaction after the documents they cover, so a crash can lose
 * recent writes but never leaves a checkpoint ahead of its documents: the
 * projections, idempotent by position, redo the lost events at start.
 */
export class SqliteReadStore implements ReadStore {
  readonly kind = 'sqlite' as const
  readonly persistent = true
  readonly pageSize: number
  private readonly db: Database.Database
  private readonly statements = new Map<string, Database.Statement>()
  private readonly tables = new Map<string, Table>()
  /** Whether a page query in rowid order needs the table scanned without an index (an index would sort the whole match set per page). */
  private readonly scanPlans = new Map<string, boolean>()
  private readonly commitEvery: number
  private readonly commitAfterMs: number
  private pending = 0
  private timer: NodeJS.Timeout | undefined

  constructor(options: SqliteReadStoreOptions) {
    if (options.file !== ':memory:') fs.mkdirSync(path.dirname(options.file), { recursive: true })
    this.db = new Database(options.file)
    this.db.pragma('journal_mode = WAL')
    this.db.pragma('synchronous = NORMAL')
    this.db.pragma('cache_size = -16384')
    this.commitEvery = options.commitEvery ?? 1000
    this.commitAfterMs = options.commitAfterMs ?? 50
    this.pageSize = options.pageSize ?? 1000
    createMetadata(this.db)
  }

  collection<T extends ReadDocument>(spec: CollectionSpec | string): ReadCollection<T> {
    const full = specOf(spec)
    this.table(full)
    return new SqliteCollection<T>(this, full)
  }

  /** The collection's table, created (with its indexes) on first use and after a drop. */
  table(spec: CollectionSpec): Table {
    let table = this.tables.get(spec.name)
    if (table === undefined) {
      table = new Table(this.db, spec.name)
      this.tables.set(spec.name, table)
    }
    table.declare(spec)
    return table
  }

  statement(sql: string): Database.Statement {
    let statement = this.statements.get(sql)
    if (statement === undefined) {
      statement = this.db.prepare(sql)
      this.statements.set(sql, statement)
    }
    return statement
  }

  /** Runs a write inside the open transaction (opening one), committing when enough writes or time have gathered. */
  write<R>(work: () => R): R {
    if (!this.db.inTransaction) this.db.exec('BEGIN')
    const result = work()
    if (++this.pending >= this.commitEvery) this.commit()
    else this.timer ??= setTimeout(() => this.commit(), this.commitAfterMs).unref()
    return result
  }

  /** Commits the open transaction, if any. */
  commit(): void {
    clearTimeout(this.timer)
    this.timer = undefined
    this.pending = 0
    if (this.db.inTransaction) this.db.exec('COMMIT')
  }

  /**
   * One page of a keyset-paginated read: the rows after `last` in the plan's
   * order (then rowid). Each page is a complete query, so no statement stays
   * open on the connection while the caller awaits between pages.
   */
  page(table: Table, push: Pushdown, keys: readonly OrderKey[], last: Row | undefined, limit: number, offset: number): Row[] {
    const past = last === undefined ? null : after(keys, last.slice(2), last[0])
    const where = past === null ? push.where : `(${push.where}) AND (${past.sql})`
    const params = [...push.params, ...(past?.params ?? []), limit, offset]
    const scan = keys.length === 0 && this.sortsWholeMatch(table, push, keys)
    return this.statement(this.select(table, where, keys, scan)).raw().all(...params) as Row[]
  }

  private select(table: Table, where: string, keys: readonly OrderKey[], withoutIndex: boolean): string {
    const columns = ['rowid', 'doc', ...keys.map((key) => key.expression)].join(', ')
    return `SELECT ${columns} FROM ${table.identifier}${withoutIndex ? ' NOT INDEXED' : ''} WHERE ${where} ORDER BY ${orderBy(keys)} LIMIT ? OFFSET ?`
  }

  /**
   * Whether SQLite would sort the whole match set to answer a page in this
   * order (no index gives it). In rowid order the table is then scanned
   * without an index instead, which reads it in that order.
   */
  sortsWholeMatch(table: Table, push: Pushdown, keys: readonly OrderKey[]): boolean {
    const sql = this.select(table, push.where, keys, false)
    let sorts = this.scanPlans.get(sql)
    if (sorts === undefined) {
      const plan = this.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...push.params, 1, 0) as Array<{ detail: string }>
      sorts = plan.some((step) => step.detail.includes('TEMP B-TREE'))
      this.scanPlans.set(sql, sorts)
    }
    return sorts
  }

  async getCheckpoint(projection: string): Promise<number> {
    const position: unknown = this.statement('SELECT position FROM _checkpoints WHERE name = ?').pluck().get(projection)
    return typeof position === 'number' ? position : 0
  }

  async setCheckpoint(projection: string, position: number): Promise<void> {
    this.write(() => this.statement('INSERT INTO _checkpoints (name, position) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET position = excluded.position')
      .run(projection, position))
  }

  async drop(collections: readonly string[]): Promise<void> {
    this.write(() => {
      for (const name of collections) {
        (this.tables.get(name) ?? new Table(this.db, name)).drop()
        this.tables.delete(name)
      }
    })
    this.statements.clear()
    this.scanPlans.clear()
  }

  async ping(): Promise<void> {
    this.statement('SELECT 1').get()
  }

  async close(): Promise<void> {
    if (!this.db.open) return
    this.commit()
    this.db.close()
  }
}

import Database from 'better-sqlite3'
import fs from 'node:fs'
import path from 'node:path'
import { documentMatcher, sortDocuments } from './documentQuery.js'
import { specOf, withMongoLimit, type CollectionSpec, type Filter, type FindOptions, type ReadCollection, type ReadDocument, type ReadStore } from './readStore.js'
import { after, conjunction, orderBy, orderKeys, pushdown, type OrderKey, type Pushdown } from './sqlitePushdown.js'
import { createMetadata, quote, Table } from './sqliteTables.js'
import { AppError, errorMessage } from '../shared/errors.js'

export interface SqliteReadStoreOptions {
  /** The database file (':memory:' for tests). */
  file: string
  /**
   * Writes after which the open transaction is committed (5,000 unless given).
   * Live writes commit after `commitAfterMs` long before; this bounds a
   * catch-up's batch, whose documents wait as objects until then.
   */
  commitEvery?: number
  /** Longest time a write waits in the open transaction before it is committed. */
  commitAfterMs?: number
  /** Documents read per query while streaming. */
  pageSize?: number
}

/** Documents come back exactly as a projection put them (parsed from the JSON written by put). */
const parse = <T>(text: unknown): T => JSON.parse(String(text)) as T

type Row = [rowid: number, doc: string, ...keys: unknown[]]

/** What EXPLAIN QUERY PLAN says of a query: the index it reads (if any), whether that index alone answers, whether it sorts the whole match. */
interface QueryPlan {
  index: string | undefined
  covering: boolean
  sorts: boolean
}

/** The next page of documents, or null when there are no more. */
type Pager<T> = () => T[] | null

const drain = <T>(pager: Pager<T>): T[] => {
  const all: T[] = []
  for (let page = pager(); page !== null; page = pager()) for (const doc of page) all.push(doc)
  return all
}

/** Hands out a pager's documents one by one; cheaper per document than an async generator, which matters over a million. */
class PageIterator<T> implements AsyncIterator<T> {
  private page: T[] = []
  private index = 0
  private done = false

  constructor(private readonly pager: Pager<T>) {}

  next(): Promise<IteratorResult<T>> {
    while (this.index >= this.page.length && !this.done) {
      const page = this.pager()
      if (page === null) this.done = true
      else {
        this.page = page
        this.index = 0
      }
    }
    if (this.done && this.index >= this.page.length) return Promise.resolve({ done: true, value: undefined })
    const value = this.page[this.index] as T
    this.index += 1
    return Promise.resolve({ done: false, value })
  }

  return(): Promise<IteratorResult<T>> {
    this.done = true
    this.page = []
    return Promise.resolve({ done: true, value: undefined })
  }
}

/** How a query reads, for diagnostics and for the tests that keep each list on an index. */
export interface QueryExplanation {
  /** SQL selects exactly the matching documents (skip, limit and counts go to SQL). */
  exact: boolean
  /** Every match is gathered and sorted in JavaScript (a sort on a field SQL cannot order exactly). */
  sortedInJavaScript: boolean
  /** EXPLAIN QUERY PLAN of a page's query (empty when JavaScript sorts). */
  find: string[]
  /** EXPLAIN QUERY PLAN of the count (empty when the count tests documents in JavaScript). */
  count: string[]
}

interface Plan {
  push: Pushdown
  /** SQL order (empty: rowid), or null when JavaScript sorts. */
  keys: OrderKey[] | null
  /** Pages read the table in rowid order without an index. */
  scan: boolean
}

class SqliteCollection<T extends ReadDocument> implements ReadCollection<T> {
  constructor(private readonly store: SqliteReadStore, private readonly spec: CollectionSpec) {}

  private table(): Table {
    return this.store.table(this.spec)
  }

  async get(id: string): Promise<T | null> {
    const table = this.table()
    const pending = this.store.pendingOf(table, id)
    if (pending !== undefined) return pending as T | null
    const text: unknown = this.store.statement(`SELECT doc FROM ${table.identifier} WHERE _id = ?`).pluck().get(id)
    return text === undefined ? null : parse<T>(text)
  }

  async findOne(filter: Filter): Promise<T | null> {
    // A page of candidates may hold no match when SQL does not select exactly: the next may.
    const pager = this.pager(filter, { limit: 1 })
    for (let page = pager(); page !== null; page = pager()) if (page.length > 0) return page[0] ?? null
    return null
  }

  async find(filter: Filter, options: FindOptions = {}): Promise<T[]> {
    return drain(this.pager(filter, options))
  }

  stream(filter: Filter, options: FindOptions = {}): AsyncIterable<T> {
    // A page is read when the consumer asks for it, so no query stays open on the connection while the consumer awaits.
    return { [Symbol.asyncIterator]: () => new PageIterator(this.pager(filter, options)) }
  }

  /**
   * The matching documents, a page per call (null once there are no more):
   * SQL selects by the pushed-down filter in keyset pages, every document is
   * checked against the whole filter, then skipped or counted for the limit.
   */
  private pager(filter: Filter, given: FindOptions): Pager<T> {
    const options = withMongoLimit(given)
    const table = this.table()
    this.store.flush(table)
    const plan = this.plan(table, filter, options)
    if (plan.keys === null) return this.sortedInJavaScript(filter, options)
    const { keys, scan } = plan
    let { push } = plan
    // A write between pages can move a field to a kind that reads differently (element rows dropped): later pages ask again.
    let generation = table.generation
    const matches = documentMatcher(filter)
    // Skip and limit go to SQL only when it selects exactly the matching documents.
    let skip = push.exact ? 0 : options.skip ?? 0
    let offset = push.exact ? options.skip ?? 0 : 0
    let left = options.limit ?? Number.POSITIVE_INFINITY
    // An order no index gives would make SQLite sort the whole match set for every page: then one query reads it all.
    const whole = keys.length > 0 && this.store.sortsWholeMatch(table, push, keys)
    let last: Row | undefined
    let finished = false
    return () => {
      if (finished || left <= 0) return null
      if (table.generation !== generation) {
        generation = table.generation
        push = pushdown(filter, table)
      }
      const size = whole ? (push.exact && Number.isFinite(left) ? left : -1) : push.exact ? Math.min(this.store.pageSize, left) : this.store.pageSize
      const rows = this.store.page(table, { push, keys, scan }, last, size, offset)
      offset = 0
      finished = whole || rows.length < size
      last = rows[rows.length - 1]
      const docs: T[] = []
      for (const row of rows) {
        const doc = parse<T>(row[1])
        if (!matches(doc)) continue
        if (skip > 0) { skip -= 1; continue }
        docs.push(doc)
        if (--left <= 0) break
      }
      return docs
    }
  }

  async count(filter: Filter = {}): Promise<number> {
    const table = this.table()
    this.store.flush(table)
    const push = pushdown(filter, table)
    if (push.exact) return this.store.count(table, push)
    let n = 0
    for await (const _doc of this.stream(filter)) n += 1
    return n
  }

  async put(doc: T): Promise<void> {
    this.store.defer(this.table(), doc._id, doc)
  }

  async delete(id: string): Promise<void> {
    this.store.defer(this.table(), id, null)
  }

  async deleteMany(filter: Filter): Promise<number> {
    const table = this.table()
    this.store.flush(table)
    const push = pushdown(filter, table)
    if (push.exact) return this.store.write(() => this.store.statement(`DELETE FROM ${table.identifier} WHERE ${push.where}`).run(...push.params).changes)
    const doomed: string[] = []
    for await (const doc of this.stream(filter)) doomed.push(doc._id)
    for (const id of doomed) await this.delete(id)
    return doomed.length
  }

  /** How `find` and `count` read for this filter and these options (see SqliteReadStore.explainQuery). */
  explain(filter: Filter, options: FindOptions = {}): QueryExplanation {
    const table = this.table()
    this.store.flush(table)
    const plan = this.plan(table, filter, options)
    return {
      exact: plan.push.exact,
      sortedInJavaScript: plan.keys === null,
      find: plan.keys === null ? [] : this.store.planOf(table, { push: plan.push, keys: plan.keys, scan: plan.scan }),
      count: plan.push.exact ? this.store.countPlanOf(table, plan.push) : [],
    }
  }

  private plan(table: Table, filter: Filter, options: FindOptions): Plan {
    const push = pushdown(filter, table)
    if (options.sort !== undefined) return { push, keys: orderKeys(options.sort, (field) => table.column(field)), scan: false }
    // No order asked for: pages follow whichever order reads the match cheapest.
    return { push, ...this.store.access(table, push, push.exact && options.limit !== undefined) }
  }

  /** A sort SQL cannot do exactly (a field not known to be plain): every match is gathered and sorted as MongoDB would. */
  private sortedInJavaScript(filter: Filter, options: FindOptions): Pager<T> {
    let done = false
    return () => {
      if (done) return null
      done = true
      const matching = drain(this.pager(filter, {}))
      const sorted = options.sort === undefined ? matching : sortDocuments(matching, options.sort)
      const from = options.skip ?? 0
      return sorted.slice(from, options.limit === undefined ? undefined : from + options.limit)
    }
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
 *
 * A document put or deleted waits as an object until the table is queried or
 * the transaction commits (reads by id see it at once): a projection changes
 * the same document several times within a batch (an order created, approved
 * and applied; a webhook send started and completed), and each change written
 * as JSON to SQL cost more than the event's projection itself.
 */
export class SqliteReadStore implements ReadStore {
  readonly kind = 'sqlite' as const
  readonly persistent = true
  readonly pageSize: number
  private readonly db: Database.Database
  private readonly statements = new Map<string, Database.Statement>()
  private readonly tables = new Map<string, Table>()
  /** What EXPLAIN QUERY PLAN said of each query. */
  private readonly plans = new Map<string, QueryPlan>()
  private readonly commitEvery: number
  private readonly commitAfterMs: number
  private pending = 0
  private timer: NodeJS.Timeout | undefined
  /** Documents put (or deleted: null) since their table was last written, by table; at most `commitEvery` in all. */
  private readonly deferred = new Map<Table, Map<string, ReadDocument | null>>()
  /** The write that failed, after which the store answers nothing (see failing). */
  private failure: unknown

  constructor(options: SqliteReadStoreOptions) {
    if (options.file !== ':memory:') fs.mkdirSync(path.dirname(options.file), { recursive: true })
    this.db = new Database(options.file)
    this.db.pragma('journal_mode = WAL')
    this.db.pragma('synchronous = NORMAL')
    this.db.pragma('cache_size = -16384')
    // A checkpoint copies every page of the log into the file and syncs it: at SQLite's default (4 MiB of log) a catch-up spent a tenth of its time there.
    this.db.pragma('wal_autocheckpoint = 10000')
    this.commitEvery = options.commitEvery ?? 5_000
    this.commitAfterMs = options.commitAfterMs ?? 50
    this.pageSize = options.pageSize ?? 1000
    createMetadata(this.db)
  }

  collection<T extends ReadDocument>(spec: CollectionSpec | string): ReadCollection<T> {
    const full = specOf(spec)
    this.table(full)
    return new SqliteCollection<T>(this, full)
  }

  /** How a query of a collection reads: whether SQL selects exactly, the plans of a page and of the count. */
  explainQuery(spec: CollectionSpec | string, filter: Filter, options?: FindOptions): QueryExplanation {
    const full = specOf(spec)
    this.table(full)
    return new SqliteCollection<ReadDocument>(this, full).explain(filter, options)
  }

  /** The collection's table, created (with its indexes) on first use and after a drop. */
  table(spec: CollectionSpec): Table {
    this.usable()
    return this.failing(() => {
      let table = this.tables.get(spec.name)
      if (table === undefined) {
        table = new Table(this.db, spec.name)
        this.tables.set(spec.name, table)
      }
      table.declare(spec)
      return table
    })
  }

  /**
   * Runs a write. One that fails (a full disk, an I/O error, a document JSON
   * cannot write) ends the store for this process: SQLite may have rolled
   * back the open transaction on its own, taking other documents, checkpoints
   * and the kinds of fields with it, while the projections and the tables'
   * field kinds in memory went on past them. So the transaction is rolled
   * back and every later call answers READ_STORE_FAILED (503; `/v1/health`
   * reports the store down): a restart resumes each projection from its last
   * committed checkpoint, with its documents.
   */
  private failing<R>(work: () => R): R {
    try {
      return work()
    } catch (error) {
      this.failure ??= error
      clearTimeout(this.timer)
      this.deferred.clear()
      try {
        if (this.db.inTransaction) this.db.exec('ROLLBACK')
      } catch {
        // Already rolled back by SQLite.
      }
      throw error
    }
  }

  private usable(): void {
    if (this.failure !== undefined) {
      throw new AppError('SERVICE_UNAVAILABLE', `the SQLite read store stopped after a failed write (${errorMessage(this.failure)}); restart the service`, { reason: 'READ_STORE_FAILED' })
    }
  }

  statement(sql: string): Database.Statement {
    this.usable()
    let statement = this.statements.get(sql)
    if (statement === undefined) {
      statement = this.db.prepare(sql)
      this.statements.set(sql, statement)
    }
    return statement
  }

  /** Runs a write inside the open transaction (opening one), committing when enough writes or time have gathered. */
  write<R>(work: () => R): R {
    this.usable()
    try {
      return this.failing(() => {
        if (!this.db.inTransaction) this.db.exec('BEGIN')
        return work()
      })
    } finally {
      if (this.failure === undefined) this.counted()
    }
  }

  private counted(): void {
    if (++this.pending >= this.commitEvery) this.commit()
    else this.timer ??= setTimeout(() => this.commit(), this.commitAfterMs).unref()
  }

  /** A document written but not yet in its table (null: deleted), or undefined when the table has the latest. */
  pendingOf(table: Table, id: string): ReadDocument | null | undefined {
    return this.deferred.get(table)?.get(id)
  }

  /** Keeps a document's latest version (null: deleted) until its table is next read by query or the transaction commits. */
  defer(table: Table, id: string, doc: ReadDocument | null): void {
    this.usable()
    let docs = this.deferred.get(table)
    if (docs === undefined) {
      docs = new Map()
      this.deferred.set(table, docs)
    }
    docs.set(id, doc)
    this.counted()
  }

  /** Writes a table's deferred documents into the open transaction (opening one). */
  flush(table: Table): void {
    this.usable()
    const docs = this.deferred.get(table)
    if (docs === undefined || docs.size === 0) return
    this.deferred.delete(table)
    this.failing(() => {
      if (!this.db.inTransaction) this.db.exec('BEGIN')
      // The table's triggers keep the element rows of its multikey fields.
      const remove = this.statement(`DELETE FROM ${table.identifier} WHERE _id = ?`)
      for (const [id, doc] of docs) {
        if (doc === null) remove.run(id)
        else this.statement(table.upsertSql).run(id, JSON.stringify(doc), ...table.columnValues(doc))
      }
    })
  }

  /** Commits the open transaction with every deferred document, if any. */
  commit(): void {
    this.usable()
    clearTimeout(this.timer)
    this.timer = undefined
    this.pending = 0
    for (const table of [...this.deferred.keys()]) this.flush(table)
    this.failing(() => {
      if (this.db.inTransaction) this.db.exec('COMMIT')
    })
  }

  /**
   * One page of a keyset-paginated read: the rows after `last` in the plan's
   * order (then rowid). Each page is a complete query, so no statement stays
   * open on the connection while the caller awaits between pages.
   */
  page(table: Table, { push, keys, scan }: { push: Pushdown; keys: readonly OrderKey[]; scan: boolean }, last: Row | undefined, limit: number, offset: number): Row[] {
    const past = last === undefined ? null : after(keys, last.slice(2), last[0])
    const where = past === null ? push.where : `(${push.where}) AND (${past.sql})`
    const params = [...push.params, ...(past?.params ?? []), limit, offset]
    return this.statement(this.select(table, where, keys, scan)).raw().all(...params) as Row[]
  }

  private select(table: Table, where: string, keys: readonly OrderKey[], scan: boolean): string {
    const columns = ['rowid', 'doc', ...keys.map((key) => key.expression)].join(', ')
    return `SELECT ${columns} FROM ${table.identifier}${scan ? ' NOT INDEXED' : ''} WHERE ${where} ORDER BY ${orderBy(keys)} LIMIT ? OFFSET ?`
  }

  /** Whether SQLite would sort the whole match set to answer a page in this order (no index gives it). */
  sortsWholeMatch(table: Table, push: Pushdown, keys: readonly OrderKey[]): boolean {
    return this.explain(this.select(table, push.where, keys, false), [...push.params, 1, 0]).sorts
  }

  /** Counts the rows of an exact pushdown. */
  count(table: Table, push: Pushdown): number {
    return Number(this.statement(this.countSql(table, push)).pluck().get(...push.params))
  }

  /** The count's SQL: by a table scan when the index SQLite picks would look up a large part of the table. */
  private countSql(table: Table, push: Pushdown): string {
    const sql = `SELECT count(*) FROM ${table.identifier} WHERE ${push.where}`
    const { index, covering } = this.explain(sql, push.params)
    // An index holding every field filtered on counts without reading a row.
    if (index !== undefined && !covering && this.prefersScan(table, push, index)) return `SELECT count(*) FROM ${table.identifier} NOT INDEXED WHERE ${push.where}`
    return sql
  }

  /** EXPLAIN QUERY PLAN of a page's query. */
  planOf(table: Table, { push, keys, scan }: { push: Pushdown; keys: readonly OrderKey[]; scan: boolean }): string[] {
    return this.planSteps(this.select(table, push.where, keys, scan), [...push.params, 1, 0])
  }

  /** EXPLAIN QUERY PLAN of a count. */
  countPlanOf(table: Table, push: Pushdown): string[] {
    return this.planSteps(this.countSql(table, push), push.params)
  }

  private planSteps(sql: string, params: unknown[]): string[] {
    return (this.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as Array<{ detail: string }>).map((step) => step.detail)
  }

  /**
   * How pages without a requested order read the match: in rowid order when
   * the plan gives it; else in the order of the index SQLite picks (its
   * columns, then rowid), unless the match is large (or bounded by no limit
   * and large), where a table scan in rowid order reads it for less.
   */
  access(table: Table, push: Pushdown, bounded: boolean): { keys: OrderKey[]; scan: boolean } {
    if (push.where === '1') return { keys: [], scan: false }
    const { index, sorts } = this.explain(this.select(table, push.where, [], false), [...push.params, 1, 0])
    if (!sorts) return { keys: [], scan: false }
    const keys = index === undefined ? undefined : table.orderOf(index)
    if (index === undefined || keys === undefined || (!bounded && this.prefersScan(table, push, index))) return { keys: [], scan: true }
    return { keys, scan: false }
  }

  /**
   * Without statistics SQLite takes any index on the filter as selective;
   * when the one it picks does not hold every field filtered on, each hit
   * costs a row lookup, about five times a row of a plain table scan. So the
   * hits of the index's own conditions are counted (from the index alone),
   * and past a fifth of the table a scan is cheaper.
   */
  private prefersScan(table: Table, push: Pushdown, index: string): boolean {
    const fields = table.fieldsOf(index)
    const own = conjunction(push.terms.filter((term) => fields?.has(term.field) === true))
    if (fields === undefined || own.where === '1') return false
    const hits = Number(this.statement(`SELECT count(*) FROM ${table.identifier} INDEXED BY ${quote(index)} WHERE ${own.where}`).pluck().get(...own.params))
    const rows = Number(this.statement(`SELECT coalesce(max(rowid), 0) FROM ${table.identifier}`).pluck().get())
    return hits * 5 > rows
  }

  /** The index a query's plan reads (if any) and whether it sorts its whole match, by query. */
  private explain(sql: string, params: unknown[]): QueryPlan {
    let plan = this.plans.get(sql)
    if (plan === undefined) {
      const steps = this.planSteps(sql, params)
      plan = {
        index: steps.map((detail) => /USING (?:COVERING )?INDEX (\S+)/.exec(detail)?.[1]).find((name) => name !== undefined),
        covering: steps.some((detail) => detail.includes('USING COVERING INDEX')),
        sorts: steps.some((detail) => detail.includes('TEMP B-TREE')),
      }
      this.plans.set(sql, plan)
    }
    return plan
  }

  async getCheckpoint(projection: string): Promise<number> {
    const position: unknown = this.statement('SELECT position FROM _checkpoints WHERE name = ?').pluck().get(projection)
    return typeof position === 'number' ? position : 0
  }

  async setCheckpoint(projection: string, position: number): Promise<void> {
    this.write(() => this.statement('INSERT INTO _checkpoints (name, position) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET position = excluded.position')
      .run(projection, position))
  }

  async getProjectionVersion(projection: string): Promise<number | null> {
    const version: unknown = this.statement('SELECT version FROM _projection_versions WHERE name = ?').pluck().get(projection)
    return typeof version === 'number' ? version : null
  }

  async setProjectionVersion(projection: string, version: number): Promise<void> {
    this.write(() => this.statement('INSERT INTO _projection_versions (name, version) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET version = excluded.version')
      .run(projection, version))
  }

  // Outside the open transaction, committed at once: the lease is for other processes to see.
  async acquireLease(name: string, holder: string, now: Date, ttlMs: number): Promise<boolean> {
    this.commit()
    return this.db.transaction(() => {
      const lease = this.statement('SELECT holder, expires_at AS expiresAt FROM _leases WHERE name = ?').get(name) as { holder: string; expiresAt: number } | undefined
      if (lease !== undefined && lease.holder !== holder && lease.expiresAt > now.getTime()) return false
      this.statement('INSERT INTO _leases (name, holder, expires_at) VALUES (?, ?, ?) ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at')
        .run(name, holder, now.getTime() + ttlMs)
      return true
    }).immediate()
  }

  async releaseLease(name: string, holder: string): Promise<void> {
    this.commit()
    this.statement('DELETE FROM _leases WHERE name = ? AND holder = ?').run(name, holder)
  }

  async drop(collections: readonly string[]): Promise<void> {
    this.write(() => {
      for (const name of collections) {
        const known = this.tables.get(name)
        if (known !== undefined) this.deferred.delete(known)
        ;(known ?? new Table(this.db, name)).drop()
        this.tables.delete(name)
      }
    })
    this.statements.clear()
    this.plans.clear()
  }

  async ping(): Promise<void> {
    this.statement('SELECT 1').get()
  }

  async close(): Promise<void> {
    if (!this.db.open) return
    // After a failed write nothing more is committed: what the log holds past the last commit is projected again at the next start.
    if (this.failure === undefined) this.commit()
    this.db.close()
  }
}

import type Database from 'better-sqlite3'
import { UNKNOWN, valueAt } from './memoryFilter.js'
import type { CollectionSpec, ReadDocument } from './readStore.js'

/** Quotes an SQL identifier (collection and field names come from code, but a quote in one must not break out). */
export const quote = (name: string): string => `"${name.replaceAll('"', '""')}"`

/** A value MongoDB and SQLite compare alike: a string, a number, null or nothing. */
const isPlainValue = (value: unknown): value is string | number | null | undefined =>
  value === undefined || value === null || typeof value === 'string' || typeof value === 'number'

/**
 * The metadata of the read store's own tables: one row per projection
 * checkpoint, one per projection version (which code made its documents), and per indexed field whether every document stored has held a
 * plain value there (0 once one did not: the field is then never pushed down
 * to SQL until the collection is dropped, as MongoDB's multikey flag).
 */
export const createMetadata = (db: Database.Database): void => {
  db.exec(`
    CREATE TABLE IF NOT EXISTS _checkpoints (name TEXT PRIMARY KEY, position INTEGER NOT NULL);
    CREATE TABLE IF NOT EXISTS _projection_versions (name TEXT PRIMARY KEY, version INTEGER NOT NULL);
    CREATE TABLE IF NOT EXISTS _leases (name TEXT PRIMARY KEY, holder TEXT NOT NULL, expires_at INTEGER NOT NULL);
    CREATE TABLE IF NOT EXISTS _paths (collection TEXT NOT NULL, path TEXT NOT NULL, plain INTEGER NOT NULL, PRIMARY KEY (collection, path));
  `)
}

interface Field {
  column: string
  parts: readonly string[]
  plain: boolean
}

/**
 * One collection's table: `_id`, the document as JSON text, and a column per
 * indexed field holding its value when plain (so SQL filters and sorts read
 * no JSON), with an index per declared index over those columns.
 */
export class Table {
  readonly identifier: string
  private readonly fields = new Map<string, Field>()
  private readonly indexed = new Set<string>()
  /** The columns of each index in order, by its name as query plans spell it. */
  private readonly indexes = new Map<string, Array<{ field: string; expression: string; descending: boolean }>>()
  private readonly declared = new WeakSet<CollectionSpec>()
  /** The upsert of a document with the current columns (they only grow). */
  private upsert = ''

  constructor(private readonly db: Database.Database, readonly name: string) {
    this.identifier = quote(`c_${name}`)
    db.exec(`CREATE TABLE IF NOT EXISTS ${this.identifier} (_id TEXT PRIMARY KEY, doc TEXT NOT NULL)`)
    this.prepareUpsert()
  }

  /** Creates the spec's indexes this table does not have yet (callers may name a collection with or without them). */
  declare(spec: CollectionSpec): void {
    if (this.declared.has(spec)) return
    this.declared.add(spec)
    for (const index of spec.indexes ?? []) {
      const entries = Object.entries(index)
      const key = entries.map(([field, direction]) => `${field}:${direction}`).join(',')
      if (this.indexed.has(key) || entries.length === 0) continue
      this.indexed.add(key)
      const columns = entries.map(([field, direction]) => ({ field, expression: field === '_id' ? '_id' : this.track(field).column, descending: direction === -1 }))
      const name = `ix_${this.name}_${key}`
      this.db.exec(`CREATE INDEX IF NOT EXISTS ${quote(name)} ON ${this.identifier} (${columns.map((c) => `${c.expression}${c.descending ? ' DESC' : ''}`).join(', ')})`)
      this.indexes.set(name, columns)
    }
  }

  /** The column of a field every stored document holds a plain value at (`_id` for the key), or null. */
  column(field: string): string | null {
    if (field === '_id') return '_id'
    const known = this.fields.get(field)
    return known?.plain === true ? known.column : null
  }

  /** The fields an index (named as query plans spell it) holds; SQLite's own index of the key holds `_id`. */
  fieldsOf(index: string): ReadonlySet<string> | undefined {
    const columns = this.orderOf(index)
    return columns === undefined ? undefined : new Set(columns.map((c) => c.field))
  }

  /** The order an index reads rows in (its columns, then rowid). */
  orderOf(index: string): Array<{ field: string; expression: string; descending: boolean }> | undefined {
    if (index === `sqlite_autoindex_c_${this.name}_1`) return [{ field: '_id', expression: '_id', descending: false }]
    return this.indexes.get(index)
  }

  /** The SQL writing a document: its id, its JSON and the value of each field column. */
  get upsertSql(): string {
    return this.upsert
  }

  /**
   * The values of the field columns for this document, in column order;
   * turns off the plain flag of a field the document holds no plain value at
   * (in the caller's transaction, so it is undone with the write).
   */
  columnValues(doc: ReadDocument): Array<string | number | null> {
    const values: Array<string | number | null> = []
    for (const [path, field] of this.fields) {
      const value = valueAt(doc, field.parts)
      if (value !== UNKNOWN && isPlainValue(value)) {
        values.push(value ?? null)
        continue
      }
      values.push(null)
      if (field.plain) this.setPlain(path, field, false)
    }
    return values
  }

  private track(path: string): Field {
    const known = this.fields.get(path)
    if (known !== undefined) return known
    const field: Field = { column: quote(`f_${path}`), parts: path.split('.'), plain: true }
    const row = this.db.prepare('SELECT plain FROM _paths WHERE collection = ? AND path = ?').get(this.name, path) as { plain: number } | undefined
    if (row !== undefined) {
      field.plain = row.plain === 1
    } else {
      // A field indexed for the first time, maybe over existing documents: its column filled and each document looked at once.
      this.db.transaction(() => {
        this.db.exec(`ALTER TABLE ${this.identifier} ADD COLUMN ${field.column}`)
        const values: Array<[number, string | number | null]> = []
        for (const [rowid, text] of this.db.prepare(`SELECT rowid, doc FROM ${this.identifier}`).raw().iterate() as Iterable<[number, string]>) {
          const value = valueAt(JSON.parse(text) as object, field.parts)
          if (value === UNKNOWN || !isPlainValue(value)) field.plain = false
          else if (value !== undefined && value !== null) values.push([rowid, value])
        }
        const fill = this.db.prepare(`UPDATE ${this.identifier} SET ${field.column} = ? WHERE rowid = ?`)
        for (const [rowid, value] of values) fill.run(value, rowid)
        this.setPlain(path, field, field.plain)
      })()
    }
    this.fields.set(path, field)
    this.prepareUpsert()
    return field
  }

  private setPlain(path: string, field: Field, plain: boolean): void {
    field.plain = plain
    this.db.prepare('INSERT INTO _paths (collection, path, plain) VALUES (?, ?, ?) ON CONFLICT (collection, path) DO UPDATE SET plain = excluded.plain')
      .run(this.name, path, plain ? 1 : 0)
  }

  private prepareUpsert(): void {
    const columns = [...this.fields.values()].map((field) => field.column)
    // An update in place keeps the row (and its place in rowid order), as a replacement does in the memory store.
    this.upsert = `INSERT INTO ${this.identifier} (_id, doc${columns.map((c) => `, ${c}`).join('')}) VALUES (?, ?${columns.map(() => ', ?').join('')}) ` +
      `ON CONFLICT (_id) DO UPDATE SET doc = excluded.doc${columns.map((c) => `, ${c} = excluded.${c}`).join('')}`
  }

  drop(): void {
    this.db.exec(`DROP TABLE IF EXISTS ${this.identifier}`)
    this.db.prepare('DELETE FROM _paths WHERE collection = ?').run(this.name)
  }
}

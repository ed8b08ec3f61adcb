import type Database from 'better-sqlite3'
import { UNKNOWN, valueAt } from './memoryFilter.js'
import type { CollectionSpec, ReadDocument } from './readStore.js'
import { fieldExpression } from './sqlitePushdown.js'

/** Quotes an SQL identifier (collection names come from code, but a quote in one must not break out). */
export const quote = (name: string): string => `"${name.replaceAll('"', '""')}"`

/** A value MongoDB and SQLite compare alike: a string, a number, null or nothing. */
const isPlainValue = (value: unknown): boolean =>
  value === undefined || value === null || typeof value === 'string' || typeof value === 'number'

/**
 * The metadata of the read store's own tables: one row per projection
 * checkpoint, and per indexed path whether every document stored has held a
 * plain value there (0 once one did not: the path is then never pushed down
 * to SQL until the collection is dropped, as MongoDB's multikey flag).
 */
export const createMetadata = (db: Database.Database): void => {
  db.exec(`
    CREATE TABLE IF NOT EXISTS _checkpoints (name TEXT PRIMARY KEY, position INTEGER NOT NULL);
    CREATE TABLE IF NOT EXISTS _paths (collection TEXT NOT NULL, path TEXT NOT NULL, plain INTEGER NOT NULL, PRIMARY KEY (collection, path));
  `)
}

/**
 * One collection's table: `_id` and the document as JSON text, an expression
 * index per declared index, and the plain flag of each indexed path.
 */
export class Table {
  readonly identifier: string
  private readonly plainPaths = new Map<string, boolean>()
  private readonly indexed = new Set<string>()
  private readonly declared = new WeakSet<CollectionSpec>()

  constructor(private readonly db: Database.Database, readonly name: string) {
    this.identifier = quote(`c_${name}`)
    db.exec(`CREATE TABLE IF NOT EXISTS ${this.identifier} (_id TEXT PRIMARY KEY, doc TEXT NOT NULL)`)
  }

  /** Creates the spec's indexes this table does not have yet (callers may name a collection with or without them). */
  declare(spec: CollectionSpec): void {
    if (this.declared.has(spec)) return
    this.declared.add(spec)
    for (const index of spec.indexes ?? []) {
      const fields = Object.entries(index)
      const key = fields.map(([field, direction]) => `${field}:${direction}`).join(',')
      if (this.indexed.has(key)) continue
      this.indexed.add(key)
      const columns = fields.map(([field, direction]) => {
        const expression = fieldExpression(field)
        return expression === null ? null : `${expression}${direction === -1 ? ' DESC' : ''}`
      })
      if (columns.some((column) => column === null) || fields.length === 0) continue
      this.db.exec(`CREATE INDEX IF NOT EXISTS ${quote(`ix_${this.name}_${key}`)} ON ${this.identifier} (${columns.join(', ')})`)
      for (const [field] of fields) if (field !== '_id') this.track(field)
    }
  }

  /** Whether the field is indexed and plain in every stored document. */
  isPlain(field: string): boolean {
    return this.plainPaths.get(field) === true
  }

  /** Turns off the plain flag of each path this document does not hold a plain value at (in the caller's transaction). */
  noteWrite(doc: ReadDocument): void {
    for (const [field, plain] of this.plainPaths) {
      if (!plain) continue
      const value = valueAt(doc, field.split('.'))
      if (value === UNKNOWN || !isPlainValue(value)) this.setPlain(field, false)
    }
  }

  private track(field: string): void {
    if (this.plainPaths.has(field)) return
    const row = this.db.prepare('SELECT plain FROM _paths WHERE collection = ? AND path = ?').get(this.name, field) as { plain: number } | undefined
    if (row !== undefined) {
      this.plainPaths.set(field, row.plain === 1)
      return
    }
    // A path indexed for the first time over existing documents: look at each of them once.
    const parts = field.split('.')
    let plain = true
    for (const text of this.db.prepare(`SELECT doc FROM ${this.identifier}`).pluck().iterate()) {
      const value = valueAt(JSON.parse(String(text)) as object, parts)
      if (value === UNKNOWN || !isPlainValue(value)) {
        plain = false
        break
      }
    }
    this.setPlain(field, plain)
  }

  private setPlain(field: string, plain: boolean): void {
    this.plainPaths.set(field, plain)
    this.db.prepare('INSERT INTO _paths (collection, path, plain) VALUES (?, ?, ?) ON CONFLICT (collection, path) DO UPDATE SET plain = excluded.plain')
      .run(this.name, field, plain ? 1 : 0)
  }

  drop(): void {
    this.db.exec(`DROP TABLE IF EXISTS ${this.identifier}`)
    this.db.prepare('DELETE FROM _paths WHERE collection = ?').run(this.name)
  }
}

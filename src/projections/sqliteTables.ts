import type Database from 'better-sqlite3'
import { isScalar, UNKNOWN, valueAt, type Scalar } from './memoryFilter.js'
import type { CollectionSpec, ReadDocument } from './readStore.js'

/** Quotes an SQL identifier (collection and field names come from code, but a quote in one must not break out). */
export const quote = (name: string): string => `"${name.replaceAll('"', '""')}"`

/** What a field's column (or element row) holds: text, a number, NULL, or a one-byte BLOB for a boolean. */
export type SqlValue = string | number | Buffer | null

const FALSE_BLOB = Buffer.from([0])
const TRUE_BLOB = Buffer.from([1])

const NOT_SCALAR = Symbol('not scalar')

/**
 * A scalar as SQL holds it. Booleans become one-byte BLOBs: SQLite orders
 * NULL < numbers < text < BLOBs and compares BLOBs bytewise, which is
 * MongoDB's order of these types (null, numbers, strings, then booleans, false
 * before true), and a BLOB never equals a number or a string, as a boolean
 * never equals 1 or 'true' in MongoDB.
 */
export const sqlOf = (value: Scalar): SqlValue => (typeof value === 'boolean' ? (value ? TRUE_BLOB : FALSE_BLOB) : value)

/** A stored value as its column holds it (NULL for nothing), NOT_SCALAR for anything else. */
const sqlValue = (value: unknown): SqlValue | typeof NOT_SCALAR => {
  if (value === undefined) return null
  return isScalar(value) ? sqlOf(value) : NOT_SCALAR
}

/**
 * How an indexed field is kept, from what every stored document holds there:
 * `plain` (a scalar or nothing: its column, which SQL filters and sorts on),
 * `multikey` (also arrays of scalars: one element row per value in the
 * collection's element table, which equality, `$in` and `$ne` read, as
 * MongoDB's multikey indexes), `opaque` (objects, arrays of arrays or of
 * objects, or a path through an array: left to JavaScript). A field only moves
 * down that list, until its collection is dropped.
 */
type FieldKind = 'plain' | 'multikey' | 'opaque'

const KIND_CODES: Record<FieldKind, number> = { opaque: 0, plain: 1, multikey: 2 }
const kindOf = (code: number): FieldKind => (code === 1 ? 'plain' : code === 2 ? 'multikey' : 'opaque')

/** The kind one document asks of a field (plain < multikey < opaque); an array needs the field's path spelled in SQLite's JSON paths. */
const kindFor = (value: unknown, field: Field): FieldKind => {
  if (value === UNKNOWN) return 'opaque'
  if (Array.isArray(value)) return field.jsonPath !== null && value.every(isScalar) ? 'multikey' : 'opaque'
  return sqlValue(value) === NOT_SCALAR ? 'opaque' : 'plain'
}

const RANK: Record<FieldKind, number> = { plain: 0, multikey: 1, opaque: 2 }
const lower = (a: FieldKind, b: FieldKind): FieldKind => (RANK[a] >= RANK[b] ? a : b)

/** A field's JSON path for SQLite (`$."a"."b"`), or null when a segment holds a character it cannot quote. */
const jsonPath = (path: string): string | null => {
  const parts = path.split('.')
  return parts.every((part) => part !== '' && !/["\\'\u0000-\u001f]/.test(part)) ? `$${parts.map((part) => `."${part}"`).join('')}` : null
}

/** SQL text literal. */
const literal = (text: string): string => `'${text.replaceAll("'", "''")}'`

/**
 * The element rows of a field, as a SELECT over each document's JSON (`doc`,
 * `rowid`: its expressions, over `from` when not a trigger's NEW row): each
 * distinct scalar of an array, or the value itself (NULL for nothing, so
 * `{field: null}` finds documents without it, as in MongoDB; an empty array or
 * an object gives none). Booleans become the columns' BLOBs. The document is
 * parsed once (`->` answers the value's JSON); a value that is not an array
 * is read as an array of one.
 */
const elementSelect = (path: string, { doc, rowid, from }: { doc: string; rowid: string; from?: string }): string => {
  const value = `SELECT ${doc} -> ${literal(jsonPath(path) ?? '$')} AS v, ${rowid} AS rid${from === undefined ? '' : ` FROM ${from}`}`
  const elements = `CASE WHEN json_type(s.v) = 'array' THEN s.v ELSE json_array(json(coalesce(s.v, 'null'))) END`
  return `SELECT DISTINCT ${literal(path)}, CASE j.type WHEN 'true' THEN x'01' WHEN 'false' THEN x'00' ELSE j.value END, s.rid ` +
    `FROM (${value}) s, json_each(${elements}) j WHERE j.type NOT IN ('object', 'array')`
}

/** The version of the rule deciding fields' kinds; stores of an earlier rule look again at fields it turned away. */
const KIND_RULE = 2

/**
 * The metadata of the read store's own tables: one row per projection
 * checkpoint, one per projection version (which code made its documents), and
 * per indexed field its kind (see FieldKind; 0 opaque, 1 plain, 2 multikey).
 * Rule 1 kept only strings, numbers and nulls in columns: fields it found
 * opaque are forgotten once, so their next use looks at their documents again.
 */
export const createMetadata = (db: Database.Database): void => {
  db.exec(`
    CREATE TABLE IF NOT EXISTS _checkpoints (name TEXT PRIMARY KEY, position INTEGER NOT NULL);
    CREATE TABLE IF NOT EXISTS _projection_versions (name TEXT PRIMARY KEY, version INTEGER NOT NULL);
    CREATE TABLE IF NOT EXISTS _leases (name TEXT PRIMARY KEY, holder TEXT NOT NULL, expires_at INTEGER NOT NULL);
    CREATE TABLE IF NOT EXISTS _paths (collection TEXT NOT NULL, path TEXT NOT NULL, plain INTEGER NOT NULL, PRIMARY KEY (collection, path));
    CREATE TABLE IF NOT EXISTS _rules (name TEXT PRIMARY KEY, version INTEGER NOT NULL);
  `)
  const rule = db.prepare("SELECT version FROM _rules WHERE name = 'field_kinds'").pluck().get()
  if (rule === KIND_RULE) return
  db.transaction(() => {
    db.prepare('DELETE FROM _paths WHERE plain = 0').run()
    db.prepare("INSERT INTO _rules (name, version) VALUES ('field_kinds', ?) ON CONFLICT (name) DO UPDATE SET version = excluded.version").run(KIND_RULE)
  })()
}

interface Field {
  column: string
  parts: readonly string[]
  /** Its path for SQLite's JSON functions, null when it cannot be spelled there (see jsonPath). */
  jsonPath: string | null
  kind: FieldKind
}

/**
 * One collection's table: `_id`, the document as JSON text, and a column per
 * indexed field holding its value when scalar (so SQL filters and sorts read
 * no JSON), with an index per declared index over those columns; and, once an
 * indexed field holds an array, an element table `m_<collection>` (path,
 * value, the document's rowid) indexed by path and value, kept by triggers on
 * the table: every writer keeps it, an earlier release's included.
 */
export class Table {
  readonly identifier: string
  readonly elementsIdentifier: string
  private readonly fields = new Map<string, Field>()
  private readonly indexed = new Set<string>()
  /** The columns of each index in order, by its name as query plans spell it. */
  private readonly indexes = new Map<string, Array<{ field: string; expression: string; descending: boolean }>>()
  private readonly declared = new WeakSet<CollectionSpec>()
  /** The upsert of a document with the current columns (they only grow). */
  private upsert = ''
  /** Counts the moves of fields to another kind: a query planned before one must be planned again. */
  generation = 0

  constructor(private readonly db: Database.Database, readonly name: string) {
    this.identifier = quote(`c_${name}`)
    this.elementsIdentifier = quote(`m_${name}`)
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

  /** The column of a field every stored document holds a scalar (or nothing) at (`_id` for the key), or null. */
  column(field: string): string | null {
    if (field === '_id') return '_id'
    const known = this.fields.get(field)
    return known?.kind === 'plain' ? known.column : null
  }

  /** Whether a field's values are found through the element table (some document holds an array of scalars there). */
  multikey(field: string): boolean {
    return this.fields.get(field)?.kind === 'multikey'
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
   * The values of the field columns for this document, in column order; a
   * field this document holds something new at moves down to the kind it
   * needs first, in the caller's transaction (a write that fails ends the
   * store, so the kinds held here never run ahead of the database's).
   */
  columnValues(doc: ReadDocument): SqlValue[] {
    const values: SqlValue[] = []
    for (const [path, field] of this.fields) {
      const value = valueAt(doc, field.parts)
      const scalar = value === UNKNOWN ? NOT_SCALAR : sqlValue(value)
      if (scalar !== NOT_SCALAR) {
        values.push(scalar)
        continue
      }
      values.push(null)
      const needed = lower(field.kind, kindFor(value, field))
      if (needed !== field.kind) this.moveDown(path, field, needed)
    }
    return values
  }

  /** Each stored document's rowid and value at a path, read to the end before the caller writes (no statement may run while one iterates). */
  private storedValues(parts: readonly string[]): Array<[number, unknown]> {
    const values: Array<[number, unknown]> = []
    for (const [rowid, text] of this.db.prepare(`SELECT rowid, doc FROM ${this.identifier}`).raw().iterate() as Iterable<[number, string]>) {
      values.push([rowid, valueAt(JSON.parse(text) as object, parts)])
    }
    return values
  }

  private track(path: string): Field {
    const known = this.fields.get(path)
    if (known !== undefined) return known
    const field: Field = { column: quote(`f_${path}`), parts: path.split('.'), jsonPath: jsonPath(path), kind: 'plain' }
    const row = this.db.prepare('SELECT plain FROM _paths WHERE collection = ? AND path = ?').get(this.name, path) as { plain: number } | undefined
    if (row !== undefined) {
      field.kind = kindOf(row.plain)
      this.fields.set(path, field)
    } else {
      // A field indexed for the first time (or forgotten by an earlier rule), maybe over existing documents: its column filled and each document looked at once.
      this.db.transaction(() => {
        const exists = (this.db.prepare(`SELECT count(*) FROM pragma_table_info(?) WHERE name = ?`).pluck().get(`c_${this.name}`, `f_${path}`) as number) > 0
        if (!exists) this.db.exec(`ALTER TABLE ${this.identifier} ADD COLUMN ${field.column}`)
        const fill = this.db.prepare(`UPDATE ${this.identifier} SET ${field.column} = ? WHERE rowid = ?`)
        let kind: FieldKind = 'plain'
        for (const [rowid, value] of this.storedValues(field.parts)) {
          const scalar = value === UNKNOWN ? NOT_SCALAR : sqlValue(value)
          // A column an earlier rule kept already holds its scalars but booleans (NULL, as a new column).
          if (scalar === NOT_SCALAR) kind = lower(kind, kindFor(value, field))
          else if (scalar !== null) fill.run(scalar, rowid)
        }
        this.fields.set(path, field)
        if (kind === 'plain') this.setKind(path, field, 'plain')
        else this.moveDown(path, field, kind)
      })()
    }
    this.prepareUpsert()
    return field
  }

  /**
   * Moves a field to a kind lower down: to multikey, every stored document's
   * element rows for it are written (rows an earlier release left under the
   * path are deleted first); from multikey, they are deleted. The triggers
   * keeping them follow.
   */
  private moveDown(path: string, field: Field, kind: FieldKind): void {
    const was = field.kind
    this.setKind(path, field, kind)
    if (kind !== 'multikey' && was !== 'multikey') return
    this.keepElements()
    this.db.prepare(`DELETE FROM ${this.elementsIdentifier} WHERE path = ?`).run(path)
    if (kind === 'multikey') {
      this.db.exec(`INSERT INTO ${this.elementsIdentifier} (path, value, rid) ${elementSelect(path, { doc: 'c.doc', rowid: 'c.rowid', from: `${this.identifier} c` })}`)
    }
  }

  /**
   * The element table and the triggers that keep the rows of the multikey
   * fields (created or replaced when that set changes): a row written gets
   * its documents' element rows, a row rewritten new ones, a row deleted none.
   */
  private keepElements(): void {
    // From the metadata, not the fields this process has looked at so far: the triggers serve every multikey field of the collection.
    const paths = this.db.prepare('SELECT path FROM _paths WHERE collection = ? AND plain = ? ORDER BY path').pluck().all(this.name, KIND_CODES.multikey) as string[]
    const trigger = (event: string) => quote(`m_${this.name}_${event}`)
    this.db.exec(['insert', 'update', 'delete'].map((event) => `DROP TRIGGER IF EXISTS ${trigger(event)};`).join(' '))
    if (paths.length === 0) return
    const name = `m_${this.name}`
    const rows = paths.map((path) => elementSelect(path, { doc: 'NEW.doc', rowid: 'NEW.rowid' })).join(' UNION ')
    this.db.exec(`
      CREATE TABLE IF NOT EXISTS ${this.elementsIdentifier} (path TEXT NOT NULL, value, rid INTEGER NOT NULL);
      CREATE INDEX IF NOT EXISTS ${quote(`${name}_value`)} ON ${this.elementsIdentifier} (path, value, rid);
      CREATE INDEX IF NOT EXISTS ${quote(`${name}_rid`)} ON ${this.elementsIdentifier} (rid);
      CREATE TRIGGER ${trigger('insert')} AFTER INSERT ON ${this.identifier} BEGIN
        INSERT INTO ${this.elementsIdentifier} (path, value, rid) ${rows};
      END;
      CREATE TRIGGER ${trigger('update')} AFTER UPDATE OF doc ON ${this.identifier} BEGIN
        DELETE FROM ${this.elementsIdentifier} WHERE rid = OLD.rowid;
        INSERT INTO ${this.elementsIdentifier} (path, value, rid) ${rows};
      END;
      CREATE TRIGGER ${trigger('delete')} AFTER DELETE ON ${this.identifier} BEGIN
        DELETE FROM ${this.elementsIdentifier} WHERE rid = OLD.rowid;
      END;
    `)
  }

  private setKind(path: string, field: Field, kind: FieldKind): void {
    if (field.kind !== kind) this.generation += 1
    field.kind = kind
    this.db.prepare('INSERT INTO _paths (collection, path, plain) VALUES (?, ?, ?) ON CONFLICT (collection, path) DO UPDATE SET plain = excluded.plain')
      .run(this.name, path, KIND_CODES[kind])
  }

  private prepareUpsert(): void {
    const columns = [...this.fields.values()].map((field) => field.column)
    // An update in place keeps the row (and its place in rowid order), as a replacement does in the memory store.
    this.upsert = `INSERT INTO ${this.identifier} (_id, doc${columns.map((c) => `, ${c}`).join('')}) VALUES (?, ?${columns.map(() => ', ?').join('')}) ` +
      `ON CONFLICT (_id) DO UPDATE SET doc = excluded.doc${columns.map((c) => `, ${c} = excluded.${c}`).join('')}`
  }

  drop(): void {
    this.db.exec(`DROP TABLE IF EXISTS ${this.identifier}; DROP TABLE IF EXISTS ${this.elementsIdentifier}`)
    this.db.prepare('DELETE FROM _paths WHERE collection = ?').run(this.name)
  }
}

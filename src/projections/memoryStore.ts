import { LRUCache } from 'lru-cache'
import { Query } from 'mingo'
import { specOf, type CollectionSpec, type Filter, type FindOptions, type ReadCollection, type ReadDocument, type ReadStore, type Sort } from './readStore.js'

const deepFreeze = <T>(value: T): T => {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const child of Object.values(value)) deepFreeze(child)
  }
  return value
}

type Key = string | number | boolean

const isKey = (value: unknown): value is Key =>
  typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'

/**
 * mingo evaluates the MongoDB query language over plain objects; read-model
 * documents are plain JSON objects, only their TypeScript interfaces lack an
 * index signature. Compiling a mingo query copies its operator tables, so
 * compiled queries are kept (most requests repeat the same filter).
 */
const compiledQueries = new LRUCache<string, Query>({ max: 2000 })

const mingoQuery = (filter: Filter): Query => {
  const key = JSON.stringify(filter)
  let query = compiledQueries.get(key)
  if (query === undefined) {
    query = new Query(filter)
    compiledQueries.set(key, query)
  }
  return query
}

/** The value at a dotted path, or `traversesArray` when the path crosses an array (MongoDB then matches per element). */
const plainValueAt = (doc: object, parts: readonly string[]): unknown => {
  let current: unknown = doc
  for (const [index, part] of parts.entries()) {
    if (current === null || typeof current !== 'object') return undefined
    if (Array.isArray(current) && index > 0) return traversesArray
    current = Reflect.get(current, part)
  }
  return current
}
const traversesArray = Symbol('traversesArray')

/**
 * `{field: value, …}` with string, number or boolean values: MongoDB matches a
 * document whose field equals the value or is an array containing it. Anything
 * else (operators, null, objects, paths through arrays) goes to mingo.
 */
const equalityMatcher = (filter: Filter): ((doc: ReadDocument) => boolean | typeof traversesArray) | null => {
  const terms = Object.entries(filter)
  if (!terms.every(([field, value]) => !field.startsWith('$') && isKey(value))) return null
  const parsed = terms.map(([field, value]) => [field.split('.'), value] as const)
  return (doc) => {
    for (const [parts, expected] of parsed) {
      const actual = plainValueAt(doc, parts)
      if (actual === traversesArray) return traversesArray
      if (actual !== expected && !(Array.isArray(actual) && actual.includes(expected))) return false
    }
    return true
  }
}

const matcher = (filter: Filter): ((doc: ReadDocument) => boolean) => {
  const equality = equalityMatcher(filter)
  const query = () => mingoQuery(filter)
  if (equality === null) {
    const compiled = query()
    return (doc) => compiled.test(doc as unknown as Record<string, unknown>)
  }
  return (doc) => {
    const matched = equality(doc)
    return matched === traversesArray ? query().test(doc as unknown as Record<string, unknown>) : matched
  }
}


const valueAt = (doc: object, field: string): unknown => {
  let current: unknown = doc
  for (const part of field.split('.')) {
    if (current === null || typeof current !== 'object') return undefined
    current = Reflect.get(current, part)
  }
  return current
}

/** MongoDB's order between missing/null, numbers, strings and booleans (BSON type order, then value). */
const rank = (value: unknown): number => {
  if (value === undefined || value === null) return 1
  if (typeof value === 'number') return 2
  if (typeof value === 'string') return 3
  return 8
}

const comparePrimitives = (a: unknown, b: unknown): number => {
  const byType = rank(a) - rank(b)
  if (byType !== 0) return byType
  if (typeof a === 'number' && typeof b === 'number') return a - b
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b)
  return 0
}

/** Sorts when every sort key of every document is a primitive (or missing); null means "ask mingo". */
const sortPrimitive = <T extends ReadDocument>(docs: T[], sort: Sort): T[] | null => {
  const keys = Object.entries(sort).map(([field, direction]) => [field.split('.'), direction] as const)
  const rows: Array<{ doc: T; values: unknown[] }> = []
  for (const doc of docs) {
    const values = keys.map(([parts]) => plainValueAt(doc, parts))
    if (values.some((v) => v === traversesArray || (v !== null && typeof v === 'object'))) return null
    rows.push({ doc, values })
  }
  rows.sort((x, y) => {
    for (const [index, [, direction]] of keys.entries()) {
      const order = comparePrimitives(x.values[index], y.values[index])
      if (order !== 0) return order * direction
    }
    return 0
  })
  return rows.map((row) => row.doc)
}

/** Equality index on one field: value → ids. */
class EqualityIndex {
  private readonly entries = new Map<Key, Set<string>>()
  constructor(readonly field: string) {}
  add(doc: ReadDocument): void {
    const value = valueAt(doc, this.field)
    if (!isKey(value)) return
    const ids = this.entries.get(value) ?? new Set<string>()
    ids.add(doc._id)
    this.entries.set(value, ids)
  }
  remove(doc: ReadDocument): void {
    const value = valueAt(doc, this.field)
    if (isKey(value)) this.entries.get(value)?.delete(doc._id)
  }
  lookup(value: Key): ReadonlySet<string> {
    return this.entries.get(value) ?? new Set()
  }
}

class MemoryCollection<T extends ReadDocument> implements ReadCollection<T> {
  private readonly docs = new Map<string, T>()
  private readonly indexes: EqualityIndex[]

  constructor(spec: CollectionSpec) {
    const fields = new Set((spec.indexes ?? []).map((index) => Object.keys(index)[0]).filter((f): f is string => f !== undefined))
    this.indexes = [...fields].map((field) => new EqualityIndex(field))
  }

  async get(id: string): Promise<T | null> {
    return this.docs.get(id) ?? null
  }

  async findOne(filter: Filter): Promise<T | null> {
    const query = matcher(filter)
    for (const doc of this.candidates(filter)) if (query(doc)) return doc
    return null
  }

  async find(filter: Filter, options: FindOptions = {}): Promise<T[]> {
    return this.select(filter, options)
  }

  async *stream(filter: Filter, options: FindOptions = {}): AsyncIterable<T> {
    if (options.sort !== undefined) {
      yield* this.select(filter, options)
      return
    }
    const query = matcher(filter)
    let skip = options.skip ?? 0
    let left = options.limit ?? Number.POSITIVE_INFINITY
    for (const doc of this.candidates(filter)) {
      if (left <= 0) return
      if (!query(doc)) continue
      if (skip > 0) { skip -= 1; continue }
      left -= 1
      yield doc
    }
  }

  async count(filter: Filter = {}): Promise<number> {
    if (Object.keys(filter).length === 0) return this.docs.size
    const query = matcher(filter)
    let n = 0
    for (const doc of this.candidates(filter)) if (query(doc)) n += 1
    return n
  }

  async put(doc: T): Promise<void> {
    const previous = this.docs.get(doc._id)
    if (previous !== undefined) for (const index of this.indexes) index.remove(previous)
    const stored = deepFreeze(doc)
    this.docs.set(doc._id, stored)
    for (const index of this.indexes) index.add(stored)
  }

  async delete(id: string): Promise<void> {
    const previous = this.docs.get(id)
    if (previous === undefined) return
    for (const index of this.indexes) index.remove(previous)
    this.docs.delete(id)
  }

  async deleteMany(filter: Filter): Promise<number> {
    const query = matcher(filter)
    const doomed = [...this.candidates(filter)].filter((doc) => query(doc))
    for (const doc of doomed) await this.delete(doc._id)
    return doomed.length
  }

  private select(filter: Filter, options: FindOptions): T[] {
    const matches = matcher(filter)
    const found = [...this.candidates(filter)].filter(matches)
    if (options.sort === undefined) {
      const from = options.skip ?? 0
      return found.slice(from, options.limit === undefined ? undefined : from + options.limit)
    }
    const sorted = sortPrimitive(found, options.sort)
    if (sorted !== null) {
      const from = options.skip ?? 0
      return sorted.slice(from, options.limit === undefined ? undefined : from + options.limit)
    }
    let cursor = mingoQuery({}).find<T>(found)
    cursor = cursor.sort(options.sort)
    if (options.skip !== undefined) cursor = cursor.skip(options.skip)
    if (options.limit !== undefined) cursor = cursor.limit(options.limit)
    return cursor.all()
  }

  /** The documents worth testing: narrowed by `_id` or an indexed equality when the filter has one. */
  private *candidates(filter: Filter): Iterable<T> {
    const id = filter['_id']
    if (typeof id === 'string') {
      const doc = this.docs.get(id)
      if (doc !== undefined) yield doc
      return
    }
    for (const index of this.indexes) {
      const value = filter[index.field]
      if (isKey(value)) {
        for (const docId of index.lookup(value)) {
          const doc = this.docs.get(docId)
          if (doc !== undefined) yield doc
        }
        return
      }
    }
    yield* this.docs.values()
  }
}

/**
 * The embedded read store: documents in process memory, rebuilt from the
 * event store at every start. Stored documents are frozen, so a caller that
 * tries to change one in place fails loudly instead of corrupting the model.
 */
export class MemoryReadStore implements ReadStore {
  readonly kind = 'memory' as const
  readonly persistent = false
  private readonly collections = new Map<string, MemoryCollection<ReadDocument>>()
  private readonly checkpoints = new Map<string, number>()

  collection<T extends ReadDocument>(spec: CollectionSpec | string): ReadCollection<T> {
    const { name } = specOf(spec)
    let existing = this.collections.get(name)
    if (existing === undefined) {
      existing = new MemoryCollection<ReadDocument>(specOf(spec))
      this.collections.set(name, existing)
    }
    // One collection object serves every caller of the name; documents are whatever the projection put.
    return existing as unknown as ReadCollection<T>
  }

  async getCheckpoint(projection: string): Promise<number> {
    return this.checkpoints.get(projection) ?? 0
  }

  async setCheckpoint(projection: string, position: number): Promise<void> {
    this.checkpoints.set(projection, position)
  }

  async drop(collections: readonly string[]): Promise<void> {
    for (const name of collections) this.collections.delete(name)
  }

  async ping(): Promise<void> {}
  async close(): Promise<void> {}
}

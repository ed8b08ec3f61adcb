import { documentMatcher, sortDocuments } from './documentQuery.js'
import { deepFreeze } from '../shared/freeze.js'
import { CompositeCount } from './compositeIndex.js'
import { OrderedIndex, totalOrder, type SortKeys } from './orderedIndex.js'
import { isKey, type Key } from './scalarKey.js'
import { specOf, withMongoLimit, type CollectionSpec, type Filter, type FindOptions, type InProcessAccess, type ReadCollection, type ReadDocument, type ReadStore, type Sort } from './readStore.js'


/**
 * The scalar values an equality on `field` can match, as MongoDB's multikey
 * indexes see them: through arrays at any step of the path and each element
 * of an array at its end.
 */
const keysAt = (doc: unknown, parts: readonly string[], from = 0): Key[] => {
  let current = doc
  // Plain objects along the path are walked in place; only an array on the way fans out.
  for (let index = from; index < parts.length; index++) {
    if (Array.isArray(current)) return current.flatMap((element) => keysAt(element, parts, index))
    if (current === null || typeof current !== 'object') return []
    current = Reflect.get(current, parts[index] ?? '')
  }
  if (Array.isArray(current)) return current.flatMap((element) => keysAt(element, parts, parts.length))
  return isKey(current) ? [current] : []
}

/** A document's value at a one-step path, as a single key when it is one (null: no key; undefined: ask keysAt). */
const singleKey = (doc: object, field: string): Key | null | undefined => {
  const value: unknown = Reflect.get(doc, field)
  if (isKey(value)) return value
  return Array.isArray(value) ? undefined : null
}

/**
 * Equality index on one field: value → the ids of the documents holding it,
 * in the order they took the value. Ids, not documents: a replacement that
 * keeps the indexed value (most projection writes) leaves the index alone.
 */
class EqualityIndex {
  private readonly entries = new Map<Key, Set<string>>()
  /**
   * Whether an entry holds exactly the documents an equality on this field
   * matches: a one-step field no document has held an array at (MongoDB does
   * not match an element of an array nested in an array, which the index
   * flattens into candidates all the same).
   */
  exact: boolean
  private readonly parts: readonly string[]
  /** The field when the path has one step (the common case, read without building arrays). */
  private readonly single: string | undefined
  constructor(readonly field: string) {
    this.parts = field.split('.')
    this.single = this.parts.length === 1 ? field : undefined
    this.exact = this.single !== undefined
  }
  add(doc: ReadDocument): void {
    if (this.single !== undefined) {
      const key = singleKey(doc, this.single)
      if (key === null) return
      if (key !== undefined) return this.addKey(key, doc._id)
    }
    this.exact = false
    const keys = keysAt(doc, this.parts)
    for (const value of keys.length > 1 ? new Set(keys) : keys) this.addKey(value, doc._id)
  }
  private addKey(value: Key, id: string): void {
    let ids = this.entries.get(value)
    if (ids === undefined) {
      ids = new Set<string>()
      this.entries.set(value, ids)
    }
    ids.add(id)
  }
  remove(doc: ReadDocument): void {
    if (this.single !== undefined) {
      const key = singleKey(doc, this.single)
      if (key === null) return
      if (key !== undefined) {
        this.entries.get(key)?.delete(doc._id)
        return
      }
    }
    for (const value of keysAt(doc, this.parts)) this.entries.get(value)?.delete(doc._id)
  }
  /** Whether a replacement keeps the indexed values (then its entries, and its place in iteration order, stay). */
  same(previous: ReadDocument, next: ReadDocument): boolean {
    if (this.single !== undefined) {
      const before = singleKey(previous, this.single)
      const after = singleKey(next, this.single)
      if (before !== undefined && after !== undefined) return before === after
    }
    const before = keysAt(previous, this.parts)
    const after = keysAt(next, this.parts)
    return before.length === after.length && before.every((value, index) => value === after[index])
  }
  lookup(value: Key): ReadonlySet<string> {
    return this.entries.get(value) ?? new Set()
  }
  clear(): void {
    this.entries.clear()
    this.exact = this.single !== undefined
  }
}

/** The narrowest indexed equality of a filter: its field, value and the ids holding it. */
interface Equality {
  field: string
  value: Key
  ids: ReadonlySet<string>
  /** The ids are exactly the documents the equality matches (see EqualityIndex.exact). */
  exact: boolean
}

class MemoryCollection<T extends ReadDocument> implements ReadCollection<T> {
  private readonly docs = new Map<string, T>()
  private readonly indexes: EqualityIndex[]
  /** Sort orders kept for the groups queries read, by prefix field and sort. */
  private readonly ordered = new Map<string, OrderedIndex<T>>()
  /** Counts by combinations of fields, built on demand like the orders. */
  private readonly composites = new Map<string, CompositeCount<T>>()

  /** @param orderedFrom how many candidates a sorted query must have before it reads them from an ordered index instead of sorting them */
  constructor(readonly spec: CollectionSpec, private readonly orderedFrom: number) {
    const fields = new Set((spec.indexes ?? []).map((index) => Object.keys(index)[0]).filter((f): f is string => f !== undefined))
    this.indexes = [...fields].map((field) => new EqualityIndex(field))
  }

  /** Forgets every document, keeping the object: queries made at start hold it. */
  empty(): void {
    this.docs.clear()
    for (const index of this.indexes) index.clear()
    this.ordered.clear()
    this.composites.clear()
  }

  /**
   * Documents are frozen when first handed out (get, find, stream), not when
   * stored: the guard's `current` sees them unfrozen, so the versions a
   * rebuild writes and replaces before anyone reads them are never walked to
   * be frozen.
   */
  readonly inProcess: InProcessAccess<T> = {
    get: (id) => {
      const doc = this.docs.get(id)
      return doc === undefined ? null : deepFreeze(doc)
    },
    findOne: (filter) => {
      const found = this.first(filter)
      return found === null ? null : deepFreeze(found)
    },
    find: (filter, options = {}) => this.select(filter, options),
    current: (id) => this.docs.get(id),
    store: (doc, previous) => this.store(doc, previous),
    remove: (id) => this.remove(id),
  }

  async get(id: string): Promise<T | null> {
    return this.inProcess.get(id)
  }

  async findOne(filter: Filter): Promise<T | null> {
    return this.inProcess.findOne(filter)
  }

  async find(filter: Filter, options: FindOptions = {}): Promise<T[]> {
    return this.select(filter, options)
  }

  async *stream(filter: Filter, given: FindOptions = {}): AsyncIterable<T> {
    const options = withMongoLimit(given)
    if (options.sort !== undefined) {
      yield* this.select(filter, options)
      return
    }
    const query = documentMatcher(filter)
    let skip = options.skip ?? 0
    let left = options.limit ?? Number.POSITIVE_INFINITY
    for (const doc of this.candidates(filter)) {
      if (left <= 0) return
      if (!query(doc)) continue
      if (skip > 0) { skip -= 1; continue }
      left -= 1
      yield deepFreeze(doc)
    }
  }

  async count(filter: Filter = {}): Promise<number> {
    const fields = Object.keys(filter)
    if (fields.length === 0) return this.docs.size
    // One indexed equality alone, on a field no document has held an array at: its entry holds exactly the matching ids.
    if (fields.length === 1) {
      const equality = this.narrowestEquality(filter)
      if (equality?.exact === true) return equality.ids.size
    }
    const counted = this.countedByComposite(filter, fields)
    if (counted !== undefined) return counted
    const query = documentMatcher(filter)
    let n = 0
    for (const doc of this.candidates(filter)) if (query(doc)) n += 1
    return n
  }

  async put(doc: T): Promise<void> {
    this.store(doc)
  }

  /** Every document, in no particular order. */
  values(): IterableIterator<T> {
    return this.docs.values()
  }

  store(doc: T, previous: T | null = this.docs.get(doc._id) ?? null): void {
    this.docs.set(doc._id, doc)
    if (this.ordered.size > 0) for (const order of this.ordered.values()) order.store(doc, previous)
    if (this.composites.size > 0) for (const counts of this.composites.values()) counts.store(doc, previous)
    // An index entry moves only when its value changes: a stream iterating an index meanwhile neither repeats nor skips the document.
    for (const index of this.indexes) {
      if (previous === null) index.add(doc)
      else if (!index.same(previous, doc)) {
        index.remove(previous)
        index.add(doc)
      }
    }
  }

  async delete(id: string): Promise<void> {
    this.remove(id)
  }

  remove(id: string): void {
    const previous = this.docs.get(id)
    if (previous === undefined) return
    for (const index of this.indexes) index.remove(previous)
    for (const order of this.ordered.values()) order.remove(previous)
    for (const counts of this.composites.values()) counts.remove(previous)
    this.docs.delete(id)
  }

  async deleteMany(filter: Filter): Promise<number> {
    const query = documentMatcher(filter)
    const doomed = [...this.candidates(filter)].filter((doc) => query(doc))
    for (const doc of doomed) this.remove(doc._id)
    return doomed.length
  }

  /** The first matching document, or null. */
  private first(filter: Filter): T | null {
    return this.matching(filter, 1)[0] ?? null
  }

  /**
   * The documents matching the filter, up to `enough` of them, narrowed by
   * the candidates' ids. The ids are walked directly: a generator per request
   * costs more than the few documents most lookups find.
   */
  private matching(filter: Filter, enough = Number.POSITIVE_INFINITY): T[] {
    const query = documentMatcher(filter)
    const found: T[] = []
    const ids = this.candidateIds(filter)
    if (ids === undefined) {
      for (const doc of this.docs.values()) if (query(doc) && found.push(doc) >= enough) break
    } else {
      for (const id of ids) {
        const doc = this.docs.get(id)
        if (doc !== undefined && query(doc) && found.push(doc) >= enough) break
      }
    }
    return found
  }

  private select(filter: Filter, given: FindOptions): T[] {
    const options = withMongoLimit(given)
    const ordered = options.sort === undefined ? undefined : this.inSortOrder(filter, options.sort)
    if (ordered !== undefined) return this.pageOf(ordered, filter, options)
    // Without a sort, the page's end is known before reading: stop there.
    const end = options.sort === undefined && options.limit !== undefined ? (options.skip ?? 0) + options.limit : undefined
    const matching = this.matching(filter, end)
    const sorted = options.sort === undefined ? matching : sortDocuments(matching, options.sort)
    const from = options.skip ?? 0
    const page = from === 0 && options.limit === undefined ? sorted : sorted.slice(from, options.limit === undefined ? undefined : from + options.limit)
    for (const doc of page) deepFreeze(doc)
    return page
  }

  /** The page of documents matching the filter, read in order from `docs` (already in the sort's order). */
  private pageOf(docs: Iterable<T>, filter: Filter, options: FindOptions): T[] {
    const query = documentMatcher(filter)
    const page: T[] = []
    const limit = options.limit ?? Number.POSITIVE_INFINITY
    if (limit <= 0) return page
    let skip = options.skip ?? 0
    for (const doc of docs) {
      if (!query(doc)) continue
      if (skip > 0) {
        skip -= 1
        continue
      }
      if (page.push(deepFreeze(doc)) >= limit) break
    }
    return page
  }

  /**
   * The candidates of a sorted query already in the sort's order, when they
   * are many enough for sorting them at every page to cost more than keeping
   * an order (undefined: gather and sort them).
   */
  private inSortOrder(filter: Filter, sort: Sort): Iterable<T> | undefined {
    if (typeof filter['_id'] === 'string') return undefined
    const keys = totalOrder(sort)
    if (keys === null) return undefined
    const equality = this.narrowestEquality(filter)
    if ((equality?.ids.size ?? this.docs.size) < this.orderedFrom) return undefined
    if (equality !== undefined && equality.field.includes('.')) return undefined
    const order = this.orderedIndex(equality?.field ?? null, keys)
    return order.inOrder(equality?.value, () => this.membersOf(equality)) ?? undefined
  }

  /**
   * The documents holding an equality's value (every document without one),
   * for building an order: read in place when they are much of the collection
   * (a million id lookups cost more than walking the documents), by id
   * otherwise. Documents holding an array at the field are handed over too,
   * so the order sees them and gives up.
   */
  private *membersOf(equality: Equality | undefined): Iterable<T> {
    if (equality === undefined) return yield* this.docs.values()
    if (equality.ids.size * 4 < this.docs.size) return yield* this.resolve(equality.ids)
    for (const doc of this.docs.values()) {
      const value: unknown = Reflect.get(doc, equality.field)
      if (value === equality.value || Array.isArray(value)) yield doc
    }
  }

  /**
   * A count of equalities on several one-step fields over many candidates,
   * read from the counts kept for that combination (undefined: test each).
   */
  private countedByComposite(filter: Filter, fields: readonly string[]): number | undefined {
    // `_id` names one document: nothing to gain, and a count per document to keep.
    if (fields.length < 2 || fields.includes('_id')) return undefined
    if (fields.some((field) => field.startsWith('$') || field.includes('.') || !isKey(filter[field]))) return undefined
    if ((this.narrowestEquality(filter)?.ids.size ?? this.docs.size) < this.orderedFrom) return undefined
    const sorted = [...fields].sort()
    const name = sorted.join('\u0000')
    let counts = this.composites.get(name)
    if (counts === undefined) {
      counts = new CompositeCount<T>(sorted, this.docs.values())
      this.composites.set(name, counts)
    }
    return counts.count(filter)
  }

  private orderedIndex(prefix: string | null, keys: SortKeys): OrderedIndex<T> {
    const name = JSON.stringify([prefix, keys])
    let order = this.ordered.get(name)
    if (order === undefined) {
      order = new OrderedIndex<T>(prefix, keys)
      this.ordered.set(name, order)
    }
    return order
  }

  /** The documents worth testing: narrowed by `_id`, or by the most selective indexed equality of the filter. */
  private candidates(filter: Filter): Iterable<T> {
    const ids = this.candidateIds(filter)
    return ids === undefined ? this.docs.values() : this.resolve(ids)
  }

  /** The ids worth testing (undefined: every document): the `_id` asked for, or the most selective indexed equality's. */
  private candidateIds(filter: Filter): Iterable<string> | undefined {
    const id = filter['_id']
    if (typeof id === 'string') return [id]
    return this.narrowestEquality(filter)?.ids
  }

  private narrowestEquality(filter: Filter): Equality | undefined {
    let narrowest: Equality | undefined
    for (const index of this.indexes) {
      const value = filter[index.field]
      if (!isKey(value)) continue
      const ids = index.lookup(value)
      if (narrowest === undefined || ids.size < narrowest.ids.size) narrowest = { field: index.field, value, ids, exact: index.exact }
    }
    return narrowest
  }

  /** The documents of indexed ids, each as it is when the iteration reaches it. */
  private *resolve(ids: Iterable<string>): Iterable<T> {
    for (const id of ids) {
      const doc = this.docs.get(id)
      if (doc !== undefined) yield doc
    }
  }
}

export interface MemoryReadStoreOptions {
  /** How many candidates a sorted query or a count needs before the collection keeps their order or counts (default 1,000; 0 in tests, to use them always). */
  orderedFrom?: number
}

/**
 * The embedded read store: documents in process memory, rebuilt from the
 * event store at every start. Documents are frozen before they are handed
 * out, so a caller that tries to change one in place fails loudly instead of
 * corrupting the model; only the projection guard sees one unfrozen, to
 * replace it.
 */
export class MemoryReadStore implements ReadStore {
  readonly kind = 'memory' as const
  readonly persistent = false
  private readonly collections = new Map<string, MemoryCollection<ReadDocument>>()
  private readonly checkpoints = new Map<string, number>()
  private readonly versions = new Map<string, number>()
  private readonly leases = new Map<string, { holder: string; expiresAt: number }>()
  private readonly orderedFrom: number

  constructor(options: MemoryReadStoreOptions = {}) {
    this.orderedFrom = options.orderedFrom ?? 1000
  }

  collection<T extends ReadDocument>(spec: CollectionSpec | string): ReadCollection<T> {
    // One collection object serves every caller of the name; documents are whatever the projection put.
    return this.memoryCollection(spec) as unknown as ReadCollection<T>
  }

  private memoryCollection(spec: CollectionSpec | string): MemoryCollection<ReadDocument> {
    const { name } = specOf(spec)
    let existing = this.collections.get(name)
    if (existing === undefined) {
      existing = new MemoryCollection<ReadDocument>(specOf(spec), this.orderedFrom)
      this.collections.set(name, existing)
    }
    return existing
  }

  /** Each collection with its documents, for a snapshot. */
  *contents(): Iterable<{ spec: CollectionSpec; docs: Iterable<ReadDocument> }> {
    for (const collection of this.collections.values()) yield { spec: collection.spec, docs: collection.values() }
  }

  /** Puts a document of a snapshot being loaded (no await per document). */
  load(spec: CollectionSpec, doc: ReadDocument): void {
    this.memoryCollection(spec).store(doc)
  }

  /**
   * Forgets every document and checkpoint (a snapshot that did not load to
   * its end). Collections are emptied in place, never replaced: the queries
   * built at start hold them, and would go on reading the forgotten documents
   * while the rebuild filled new ones.
   */
  clear(): void {
    for (const collection of this.collections.values()) collection.empty()
    this.checkpoints.clear()
    this.versions.clear()
  }

  async getCheckpoint(projection: string): Promise<number> {
    return this.checkpoints.get(projection) ?? 0
  }

  async setCheckpoint(projection: string, position: number): Promise<void> {
    this.checkpoints.set(projection, position)
  }

  async getProjectionVersion(projection: string): Promise<number | null> {
    return this.versions.get(projection) ?? null
  }

  async setProjectionVersion(projection: string, version: number): Promise<void> {
    this.versions.set(projection, version)
  }

  async acquireLease(name: string, holder: string, now: Date, ttlMs: number): Promise<boolean> {
    const lease = this.leases.get(name)
    if (lease !== undefined && lease.holder !== holder && lease.expiresAt > now.getTime()) return false
    this.leases.set(name, { holder, expiresAt: now.getTime() + ttlMs })
    return true
  }

  async releaseLease(name: string, holder: string): Promise<void> {
    if (this.leases.get(name)?.holder === holder) this.leases.delete(name)
  }

  /** Empties the collections in place (see clear). */
  async drop(collections: readonly string[]): Promise<void> {
    for (const name of collections) this.collections.get(name)?.empty()
  }

  async ping(): Promise<void> {}
  async close(): Promise<void> {}
}

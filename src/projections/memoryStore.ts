import { documentMatcher, sortDocuments } from './documentQuery.js'
import { deepFreeze } from '../shared/freeze.js'
import { specOf, type CollectionSpec, type Filter, type FindOptions, type ReadCollection, type ReadDocument, type ReadStore } from './readStore.js'

type Key = string | number | boolean

const isKey = (value: unknown): value is Key =>
  typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'

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

/** A stored document with its place in each index (read and replaced through the one lookup by id). */
interface Entry<T extends ReadDocument> {
  doc: T
  /** Per index, in the collection's index order: the document's node, its nodes (several keys of an array), or null (no key). */
  nodes: Array<Node<T> | Array<Node<T>> | null>
}

/**
 * A document's place under one key of an index. A removed node keeps the
 * link to the node before it at its removal, so an iteration standing on it
 * steps back to the first node still in the list and goes on from there.
 */
interface Node<T extends ReadDocument> {
  readonly entry: Entry<T> | null
  readonly posting: Posting<T> | null
  prev: Node<T> | null
  next: Node<T> | null
  removed: boolean
}

/** The documents holding one key, in the order they took it: a linked list, so adding and removing cost no hashing. */
class Posting<T extends ReadDocument> {
  private readonly head: Node<T> = { entry: null, posting: null, prev: null, next: null, removed: false }
  private tail: Node<T> = this.head
  size = 0

  append(entry: Entry<T>): Node<T> {
    const node: Node<T> = { entry, posting: this, prev: this.tail, next: null, removed: false }
    this.tail.next = node
    this.tail = node
    this.size += 1
    return node
  }

  unlink(node: Node<T>): void {
    if (node.removed || node.prev === null) return
    node.removed = true
    node.prev.next = node.next
    if (node.next === null) this.tail = node.prev
    else node.next.prev = node.prev
    this.size -= 1
  }

  /**
   * The documents, each as it is when the iteration reaches it. As with a
   * Set: one removed before it is reached is skipped, one added meanwhile is
   * reached, none is reached twice.
   */
  *documents(): Iterable<T> {
    let node = this.head.next
    while (node !== null) {
      if (!node.removed && node.entry !== null) yield node.entry.doc
      if (node.removed) {
        let back: Node<T> | null = node.prev
        while (back !== null && back.removed) back = back.prev
        node = back === null ? null : back.next
      } else node = node.next
    }
  }
}

/**
 * Equality index on one field: value → the documents holding it, in the
 * order they took the value. A replacement that keeps the indexed value (most
 * projection writes) leaves the index alone.
 */
class EqualityIndex<T extends ReadDocument> {
  private readonly entries = new Map<Key, Posting<T>>()
  private readonly parts: readonly string[]
  /** The field when the path has one step (the common case, read without building arrays). */
  private readonly single: string | undefined
  constructor(readonly field: string, private readonly slot: number) {
    this.parts = field.split('.')
    this.single = this.parts.length === 1 ? field : undefined
  }
  add(entry: Entry<T>): void {
    if (this.single !== undefined) {
      const key = singleKey(entry.doc, this.single)
      if (key === null) {
        entry.nodes[this.slot] = null
        return
      }
      if (key !== undefined) {
        entry.nodes[this.slot] = this.posting(key).append(entry)
        return
      }
    }
    const keys = keysAt(entry.doc, this.parts)
    entry.nodes[this.slot] = [...new Set(keys)].map((key) => this.posting(key).append(entry))
  }
  private posting(key: Key): Posting<T> {
    let posting = this.entries.get(key)
    if (posting === undefined) {
      posting = new Posting<T>()
      this.entries.set(key, posting)
    }
    return posting
  }
  remove(entry: Entry<T>): void {
    const nodes = entry.nodes[this.slot]
    if (nodes === null || nodes === undefined) return
    if (Array.isArray(nodes)) for (const node of nodes) node.posting?.unlink(node)
    else nodes.posting?.unlink(nodes)
    entry.nodes[this.slot] = null
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
  lookup(value: Key): Posting<T> | undefined {
    return this.entries.get(value)
  }
}

class MemoryCollection<T extends ReadDocument> implements ReadCollection<T> {
  private readonly docs = new Map<string, Entry<T>>()
  private readonly indexes: Array<EqualityIndex<T>>

  constructor(readonly spec: CollectionSpec) {
    const fields = new Set((spec.indexes ?? []).map((index) => Object.keys(index)[0]).filter((f): f is string => f !== undefined))
    this.indexes = [...fields].map((field, slot) => new EqualityIndex<T>(field, slot))
  }

  async get(id: string): Promise<T | null> {
    const entry = this.docs.get(id)
    return entry === undefined ? null : deepFreeze(entry.doc)
  }

  async findOne(filter: Filter): Promise<T | null> {
    const query = documentMatcher(filter)
    for (const doc of this.candidates(filter)) if (query(doc)) return deepFreeze(doc)
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
    if (Object.keys(filter).length === 0) return this.docs.size
    const query = documentMatcher(filter)
    let n = 0
    for (const doc of this.candidates(filter)) if (query(doc)) n += 1
    return n
  }

  async put(doc: T): Promise<void> {
    this.store(doc)
  }

  /**
   * The document as stored, for a projection about to replace it (see
   * applyAt): not frozen, so the versions a rebuild writes and replaces before
   * anyone reads them are never walked to be frozen.
   */
  current(id: string): T | undefined {
    return this.docs.get(id)?.doc
  }

  /** Every document, in no particular order. */
  *values(): IterableIterator<T> {
    for (const entry of this.docs.values()) yield entry.doc
  }

  /** Documents are frozen when first handed out (get, find, stream), not when stored. */
  store(doc: T): void {
    const entry = this.docs.get(doc._id)
    if (entry === undefined) {
      const added: Entry<T> = { doc, nodes: [] }
      this.docs.set(doc._id, added)
      for (const index of this.indexes) index.add(added)
      return
    }
    const previous = entry.doc
    entry.doc = doc
    // An index entry moves only when its value changes: a stream iterating an index meanwhile neither repeats nor skips the document.
    for (const index of this.indexes) {
      if (!index.same(previous, doc)) {
        index.remove(entry)
        index.add(entry)
      }
    }
  }

  async delete(id: string): Promise<void> {
    this.remove(id)
  }

  remove(id: string): void {
    const entry = this.docs.get(id)
    if (entry === undefined) return
    for (const index of this.indexes) index.remove(entry)
    this.docs.delete(id)
  }

  async deleteMany(filter: Filter): Promise<number> {
    const query = documentMatcher(filter)
    const doomed = [...this.candidates(filter)].filter((doc) => query(doc))
    for (const doc of doomed) this.remove(doc._id)
    return doomed.length
  }

  private select(filter: Filter, options: FindOptions): T[] {
    const query = documentMatcher(filter)
    const matching: T[] = []
    for (const doc of this.candidates(filter)) if (query(doc)) matching.push(doc)
    const sorted = options.sort === undefined ? matching : sortDocuments(matching, options.sort)
    const from = options.skip ?? 0
    const page = from === 0 && options.limit === undefined ? sorted : sorted.slice(from, options.limit === undefined ? undefined : from + options.limit)
    for (const doc of page) deepFreeze(doc)
    return page
  }

  /** The documents worth testing: narrowed by `_id`, or by the most selective indexed equality of the filter. */
  private candidates(filter: Filter): Iterable<T> {
    const id = filter['_id']
    if (typeof id === 'string') {
      const entry = this.docs.get(id)
      return entry === undefined ? [] : [entry.doc]
    }
    let narrowest: Posting<T> | undefined
    for (const index of this.indexes) {
      const value = filter[index.field]
      if (!isKey(value)) continue
      const posting = index.lookup(value)
      if (posting === undefined) return []
      if (narrowest === undefined || posting.size < narrowest.size) narrowest = posting
    }
    return narrowest === undefined ? this.values() : narrowest.documents()
  }
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

  collection<T extends ReadDocument>(spec: CollectionSpec | string): ReadCollection<T> {
    // One collection object serves every caller of the name; documents are whatever the projection put.
    return this.memoryCollection(spec) as unknown as ReadCollection<T>
  }

  private memoryCollection(spec: CollectionSpec | string): MemoryCollection<ReadDocument> {
    const { name } = specOf(spec)
    let existing = this.collections.get(name)
    if (existing === undefined) {
      existing = new MemoryCollection<ReadDocument>(specOf(spec))
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

  /** Forgets every document and checkpoint (a snapshot that did not load to its end). */
  clear(): void {
    this.collections.clear()
    this.checkpoints.clear()
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

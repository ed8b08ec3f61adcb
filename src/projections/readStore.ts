import type { Maybe } from '../shared/maybe.js'

/** A read-model document: `_id` is its key; `_position` the global position of the last event applied to it. */
export interface ReadDocument {
  _id: string
  _position?: number
}

/** A query in the MongoDB query language (both adapters understand the same operators). */
export type Filter = Record<string, unknown>
export type Sort = Record<string, 1 | -1>

export interface FindOptions {
  sort?: Sort
  skip?: number
  /** As in MongoDB, 0 means no limit. */
  limit?: number
}

/** The options with MongoDB's meaning of `limit: 0` (none) spelled out, for stores that read a limit themselves. */
export const withMongoLimit = (options: FindOptions): FindOptions => (options.limit === 0 ? { ...options, limit: undefined } : options)

export interface CollectionSpec {
  name: string
  /** Fields queried by equality or range; MongoDB gets an index per entry, the embedded store an equality index on the first field. */
  indexes?: ReadonlyArray<Readonly<Record<string, 1 | -1>>>
}

/**
 * What a collection whose documents are in process memory offers besides
 * promises: lookups answered now (documents frozen, as handed out), and the
 * projection guard's access, which reads a stored document unfrozen before
 * replacing it (read it, never edit it) and writes at once.
 */
export interface InProcessAccess<T extends ReadDocument> {
  get(id: string): T | null
  findOne(filter: Filter): T | null
  find(filter: Filter, options?: FindOptions): T[]
  /** The stored document as it is, not frozen: for the guard about to replace it. */
  current(id: string): T | undefined
  /** `previous`: the stored document it replaces, as `current` answered it (null: none), so the store need not look it up again. */
  store(doc: T, previous?: T | null): void
  remove(id: string): void
}

/** The lookups of a collection answered now where the store can, as promises otherwise. */
export interface MaybeReads<T extends ReadDocument> {
  get(id: string): Maybe<T | null>
  findOne(filter: Filter): Maybe<T | null>
  find(filter: Filter, options?: FindOptions): Maybe<T[]>
}

export interface ReadCollection<T extends ReadDocument> {
  /** Present on stores holding their documents in process memory (the embedded memory store). */
  readonly inProcess?: InProcessAccess<T>
  get(id: string): Promise<T | null>
  findOne(filter: Filter): Promise<T | null>
  find(filter: Filter, options?: FindOptions): Promise<T[]>
  /** For anything that can grow (exports): yields documents without building an array. */
  stream(filter: Filter, options?: FindOptions): AsyncIterable<T>
  count(filter?: Filter): Promise<number>
  /** Inserts or replaces the document with this `_id`. */
  put(doc: T): Promise<void>
  delete(id: string): Promise<void>
  deleteMany(filter: Filter): Promise<number>
}

export interface ReadStore {
  readonly kind: 'memory' | 'sqlite' | 'mongodb'
  /** False when documents live only in this process and are rebuilt from the event store at start. */
  readonly persistent: boolean
  collection<T extends ReadDocument>(spec: CollectionSpec | string): ReadCollection<T>
  getCheckpoint(projection: string): Promise<number>
  setCheckpoint(projection: string, position: number): Promise<void>
  /** The version of the projection whose documents this store holds; null when none was recorded. */
  getProjectionVersion(projection: string): Promise<number | null>
  /** Recorded after the documents and checkpoint it describes (a store that commits in batches keeps that order). */
  setProjectionVersion(projection: string, version: number): Promise<void>
  /**
   * A lease for work that only one of the processes sharing this store may do
   * at a time (replacing projection versions at start): true when `holder`
   * holds it until `now` + `ttlMs` (taken, or renewed by its holder), false
   * while another holder's lease runs. A holder that dies frees it when its
   * lease runs out.
   */
  acquireLease(name: string, holder: string, now: Date, ttlMs: number): Promise<boolean>
  /** Ends `holder`'s lease, if it still holds it. */
  releaseLease(name: string, holder: string): Promise<void>
  drop(collections: readonly string[]): Promise<void>
  ping(): Promise<void>
  close(): Promise<void>
}

/** A collection's lookups, without a promise where its store answers from memory: for reads on every request's path. */
export const readsOf = <T extends ReadDocument>(collection: ReadCollection<T>): MaybeReads<T> => collection.inProcess ?? collection

export const specOf = (spec: CollectionSpec | string): CollectionSpec => (typeof spec === 'string' ? { name: spec } : spec)

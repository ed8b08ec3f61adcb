import { MongoClient, MongoServerError, type Collection, type Db } from 'mongodb'
import { specOf, type CollectionSpec, type Filter, type FindOptions, type ReadCollection, type ReadDocument, type ReadStore } from './readStore.js'

const CHECKPOINTS = '_projection_checkpoints'
const VERSIONS = '_projection_versions'
const LEASES = '_leases'
/** MongoDB's duplicate key error: an upsert that found the lease held by another holder tried to insert a second one. */
const DUPLICATE_KEY = 11000

interface CheckpointDoc {
  _id: string
  position: number
}

interface LeaseDoc {
  _id: string
  holder: string
  expiresAt: Date
}

interface VersionDoc {
  _id: string
  version: number
}

interface StoredDoc {
  _id: string
  [field: string]: unknown
}

/** Documents come back exactly as a projection put them. */
const typed = <T extends ReadDocument>(doc: StoredDoc): T => doc as unknown as T

class MongoCollection<T extends ReadDocument> implements ReadCollection<T> {
  constructor(private readonly collection: Collection<StoredDoc>) {}

  async get(id: string): Promise<T | null> {
    const doc = await this.collection.findOne({ _id: id })
    return doc === null ? null : typed<T>(doc)
  }

  async findOne(filter: Filter): Promise<T | null> {
    const doc = await this.collection.findOne(filter)
    return doc === null ? null : typed<T>(doc)
  }

  async find(filter: Filter, options: FindOptions = {}): Promise<T[]> {
    const docs = await this.cursor(filter, options).toArray()
    return docs.map((doc) => typed<T>(doc))
  }

  async *stream(filter: Filter, options: FindOptions = {}): AsyncIterable<T> {
    for await (const doc of this.cursor(filter, options).batchSize(1000)) yield typed<T>(doc)
  }

  async count(filter: Filter = {}): Promise<number> {
    return Object.keys(filter).length === 0 ? this.collection.estimatedDocumentCount() : this.collection.countDocuments(filter)
  }

  async put(doc: T): Promise<void> {
    const { _id, ...fields } = doc
    await this.collection.replaceOne({ _id }, fields, { upsert: true })
  }

  async delete(id: string): Promise<void> {
    await this.collection.deleteOne({ _id: id })
  }

  async deleteMany(filter: Filter): Promise<number> {
    return (await this.collection.deleteMany(filter)).deletedCount
  }

  private cursor(filter: Filter, options: FindOptions) {
    let cursor = this.collection.find(filter)
    if (options.sort !== undefined) cursor = cursor.sort(options.sort)
    if (options.skip !== undefined) cursor = cursor.skip(options.skip)
    if (options.limit !== undefined) cursor = cursor.limit(options.limit)
    return cursor
  }
}

/** Read models in MongoDB: persistent, with the indexes each projection declares and a checkpoint per projection. */
export class MongoReadStore implements ReadStore {
  readonly kind = 'mongodb' as const
  readonly persistent = true
  private readonly indexed = new Set<string>()

  private constructor(private readonly client: MongoClient, private readonly db: Db) {}

  static async connect(url: string, database: string): Promise<MongoReadStore> {
    const client = new MongoClient(url, { ignoreUndefined: true })
    await client.connect()
    return new MongoReadStore(client, client.db(database))
  }

  /** The underlying database, for adapters that live next to the read models (GridFS). */
  get database(): Db {
    return this.db
  }

  collection<T extends ReadDocument>(spec: CollectionSpec | string): ReadCollection<T> {
    const { name, indexes = [] } = specOf(spec)
    const collection = this.db.collection<StoredDoc>(name)
    if (!this.indexed.has(name)) {
      this.indexed.add(name)
      for (const index of indexes) void collection.createIndex({ ...index }).catch(() => this.indexed.delete(name))
    }
    return new MongoCollection<T>(collection)
  }

  async getCheckpoint(projection: string): Promise<number> {
    const doc = await this.db.collection<CheckpointDoc>(CHECKPOINTS).findOne({ _id: projection })
    return doc?.position ?? 0
  }

  async setCheckpoint(projection: string, position: number): Promise<void> {
    await this.db.collection<CheckpointDoc>(CHECKPOINTS).replaceOne({ _id: projection }, { position }, { upsert: true })
  }

  async getProjectionVersion(projection: string): Promise<number | null> {
    const doc = await this.db.collection<VersionDoc>(VERSIONS).findOne({ _id: projection })
    return doc?.version ?? null
  }

  async setProjectionVersion(projection: string, version: number): Promise<void> {
    await this.db.collection<VersionDoc>(VERSIONS).replaceOne({ _id: projection }, { version }, { upsert: true })
  }

  async acquireLease(name: string, holder: string, now: Date, ttlMs: number): Promise<boolean> {
    try {
      const lease = await this.db.collection<LeaseDoc>(LEASES).findOneAndUpdate(
        { _id: name, $or: [{ holder }, { expiresAt: { $lte: now } }] },
        { $set: { holder, expiresAt: new Date(now.getTime() + ttlMs) } },
        { upsert: true, returnDocument: 'after' },
      )
      return lease?.holder === holder
    } catch (error) {
      if (error instanceof MongoServerError && error.code === DUPLICATE_KEY) return false
      throw error
    }
  }

  async releaseLease(name: string, holder: string): Promise<void> {
    await this.db.collection<LeaseDoc>(LEASES).deleteOne({ _id: name, holder })
  }

  async drop(collections: readonly string[]): Promise<void> {
    const existing = new Set((await this.db.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name))
    for (const name of collections) {
      if (existing.has(name)) await this.db.dropCollection(name)
      this.indexed.delete(name)
    }
  }

  async ping(): Promise<void> {
    await this.db.command({ ping: 1 })
  }

  async close(): Promise<void> {
    await this.client.close()
  }
}

import { type DomainEventType, type RecordedEvent, type RecordedOf } from '../events/catalogue.js'
import type { CollectionSpec, ReadCollection, ReadDocument, ReadStore } from './readStore.js'

/** A read model: which events it handles and how each changes its documents. */
export interface Projection {
  name: string
  /**
   * Which code made its documents. Bump it when the documents change for the
   * same events (fields, meaning, collections): a persistent read store
   * recorded with another version drops and rebuilds this projection at the
   * next start (ProjectionRunner.start). An added index needs no bump: each
   * store creates the declared indexes a collection lacks when it opens it
   * (the SQLite store filling a new field's column from the documents). test/projections/versions.test.ts
   * asks for the decision whenever the projection's file changes.
   */
  version: number
  handles: readonly DomainEventType[]
  collections: readonly CollectionSpec[]
  project(store: ReadStore, event: RecordedEvent, position: number): Promise<void>
}

/** Declares a projection whose `project` sees only the event types it handles, narrowed. */
export const defineProjection = <T extends DomainEventType>(definition: {
  name: string
  /** 1 when omitted. */
  version?: number
  handles: readonly T[]
  collections: readonly CollectionSpec[]
  project(store: ReadStore, event: RecordedOf<T>, position: number): Promise<void>
}): Projection => {
  const handled: ReadonlySet<string> = new Set(definition.handles)
  const handles = (event: RecordedEvent): event is RecordedOf<T> => handled.has(event.type)
  return {
    name: definition.name,
    version: definition.version ?? 1,
    handles: definition.handles,
    collections: definition.collections,
    // No async layer of its own: a rebuild calls this a few million times.
    project: (store, event, position) => (handles(event) ? definition.project(store, event, position) : Promise.resolve()),
  }
}

const done = Promise.resolve()

/**
 * The idempotency guard of every projection write: a document remembers the
 * position of the last event applied to it, and an event at or before that
 * position (a redelivery after a crash) changes nothing. Returning null deletes.
 * `change` answers a new object, which the store then owns: `_id` and
 * `_position` are written onto it rather than onto a copy (the same keys in
 * the same order a copy would have); answering `current` itself, or any
 * frozen object, is copied first. `change` must not edit `current`.
 */
export const applyAt = <T extends ReadDocument>(
  collection: ReadCollection<T>,
  id: string,
  position: number,
  change: (current: T | null) => T | null,
): Promise<void> => {
  // The embedded store's documents are read and written at once: a rebuild neither awaits nor freezes the versions it replaces.
  const local = collection.inProcess
  if (local === undefined) return applyThrough(collection, id, position, change)
  try {
    const current = local.current(id) ?? null
    if (current !== null && (current._position ?? 0) >= position) return done
    const next = change(current)
    if (next === null) {
      if (current !== null) local.remove(id)
    } else local.store(stamped(next, current, id, position), current)
    return done
  } catch (error) {
    return Promise.reject(error)
  }
}

const applyThrough = async <T extends ReadDocument>(
  collection: ReadCollection<T>,
  id: string,
  position: number,
  change: (current: T | null) => T | null,
): Promise<void> => {
  const current = await collection.get(id)
  if (current !== null && (current._position ?? 0) >= position) return
  const next = change(current)
  if (next === null) {
    if (current !== null) await collection.delete(id)
    return
  }
  await collection.put(stamped(next, current, id, position))
}

/**
 * `_position` is written onto a document that has the field, and a document
 * without it is copied with it. Why: in V8 (Node 20) a field added to an
 * object made by a literal pushes every later spread copy of it (`{ ...doc,
 * status }`) onto a hidden class of its own: each such document then carries
 * its own (about 0.5 KiB) and is copied several times slower. The hot
 * projections write `_position` in their literals, so nothing is copied there.
 */
const stamped = <T extends ReadDocument>(next: T, current: T | null, id: string, position: number): T => {
  if (next === current || Object.isFrozen(next) || !Object.hasOwn(next, '_position')) return Object.assign({}, next, { _id: id, _position: position })
  next._id = id
  next._position = position
  return next
}

/** The document a projection is about to replace, as the guard sees it (unfrozen in the embedded store): read it, never edit it. */
export const currentOf = <T extends ReadDocument>(collection: ReadCollection<T>, id: string): Promise<T | null> =>
  collection.inProcess === undefined ? collection.get(id) : Promise.resolve(collection.inProcess.current(id) ?? null)

/** Changes an existing document only; an event about a document the model never saw is ignored. */
export const updateAt = <T extends ReadDocument>(
  collection: ReadCollection<T>,
  id: string,
  position: number,
  change: (current: T) => T | null,
): Promise<void> => applyAt(collection, id, position, (current) => (current === null ? null : change(current)))

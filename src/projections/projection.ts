import { isEventOf, type DomainEventType, type RecordedEvent, type RecordedOf } from '../events/catalogue.js'
import type { CollectionSpec, ReadCollection, ReadDocument, ReadStore } from './readStore.js'

/** A read model: which events it handles and how each changes its documents. */
export interface Projection {
  name: string
  handles: readonly DomainEventType[]
  collections: readonly CollectionSpec[]
  project(store: ReadStore, event: RecordedEvent, position: number): Promise<void>
}

/** Declares a projection whose `project` sees only the event types it handles, narrowed. */
export const defineProjection = <T extends DomainEventType>(definition: {
  name: string
  handles: readonly T[]
  collections: readonly CollectionSpec[]
  project(store: ReadStore, event: RecordedOf<T>, position: number): Promise<void>
}): Projection => ({
  name: definition.name,
  handles: definition.handles,
  collections: definition.collections,
  project: async (store, event, position) => {
    if (isEventOf(event, definition.handles)) await definition.project(store, event, position)
  },
})

/**
 * The idempotency guard of every projection write: a document remembers the
 * position of the last event applied to it, and an event at or before that
 * position (a redelivery after a crash) changes nothing. Returning null deletes.
 */
export const applyAt = async <T extends ReadDocument>(
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
  await collection.put({ ...next, _id: id, _position: position })
}

/** Changes an existing document only; an event about a document the model never saw is ignored. */
export const updateAt = <T extends ReadDocument>(
  collection: ReadCollection<T>,
  id: string,
  position: number,
  change: (current: T) => T | null,
): Promise<void> => applyAt(collection, id, position, (current) => (current === null ? null : change(current)))

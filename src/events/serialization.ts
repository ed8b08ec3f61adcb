import { isKnownEventType, type RecordedEvent } from './catalogue.js'
import { schemaVersionOf, upcast } from './upcasters.js'
import type { EventMetadata } from './types.js'

/** What an adapter read back: the stored form before upcasting. */
export interface StoredEvent {
  id: string
  streamId: string
  revision: number
  position: number
  type: string
  data: unknown
  metadata: EventMetadata
  recordedAt: string
}

/**
 * An event a newer version of the service wrote (after a rollback, or a data
 * directory copied from a newer installation): reading it as an older shape
 * would misread it, and skipping a type this code does not know would leave
 * read models and decisions without it, so whatever reads it stops, saying
 * which event and why. The adapters refuse a newer schema version; the
 * projection runner and the command handler refuse an unknown type (the
 * stores themselves carry any type: their contract suites use made-up ones).
 */
export class UnreadableEventError extends Error {
  constructor(event: { id: string; position: number; streamId: string }, why: string) {
    super(`event ${event.id} at position ${event.position} (stream ${event.streamId}) cannot be read: ${why}; run the version that wrote it`)
    this.name = 'UnreadableEventError'
  }
}

/** Throws UnreadableEventError for an event whose type this version of the service does not know. */
export const requireKnownType = (event: { id: string; position: number; streamId: string; type: string }): void => {
  if (!isKnownEventType(event.type)) throw new UnreadableEventError(event, `its type ${event.type} is unknown to this version of the service`)
}

/**
 * The trust boundary of the log: stored events were type-checked when they were
 * appended, and upcasters bring older schema versions to the current shape, so
 * the stored JSON is read back as the catalogue's types.
 */
export const toRecorded = (stored: StoredEvent): RecordedEvent => {
  if (stored.metadata.schemaVersion > schemaVersionOf(stored.type)) {
    throw new UnreadableEventError(stored, `its schema version ${stored.metadata.schemaVersion} is newer than this version of the service reads (${schemaVersionOf(stored.type)})`)
  }
  const { type, data, schemaVersion } = upcast(stored.type, stored.data, stored.metadata.schemaVersion)
  const recorded = {
    id: stored.id,
    streamId: stored.streamId,
    revision: stored.revision,
    position: stored.position,
    type,
    data,
    // The parsed metadata itself when no upcaster moved the version (every event of a current log): one object less per event read.
    metadata: stored.metadata.schemaVersion === schemaVersion ? stored.metadata : { ...stored.metadata, schemaVersion },
    recordedAt: stored.recordedAt,
  }
  return recorded as RecordedEvent
}

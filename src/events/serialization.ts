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
 * directory copied from a newer installation): skipping it would leave read
 * models and decisions without it, and reading it as an older shape would
 * misread it, so whatever reads it stops, saying which event and why.
 */
export class UnreadableEventError extends Error {
  constructor(stored: StoredEvent, why: string) {
    super(`event ${stored.id} at position ${stored.position} (stream ${stored.streamId}) cannot be read: ${why}; run the version that wrote it`)
    this.name = 'UnreadableEventError'
  }
}

/**
 * The trust boundary of the log: stored events were type-checked when they were
 * appended, and upcasters bring older schema versions to the current shape, so
 * the stored JSON is read back as the catalogue's types.
 */
export const toRecorded = (stored: StoredEvent): RecordedEvent => {
  if (!isKnownEventType(stored.type)) {
    throw new UnreadableEventError(stored, `its type ${stored.type} is unknown to this version of the service`)
  }
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

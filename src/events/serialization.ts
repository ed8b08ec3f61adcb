import { upcast } from './upcasters.js'
import type { RecordedEvent } from './catalogue.js'
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
 * The trust boundary of the log: stored events were type-checked when they were
 * appended, and upcasters bring older schema versions to the current shape, so
 * the stored JSON is read back as the catalogue's types.
 */
export const toRecorded = (stored: StoredEvent): RecordedEvent => {
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

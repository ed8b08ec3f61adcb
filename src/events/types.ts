/** A domain event as deciders produce it: a past-tense type and plain JSON data. */
export interface Event<Type extends string = string, Data extends object = object> {
  type: Type
  data: Data
}

/** A creation's `Idempotency-Key` and a hash of its request, recorded on the created event. */
export interface RequestKey {
  key: string
  requestHash: string
}

/** Metadata carried by every stored event. */
export interface EventMetadata {
  organizationId: string | null
  actorId: string | null
  correlationId: string
  causationId: string | null
  occurredAt: string
  schemaVersion: number
}

/** An event ready to append: id and metadata assigned by the command handler. */
export interface NewEvent<E extends Event = Event> {
  id: string
  type: E['type']
  data: E['data']
  metadata: EventMetadata
}

/** Where a stored event sits: its stream, its revision in it, and its global position. */
export interface EventEnvelope {
  id: string
  streamId: string
  /** 0-based number of the event in its stream. */
  revision: number
  /** Unique, strictly increasing position in the global log (SQLite rowid, EventStoreDB prepare position). */
  position: number
  metadata: EventMetadata
  recordedAt: string
}

/** A stored event; distributes over a union so that `switch (event.type)` narrows `data`. */
export type Recorded<E extends Event = Event> = E extends Event ? E & EventEnvelope : never

/** NO_STREAM: the stream must not exist. ANY: no check. A number: the revision of the stream's last event. */
export type ExpectedRevision = 'no_stream' | 'any' | 'stream_exists' | number

export interface AppendResult {
  /** Revision of the last appended event. */
  revision: number
  /** Global position of the last appended event. */
  position: number
}

export interface ReadStreamOptions {
  direction?: 'forwards' | 'backwards'
  /** Inclusive start revision (from the start, or from the end when reading backwards, by default). */
  fromRevision?: number
  maxCount?: number
}

export interface ReadAllOptions {
  direction?: 'forwards' | 'backwards'
  /** Exclusive: forwards gives events after this position, backwards events before it. */
  after?: number
  maxCount?: number
}

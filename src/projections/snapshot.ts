import { createHash } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import readline from 'node:readline'
import { once } from 'node:events'
import type { EventStore } from '../events/store.js'
import { errorMessage } from '../shared/errors.js'
import type { MemoryReadStore } from './memoryStore.js'
import type { CollectionSpec, ReadDocument } from './readStore.js'

/**
 * A snapshot of the embedded read store, written when the service stops and
 * loaded at the next start, so a start catches up from the snapshot's
 * position instead of projecting the whole log again.
 *
 * It is only ever a shortcut: a snapshot is used when it was made by exactly
 * this code (a fingerprint of every source file, so a new projection or a
 * changed rule rebuilds from zero) and over this log (the event at its
 * position has the id it recorded); anything else, or a file that does not
 * read to its end or whose digest does not match, is ignored and the read
 * store is rebuilt from the log.
 * A crash leaves no new snapshot, and catching up from an older one gives the
 * same documents, since projections only add what the events after it say.
 *
 * The file is NDJSON, written as a stream (the read store can be larger than
 * the heap can stringify at once): a header line, then one line per
 * collection and one per document, an end line with the document count, and
 * a trailer line with the SHA-256 of every byte before it. The digest is what
 * makes a snapshot trusted: a file changed in place while staying valid JSON
 * (a flipped digit, a hand edit) would otherwise load as true and be served
 * until the next rebuild. Format 1 had no trailer, so it is never loaded.
 */
export interface SnapshotHeader {
  format: typeof FORMAT
  fingerprint: string
  position: number
  eventId: string | null
  checkpoints: Record<string, number>
  createdAt: string
}

const FORMAT = 2

type Line =
  | { collection: CollectionSpec }
  | { doc: ReadDocument }
  | { end: number }
  | { sha256: string }

/** The last line: the SHA-256, in hex, of every byte before it. */
const trailer = (sha256: string): string => `${JSON.stringify({ sha256 } satisfies Line)}\n`

const TRAILER_BYTES = Buffer.byteLength(trailer('0'.repeat(64)))

const fingerprints = new Map<string, string>()

/** A digest of every file of the running code (`src` as shipped, or a build of it), computed once per process. */
export const codeFingerprint = (root: string): string => {
  const known = fingerprints.get(root)
  if (known !== undefined) return known
  const hash = createHash('sha256')
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const full = path.join(dir, entry.name)
      if (entry.isDirectory()) walk(full)
      else if (entry.isFile()) hash.update(path.relative(root, full)).update('\0').update(fs.readFileSync(full)).update('\0')
    }
  }
  walk(root)
  const digest = hash.digest('hex')
  fingerprints.set(root, digest)
  return digest
}

const eventIdAt = async (eventStore: EventStore, position: number): Promise<string | null> => {
  if (position <= 0) return null
  for await (const event of eventStore.readAll({ after: position - 1, maxCount: 1 })) return event.position === position ? event.id : null
  return null
}

/** Temporary files of writes that a kill cut short (a stop that outlived its grace period). */
const removeLeftovers = (file: string) => {
  const dir = path.dirname(file)
  const prefix = `${path.basename(file)}.`
  for (const name of fs.readdirSync(dir)) if (name.startsWith(prefix) && name.endsWith('.tmp')) fs.rmSync(path.join(dir, name), { force: true })
}

/**
 * Writes the store's documents and the projections' positions to `file`
 * (through a temporary file renamed into place once flushed to disk).
 */
export const saveSnapshot = async (
  store: MemoryReadStore,
  file: string,
  meta: { fingerprint: string; position: number; checkpoints: Record<string, number>; eventStore: EventStore; now: Date },
): Promise<{ documents: number; bytes: number }> => {
  const header: SnapshotHeader = {
    format: FORMAT, fingerprint: meta.fingerprint, position: meta.position, eventId: await eventIdAt(meta.eventStore, meta.position),
    checkpoints: meta.checkpoints, createdAt: meta.now.toISOString(),
  }
  removeLeftovers(file)
  const temporary = `${file}.${process.pid}.tmp`
  const out = fs.createWriteStream(temporary)
  const digest = createHash('sha256')
  // Lines are written in chunks of about a megabyte: one write per document would cost more than its JSON.
  let chunk: string[] = []
  let chunkLength = 0
  const flush = async () => {
    if (chunk.length === 0) return
    const bytes = Buffer.from(chunk.join(''), 'utf8')
    chunk = []
    chunkLength = 0
    digest.update(bytes)
    if (!out.write(bytes)) await once(out, 'drain')
  }
  const write = async (line: object) => {
    const text = `${JSON.stringify(line)}\n`
    chunk.push(text)
    chunkLength += text.length
    if (chunkLength >= 1 << 20) await flush()
  }
  let documents = 0
  try {
    await write(header)
    for (const { spec, docs } of store.contents()) {
      await write({ collection: spec } satisfies Line)
      for (const doc of docs) {
        await write({ doc } satisfies Line)
        documents += 1
      }
    }
    await write({ end: documents } satisfies Line)
    await flush()
    // The trailer is outside what it digests, so it is written after the last hashed chunk.
    out.end(trailer(digest.digest('hex')), 'utf8')
    await once(out, 'finish')
    const handle = fs.openSync(temporary, 'r')
    fs.fsyncSync(handle)
    fs.closeSync(handle)
    fs.renameSync(temporary, file)
  } catch (error) {
    out.destroy()
    fs.rmSync(temporary, { force: true })
    throw error
  }
  return { documents, bytes: fs.statSync(file).size }
}

/**
 * `damaged` tells a file that is not what was written (cut short, unreadable,
 * digest missing or not matching) from one that is fine but not for this
 * start (no file, other code, another log, an older format).
 */
export type SnapshotOutcome =
  | { loaded: true; position: number; documents: number }
  | { loaded: false; reason: string; damaged: boolean }

const isObject = (value: unknown): value is object => typeof value === 'object' && value !== null

const isDocument = (value: unknown): value is ReadDocument => isObject(value) && typeof Reflect.get(value, '_id') === 'string'

const isSpec = (value: unknown): value is CollectionSpec => isObject(value) && typeof Reflect.get(value, 'name') === 'string'

const isHeader = (value: unknown, fingerprint: string): value is SnapshotHeader =>
  isObject(value) && Reflect.get(value, 'format') === FORMAT && Reflect.get(value, 'fingerprint') === fingerprint

const formatOf = (value: unknown): unknown => (isObject(value) ? Reflect.get(value, 'format') : undefined)

/**
 * Hashes the bytes of `input` as they are read, all but the last
 * TRAILER_BYTES, which are kept aside: at the end of a file as written they
 * are the trailer, which must then be the one line that records that digest.
 * Raw bytes, not the lines read from them, so that what is verified is
 * exactly what was written.
 */
const trailerCheck = (input: fs.ReadStream) => {
  const hash = createHash('sha256')
  let held = Buffer.alloc(0)
  input.on('data', (chunk: Buffer | string) => {
    const bytes = Buffer.concat([held, typeof chunk === 'string' ? Buffer.from(chunk) : chunk])
    const cut = Math.max(0, bytes.length - TRAILER_BYTES)
    hash.update(bytes.subarray(0, cut))
    held = bytes.subarray(cut)
  })
  return { matches: (): boolean => held.equals(Buffer.from(trailer(hash.digest('hex')))) }
}

/**
 * Loads `file` into an empty store when it belongs to this code and this log;
 * on any doubt leaves the store empty and says why.
 */
export const loadSnapshot = async (
  store: MemoryReadStore,
  file: string,
  expected: { fingerprint: string; eventStore: EventStore },
): Promise<SnapshotOutcome> => {
  if (!fs.existsSync(file)) return { loaded: false, reason: 'no snapshot', damaged: false }
  // Documents are loaded as they are read, before the digest at the end is known: a refusal forgets them all.
  const damaged = (reason: string): SnapshotOutcome => {
    store.clear()
    return { loaded: false, reason, damaged: true }
  }
  const input = fs.createReadStream(file)
  const check = trailerCheck(input)
  const lines = readline.createInterface({ input, crlfDelay: Infinity })
  let header: SnapshotHeader | undefined
  let collection: CollectionSpec | undefined
  let documents = 0
  let ended = false
  let sealed = false
  let trailing = false
  try {
    for await (const text of lines) {
      if (sealed) {
        trailing = true
        break
      }
      const line: unknown = JSON.parse(text)
      if (ended) {
        // Only whether it is there: the bytes read are checked against it at the end (trailerCheck).
        sealed = isObject(line) && typeof Reflect.get(line, 'sha256') === 'string'
        if (!sealed) break
        continue
      }
      if (header === undefined) {
        const format = formatOf(line)
        if (format !== FORMAT) {
          return { loaded: false, reason: typeof format === 'number' ? `format ${format}, this code reads format ${FORMAT}` : 'made by other code', damaged: false }
        }
        if (!isHeader(line, expected.fingerprint)) return { loaded: false, reason: 'made by other code', damaged: false }
        if (line.position > await expected.eventStore.headPosition() || await eventIdAt(expected.eventStore, line.position) !== line.eventId) {
          return { loaded: false, reason: 'made over another log', damaged: false }
        }
        header = line
        continue
      }
      if (!isObject(line)) break
      const doc: unknown = Reflect.get(line, 'doc')
      const spec: unknown = Reflect.get(line, 'collection')
      if (isDocument(doc) && collection !== undefined) {
        store.load(collection, doc)
        documents += 1
      } else if (isSpec(spec)) {
        collection = spec
      } else if (Reflect.get(line, 'end') === documents) {
        ended = true
      } else {
        break
      }
    }
  } catch (error) {
    return damaged(`unreadable: ${errorMessage(error)}`)
  } finally {
    lines.close()
    input.destroy()
  }
  if (header === undefined || !ended) return damaged('incomplete')
  if (!sealed) return damaged('no digest')
  if (trailing) return damaged('content after the digest')
  if (!check.matches()) return damaged('digest mismatch')
  for (const [name, position] of Object.entries(header.checkpoints)) await store.setCheckpoint(name, position)
  return { loaded: true, position: header.position, documents }
}

export interface SnapshotLogger {
  info(object: object, message: string): void
  warn(object: object, message: string): void
}

/**
 * The embedded read store's snapshot at `DATA_DIR/read-store.snapshot`:
 * `restore` before the projections start, `save` after they stopped.
 */
export const readStoreSnapshots = (deps: {
  file: string
  store: MemoryReadStore
  eventStore: EventStore
  positions: () => { position: number; checkpoints: Record<string, number> }
  logger: SnapshotLogger
  now: () => Date
}) => {
  const fingerprintOnce = () => codeFingerprint(path.resolve(import.meta.dirname, '..'))
  return {
    async restore(): Promise<SnapshotOutcome> {
      const started = performance.now()
      const outcome = await loadSnapshot(deps.store, deps.file, { fingerprint: fingerprintOnce(), eventStore: deps.eventStore })
      const ms = Math.round(performance.now() - started)
      if (outcome.loaded) deps.logger.info({ position: outcome.position, documents: outcome.documents, ms }, 'read store loaded from its snapshot')
      else if (outcome.damaged) deps.logger.warn({ reason: outcome.reason, ms }, 'read store snapshot damaged: rebuilding from the log')
      else if (outcome.reason !== 'no snapshot') deps.logger.info({ reason: outcome.reason, ms }, 'read store snapshot not used: rebuilding from the log')
      return outcome
    },
    async save(): Promise<void> {
      const started = performance.now()
      const { position, checkpoints } = deps.positions()
      try {
        const written = await saveSnapshot(deps.store, deps.file, { fingerprint: fingerprintOnce(), position, checkpoints, eventStore: deps.eventStore, now: deps.now() })
        deps.logger.info({ position, ...written, ms: Math.round(performance.now() - started) }, 'read store snapshot written')
      } catch (error) {
        // Without a snapshot the next start rebuilds from the log: slower, never wrong.
        deps.logger.warn({ err: error }, 'read store snapshot not written')
      }
    },
  }
}

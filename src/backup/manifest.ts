import { createHash } from 'node:crypto'
import { once } from 'node:events'
import { createReadStream, createWriteStream } from 'node:fs'
import fs from 'node:fs/promises'
import path from 'node:path'
import { pipeline } from 'node:stream/promises'
import Database from 'better-sqlite3'
import { digestStream } from '../shared/digestStream.js'
import { syncPath } from '../shared/durableFs.js'
import { errorCode } from '../shared/errors.js'

/** What a backup or a restore refuses or finds wrong: the operator's to act on, said in one line. */
export class BackupError extends Error {
  override readonly name = 'BackupError'
}

/** A failed system call (a folder the user may not read, a full disk) as the one line an operator acts on; anything else as it is. */
export const asBackupError = (error: unknown): unknown =>
  error instanceof Error && !(error instanceof BackupError) && typeof Reflect.get(error, 'syscall') === 'string' ? new BackupError(error.message) : error

export const BACKUP_FORMAT = 1
/** The backup's summary, written last: a directory without it is not a finished backup. */
export const SUMMARY_FILE = 'backup.json'
/** One JSON line per file copied, in the order copied. */
export const MANIFEST_FILE = 'manifest.jsonl'
/** The copies themselves, at the paths they have in DATA_DIR. */
export const DATA_FOLDER = 'data'
export const EVENT_LOG = 'events.sqlite'
export const READ_STORE = 'read-store.sqlite'
export const FILES_FOLDER = 'files'

export interface ManifestEntry {
  /** Relative to DATA_DIR, with `/` between folders. */
  path: string
  bytes: number
  sha256: string
}

export interface EventLogFacts {
  /** The position of the last event: the log's state the backup holds. */
  head: number
  events: number
}

export interface BackupSummary {
  format: typeof BACKUP_FORMAT
  createdAt: string
  eventLog: EventLogFacts
  entries: number
  bytes: number
  manifestSha256: string
}

export const mib = (bytes: number): string => `${(bytes / 1048576).toFixed(1)} MiB`

export interface Digest {
  bytes: number
  sha256: string
}

/** Files copied at once by a backup or a restore: enough to keep the thread pool's fsyncs busy. */
export const PARALLEL_COPIES = 8

/** Copies a file as a stream, hashing what it writes, and makes the copy durable. The target must not exist. */
export const copyHashed = async (from: string, to: string): Promise<Digest> => {
  const measure = digestStream()
  const writer = createWriteStream(to, { flags: 'wx', mode: 0o600 })
  try {
    await pipeline(createReadStream(from), measure.stream, writer)
  } catch (error) {
    // A failed pipeline can settle before the destroyed writer has opened (and so created) the target: removing it earlier would leave it behind.
    if (!writer.closed) await once(writer, 'close').catch(() => undefined)
    if (errorCode(error) !== 'EEXIST') await fs.rm(to, { force: true })
    throw error
  }
  await syncPath(to)
  return measure.digest()
}

export const hashFile = async (file: string): Promise<Digest> => {
  const hash = createHash('sha256')
  let bytes = 0
  for await (const chunk of createReadStream(file)) {
    if (!Buffer.isBuffer(chunk)) throw new TypeError(`${file} read as text`)
    hash.update(chunk)
    bytes += chunk.length
  }
  return { bytes, sha256: hash.digest('hex') }
}

/** Enough pages for any database: the whole copy in one step, inside one read transaction, so writers elsewhere cannot make it start over. */
const ALL_PAGES = 0x7fffffff

/**
 * SQLite's online backup of a database another process may be writing: a
 * consistent copy of its last commit, WAL included, as one file.
 */
export const backupDatabase = async (source: string, target: string): Promise<void> => {
  const db = new Database(source, { readonly: true, fileMustExist: true, timeout: 5000 })
  try {
    await db.backup(target, { progress: () => ALL_PAGES })
  } finally {
    db.close()
  }
  // The copy keeps the source's WAL mode, in which even a read-only look leaves -wal and -shm files beside it; the service sets WAL again when it opens the file.
  const copy = new Database(target, { fileMustExist: true })
  try {
    copy.pragma('journal_mode = DELETE')
  } finally {
    copy.close()
  }
  await fs.chmod(target, 0o600)
  await syncPath(target)
}

/** Checks a copied database page by page, and, for the event log, what it holds. */
export const checkDatabase = (file: string): void => {
  const db = new Database(file, { readonly: true, fileMustExist: true })
  try {
    const problems = db.pragma('quick_check', { simple: false })
    const first: unknown = Array.isArray(problems) ? problems[0] : undefined
    const verdict = typeof first === 'object' && first !== null ? Object.values(first)[0] : undefined
    if (verdict !== 'ok') throw new BackupError(`${path.basename(file)} is damaged: ${JSON.stringify(problems)}`)
  } finally {
    db.close()
  }
}

export const eventLogFacts = (file: string): EventLogFacts => {
  const db = new Database(file, { readonly: true, fileMustExist: true })
  try {
    const row = db.prepare<[], { head: number | null; events: number }>('SELECT MAX(position) AS head, COUNT(*) AS events FROM events').get()
    return { head: row?.head ?? 0, events: row?.events ?? 0 }
  } catch (error) {
    throw new BackupError(`${path.basename(file)} is not this service's event log: ${error instanceof Error ? error.message : String(error)}`)
  } finally {
    db.close()
  }
}

/**
 * A manifest path a restore may write: relative, normalised, inside DATA_DIR.
 * A backup is data from outside the process, and a path with `..` in it
 * would write wherever it points.
 */
export const isSafeEntryPath = (entry: string): boolean =>
  entry !== '' && !entry.startsWith('/') && !entry.includes('\\') && !entry.includes('\0')
  && entry.split('/').every((part) => part !== '' && part !== '.' && part !== '..')

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)

const isCount = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value) && value >= 0

const isSha256 = (value: unknown): value is string => typeof value === 'string' && /^[0-9a-f]{64}$/.test(value)

export const parseManifestEntry = (line: string, lineNumber: number): ManifestEntry => {
  let parsed: unknown
  try {
    parsed = JSON.parse(line)
  } catch {
    throw new BackupError(`${MANIFEST_FILE} line ${lineNumber} is not JSON`)
  }
  if (!isRecord(parsed)) throw new BackupError(`${MANIFEST_FILE} line ${lineNumber} is not an entry`)
  const { path: entryPath, bytes, sha256 } = parsed
  if (typeof entryPath !== 'string' || !isSafeEntryPath(entryPath) || !isCount(bytes) || !isSha256(sha256)) {
    throw new BackupError(`${MANIFEST_FILE} line ${lineNumber} is not a valid entry (a relative path inside DATA_DIR, bytes, sha256)`)
  }
  return { path: entryPath, bytes, sha256 }
}

export const parseSummary = (text: string): BackupSummary => {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    throw new BackupError(`${SUMMARY_FILE} is not JSON`)
  }
  if (!isRecord(parsed)) throw new BackupError(`${SUMMARY_FILE} is not a backup summary`)
  const { format, createdAt, eventLog, entries, bytes, manifestSha256 } = parsed
  if (format !== BACKUP_FORMAT) throw new BackupError(`${SUMMARY_FILE} has format ${JSON.stringify(format)}; this release reads format ${BACKUP_FORMAT}`)
  if (typeof createdAt !== 'string' || !isRecord(eventLog) || !isCount(eventLog['head']) || !isCount(eventLog['events'])
    || !isCount(entries) || !isCount(bytes) || !isSha256(manifestSha256)) {
    throw new BackupError(`${SUMMARY_FILE} is not a backup summary`)
  }
  return { format, createdAt, eventLog: { head: eventLog['head'], events: eventLog['events'] }, entries, bytes, manifestSha256 }
}

import { createReadStream } from 'node:fs'
import fs from 'node:fs/promises'
import path from 'node:path'
import readline from 'node:readline'
import { lockDataDir } from '../shared/dataDirLock.js'
import { syncPath } from '../shared/durableFs.js'
import { errorCode } from '../shared/errors.js'
import { mapInOrder } from '../shared/mapInOrder.js'
import {
  asBackupError, BackupError, DATA_FOLDER, EVENT_LOG, MANIFEST_FILE, SUMMARY_FILE,
  checkDatabase, copyHashed, eventLogFacts, hashFile, mib, PARALLEL_COPIES, parseManifestEntry, parseSummary, type BackupSummary, type Digest, type ManifestEntry,
} from './manifest.js'

/** Written into DATA_DIR before a restore copies anything and removed once all is copied and checked: no service starts on half a restore. */
export const RESTORE_MARKER = 'restore.incomplete'

export interface RestoreOptions {
  backup: string
  dataDir: string
  now: Date
  /** Verify the backup without writing anything. */
  checkOnly?: boolean
  report?: (line: string) => void
}

const readSummary = async (backup: string): Promise<BackupSummary> => {
  try {
    return parseSummary(await fs.readFile(path.join(backup, SUMMARY_FILE), 'utf8'))
  } catch (error) {
    if (errorCode(error) === 'ENOENT') throw new BackupError(`${backup} is not a finished backup (no ${SUMMARY_FILE})`)
    throw error
  }
}

async function* manifestEntries(file: string): AsyncGenerator<ManifestEntry> {
  const lines = readline.createInterface({ input: createReadStream(file), crlfDelay: Infinity })
  let lineNumber = 0
  for await (const line of lines) {
    lineNumber++
    yield parseManifestEntry(line, lineNumber)
  }
}

const sameDigest = (entry: ManifestEntry, digest: Digest): boolean => entry.bytes === digest.bytes && entry.sha256 === digest.sha256

/** An empty DATA_DIR (made if missing), taken for this process: a restore never writes over data. */
const emptyDataDir = async (dataDir: string, now: Date) => {
  await fs.mkdir(dataDir, { recursive: true, mode: 0o700 })
  // A fresh volume mounted as DATA_DIR holds its file system's lost+found: empty for a restore.
  const present = (await fs.readdir(dataDir)).filter((name) => name !== 'lost+found')
  if (present.length > 0) throw new BackupError(`DATA_DIR ${dataDir} is not empty (${present.length} entries): a restore goes into an empty or new DATA_DIR`)
  const lock = lockDataDir(dataDir, 'restore', now)
  // Another restore or a start may have taken it between the look and the lock.
  const others = (await fs.readdir(dataDir)).filter((name) => !name.startsWith('instance.lock') && name !== 'lost+found')
  if (others.length > 0) {
    lock.release()
    throw new BackupError(`DATA_DIR ${dataDir} is not empty (${others.length} entries): a restore goes into an empty or new DATA_DIR`)
  }
  return lock
}

/**
 * Checks a backup against its manifest and, unless only checking, copies it
 * into an empty DATA_DIR. Every file's size and SHA-256 must match, the
 * manifest must be the one the summary names, and the event log must pass
 * SQLite's check and hold the events the summary counts.
 */
export const restoreDataDir = async (options: RestoreOptions): Promise<BackupSummary> => {
  const report = options.report ?? (() => undefined)
  const backup = path.resolve(options.backup)
  const dataDir = path.resolve(options.dataDir)
  const summary = await readSummary(backup)
  const manifestFile = path.join(backup, MANIFEST_FILE)
  const manifestDigest = await hashFile(manifestFile).catch((error: unknown) => {
    throw errorCode(error) === 'ENOENT' ? new BackupError(`${backup} has no ${MANIFEST_FILE}`) : error
  })
  if (manifestDigest.sha256 !== summary.manifestSha256) throw new BackupError(`${MANIFEST_FILE} is not the manifest ${SUMMARY_FILE} names: the backup is damaged`)

  const checkOnly = options.checkOnly === true
  const lock = checkOnly ? null : await emptyDataDir(dataDir, options.now)
  try {
    const marker = path.join(dataDir, RESTORE_MARKER)
    if (!checkOnly) {
      await fs.writeFile(marker, `${JSON.stringify({ backup, startedAt: options.now.toISOString() })}\n`, { flag: 'wx', mode: 0o600 })
      await syncPath(marker)
      await syncPath(dataDir)
    }
    const made = new Set<string>([dataDir])
    let entries = 0
    let bytes = 0
    const restoreEntry = async (entry: ManifestEntry): Promise<number> => {
      const from = path.join(backup, DATA_FOLDER, ...entry.path.split('/'))
      const to = path.join(dataDir, ...entry.path.split('/'))
      if (!checkOnly && !made.has(path.dirname(to))) {
        await fs.mkdir(path.dirname(to), { recursive: true, mode: 0o700 })
        // Every folder between, so that each new name is fsynced in its parent before the mark goes.
        for (let dir = path.dirname(to); dir !== dataDir; dir = path.dirname(dir)) made.add(dir)
      }
      let digest: Digest
      try {
        digest = checkOnly ? await hashFile(from) : await copyHashed(from, to)
      } catch (error) {
        if (errorCode(error) === 'ENOENT') throw new BackupError(`${entry.path} is in the manifest but not in the backup: the backup is damaged`)
        if (errorCode(error) === 'EEXIST') throw new BackupError(`${entry.path} is twice in the manifest: the backup is damaged`)
        throw error
      }
      if (!sameDigest(entry, digest)) throw new BackupError(`${entry.path} differs from the manifest (${digest.bytes} bytes, sha256 ${digest.sha256}; expected ${entry.bytes}, ${entry.sha256}): the backup is damaged`)
      return digest.bytes
    }
    for await (const copied of mapInOrder(manifestEntries(manifestFile), restoreEntry, PARALLEL_COPIES)) {
      entries++
      bytes += copied
    }
    if (entries !== summary.entries || bytes !== summary.bytes) {
      throw new BackupError(`the manifest lists ${entries} files, ${bytes} bytes; ${SUMMARY_FILE} says ${summary.entries}, ${summary.bytes}: the backup is damaged`)
    }
    const log = checkOnly ? path.join(backup, DATA_FOLDER, EVENT_LOG) : path.join(dataDir, EVENT_LOG)
    checkDatabase(log)
    const facts = eventLogFacts(log)
    if (facts.head !== summary.eventLog.head || facts.events !== summary.eventLog.events) {
      throw new BackupError(`the event log holds ${facts.events} events up to position ${facts.head}; ${SUMMARY_FILE} says ${summary.eventLog.events} up to ${summary.eventLog.head}`)
    }
    if (!checkOnly) {
      for (const dir of made) await syncPath(dir)
      await fs.rm(marker)
      await syncPath(dataDir)
    }
    report(`${checkOnly ? 'checked' : 'restored'} ${entries} file${entries === 1 ? '' : 's'} (${mib(bytes)}) of the backup of ${summary.createdAt}: event log of ${facts.events.toLocaleString('en-US')} events up to position ${facts.head}`)
    return summary
  } catch (error) {
    const known = asBackupError(error)
    if (checkOnly || !(known instanceof BackupError)) throw known
    throw new BackupError(`${known.message} (DATA_DIR ${dataDir} stays marked as an unfinished restore: empty it before restoring again)`)
  } finally {
    lock?.release()
  }
}

/** Refuses a DATA_DIR a restore has not finished with: it may hold the log without the files it names, or nothing but keys. */
export const assertNoUnfinishedRestore = async (dataDir: string): Promise<void> => {
  let text: string
  try {
    text = await fs.readFile(path.join(dataDir, RESTORE_MARKER), 'utf8')
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return
    throw error
  }
  throw new BackupError(`DATA_DIR ${dataDir} holds an unfinished restore (${text.trim()}): empty it and run the restore again`)
}

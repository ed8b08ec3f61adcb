import fs from 'node:fs'
import path from 'node:path'
import Database from 'better-sqlite3'
import { ConfigError } from './config.js'
import { errorCode } from './errors.js'

/** A DATA_DIR another process holds: the operator's to sort out, said in one line. */
export class DataDirInUseError extends ConfigError {
  override readonly name = 'DataDirInUseError'
}

/** Who holds a DATA_DIR, kept beside the lock so a refused process can say. */
interface Holder {
  pid: number
  command: string
  since: string
}

export interface DataDirLock {
  release(): void
}

const LOCK_FILE = 'instance.lock'
const HOLDER_FILE = 'instance.lock.json'

const holderOf = (dataDir: string): Holder | null => {
  try {
    const parsed: unknown = JSON.parse(fs.readFileSync(path.join(dataDir, HOLDER_FILE), 'utf8'))
    if (typeof parsed !== 'object' || parsed === null) return null
    const [pid, command, since]: unknown[] = ['pid', 'command', 'since'].map((key) => Reflect.get(parsed, key))
    return typeof pid === 'number' && typeof command === 'string' && typeof since === 'string' ? { pid, command, since } : null
  } catch {
    return null
  }
}

const isBusy = (error: unknown): boolean => errorCode(error) === 'SQLITE_BUSY' || errorCode(error) === 'SQLITE_LOCKED'

/** A DATA_DIR this process may not write (a volume an image running as root wrote, say): said in one line, with the remedy. */
const notWritable = (dataDir: string, error: unknown): ConfigError | null => {
  const code = errorCode(error)
  if (code !== 'SQLITE_CANTOPEN' && code !== 'SQLITE_READONLY' && code !== 'EACCES' && code !== 'EPERM') return null
  const user = process.getuid === undefined ? 'this process' : `uid ${process.getuid()}`
  return new ConfigError(`DATA_DIR ${dataDir} cannot be written by ${user} (${code}): give it to that user (chown -R) or choose another DATA_DIR`)
}

/**
 * Takes DATA_DIR for this process alone, for as long as it runs: the embedded
 * event store's live subscriptions, the process managers' checkpoint file, the
 * snapshot and the clean-up of files cut off by a crash all assume one process
 * writes there. The lock is SQLite's own exclusive file lock, held by an open
 * connection, so the operating system lets it go when the process ends, however
 * it ends: nothing stale is left for the next start to judge.
 */
export const lockDataDir = (dataDir: string, command: string, now: Date): DataDirLock => {
  let db: Database.Database
  try {
    db = new Database(path.join(dataDir, LOCK_FILE), { timeout: 0 })
  } catch (error) {
    throw notWritable(dataDir, error) ?? error
  }
  try {
    // In exclusive locking mode the connection keeps the lock its first write takes until it closes.
    db.pragma('locking_mode = EXCLUSIVE')
    db.exec('BEGIN EXCLUSIVE; CREATE TABLE IF NOT EXISTS taken (at TEXT NOT NULL); DELETE FROM taken; COMMIT')
    db.prepare('INSERT INTO taken (at) VALUES (?)').run(now.toISOString())
  } catch (error) {
    db.close()
    if (!isBusy(error)) throw notWritable(dataDir, error) ?? error
    const holder = holderOf(dataDir)
    const who = holder === null ? 'another credit-service process' : `credit-service ${holder.command} (pid ${holder.pid}, since ${holder.since})`
    throw new DataDirInUseError(`DATA_DIR ${dataDir} is in use by ${who}: stop it first, or give this one a DATA_DIR of its own`)
  }
  const holderFile = path.join(dataDir, HOLDER_FILE)
  fs.writeFileSync(holderFile, `${JSON.stringify({ pid: process.pid, command, since: now.toISOString() } satisfies Holder)}\n`)
  let released = false
  return {
    release() {
      if (released) return
      released = true
      fs.rmSync(holderFile, { force: true })
      db.close()
    },
  }
}

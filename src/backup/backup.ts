import { createHash } from 'node:crypto'
import { createWriteStream, type WriteStream } from 'node:fs'
import fs from 'node:fs/promises'
import path from 'node:path'
import { once } from 'node:events'
import { finished } from 'node:stream/promises'
import { syncPath } from '../shared/durableFs.js'
import { errorCode } from '../shared/errors.js'
import { mapInOrder } from '../shared/mapInOrder.js'
import { assertNoUnfinishedRestore } from './restore.js'
import {
  asBackupError, BACKUP_FORMAT, BackupError, DATA_FOLDER, EVENT_LOG, FILES_FOLDER, MANIFEST_FILE, READ_STORE, SUMMARY_FILE,
  backupDatabase, checkDatabase, copyHashed, eventLogFacts, hashFile, mib, PARALLEL_COPIES, type BackupSummary, type Digest, type ManifestEntry,
} from './manifest.js'

export interface BackupOptions {
  dataDir: string
  /** A directory that does not exist yet; its parent is created if needed. */
  target: string
  now: Date
  report?: (line: string) => void
}

/** Files a backup leaves out: the running process's lock, SQLite's side files (the online copy takes their content), writes cut off midway. */
const isTransient = (name: string): boolean =>
  name === 'instance.lock' || name === 'instance.lock.json' || /-(wal|shm|journal)$/.test(name) || name.endsWith('.tmp')

/** A volume's own folder, at the top of a DATA_DIR that is a mount point: the file system's, not the service's. */
const LOST_AND_FOUND = 'lost+found'

const isInside = (child: string, parent: string): boolean => {
  const relative = path.relative(parent, child)
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative))
}

/** Where a path not made yet will be, links resolved: its nearest existing ancestor's real path and the rest. */
const realPathAhead = async (target: string): Promise<string> => {
  const rest: string[] = []
  for (let existing = target; ; existing = path.dirname(existing)) {
    try {
      return path.join(await fs.realpath(existing), ...rest.reverse())
    } catch (error) {
      if (errorCode(error) !== 'ENOENT' || path.dirname(existing) === existing) throw error
      rest.push(path.basename(existing))
    }
  }
}

/**
 * Regular files under `dir`, as paths relative to `root` with `/`. Links are
 * followed (keys mounted from a secret store are links), each directory once;
 * anything that is neither a file nor a directory, or a link to nothing, stops
 * the backup: one that silently lacked a key would restore a service unable
 * to read its own secrets.
 */
async function* regularFiles(root: string, dir: string, skipDirectory: (relative: string) => boolean, seen = new Set<string>()): AsyncGenerator<string> {
  const real = await fs.realpath(path.join(root, dir))
  if (seen.has(real)) return
  seen.add(real)
  for await (const entry of await fs.opendir(path.join(root, dir))) {
    const relative = dir === '' ? entry.name : `${dir}/${entry.name}`
    if (isTransient(entry.name) || relative === LOST_AND_FOUND) continue
    const kind = entry.isSymbolicLink() ? await fs.stat(path.join(root, relative)).catch(() => null) : entry
    if (kind === null) throw new BackupError(`${relative} in DATA_DIR is a link to nothing: mend or remove it, then back up again`)
    if (kind.isDirectory()) {
      if (!skipDirectory(relative)) yield* regularFiles(root, relative, skipDirectory, seen)
    } else if (kind.isFile()) {
      yield relative
    } else {
      throw new BackupError(`${relative} in DATA_DIR is neither a file nor a directory: move it out, then back up again`)
    }
  }
}

/** The manifest being written: one line per copied file, hashed as it goes for the summary. */
class ManifestWriter {
  private readonly out: WriteStream
  private readonly hash = createHash('sha256')
  entries = 0
  bytes = 0

  constructor(file: string) {
    this.out = createWriteStream(file, { flags: 'wx', mode: 0o600 })
  }

  async add(entryPath: string, digest: Digest): Promise<void> {
    const line = `${JSON.stringify({ path: entryPath, bytes: digest.bytes, sha256: digest.sha256 } satisfies ManifestEntry)}\n`
    this.hash.update(line)
    this.entries++
    this.bytes += digest.bytes
    if (!this.out.write(line)) await once(this.out, 'drain')
  }

  async close(): Promise<string> {
    this.out.end()
    await finished(this.out)
    return this.hash.digest('hex')
  }
}

/**
 * An online backup of DATA_DIR, beside a running service or not, into a new
 * directory made complete before it takes its name. Order is what makes it
 * restorable: everything that records how far it read the log (read models,
 * process checkpoints, the snapshot) is copied before the log, so none is
 * ahead of it; the files the log names are copied after it, so each is there.
 */
export const backupDataDir = async (options: BackupOptions): Promise<{ target: string; summary: BackupSummary }> => {
  const report = options.report ?? (() => undefined)
  const dataDir = path.resolve(options.dataDir)
  const target = path.resolve(options.target)
  await assertNoUnfinishedRestore(dataDir)
  const log = path.join(dataDir, EVENT_LOG)
  if (!(await fs.stat(log).then((stats) => stats.isFile(), () => false))) throw new BackupError(`DATA_DIR ${dataDir} holds no event log (${EVENT_LOG})`)
  // Compared through links: a backup inside DATA_DIR would be copied by the next one, and by itself.
  if (isInside(await realPathAhead(target), await fs.realpath(dataDir))) throw new BackupError(`the backup ${target} must be outside DATA_DIR ${dataDir}`)
  if (await fs.lstat(target).then(() => true, () => false)) throw new BackupError(`${target} exists: a backup goes into a new directory`)
  await fs.mkdir(path.dirname(target), { recursive: true })
  const staging = await fs.mkdtemp(`${target}.partial-`)
  try {
    await fs.chmod(staging, 0o700)
    const data = path.join(staging, DATA_FOLDER)
    await fs.mkdir(data, { mode: 0o700 })
    const manifest = new ManifestWriter(path.join(staging, MANIFEST_FILE))
    const made = new Set<string>([data])
    const destination = async (relative: string): Promise<string> => {
      const to = path.join(data, ...relative.split('/'))
      if (!made.has(path.dirname(to))) {
        await fs.mkdir(path.dirname(to), { recursive: true, mode: 0o700 })
        // Every folder between, so that each new name is fsynced in its parent at the end.
        for (let dir = path.dirname(to); dir !== data; dir = path.dirname(dir)) made.add(dir)
      }
      return to
    }
    const copyDatabase = async (relative: string): Promise<string> => {
      const to = await destination(relative)
      await backupDatabase(path.join(dataDir, relative), to)
      checkDatabase(to)
      await manifest.add(relative, await hashFile(to))
      return to
    }

    const started = performance.now()
    let before = 0
    for await (const relative of regularFiles(dataDir, '', (folder) => folder === FILES_FOLDER)) {
      if (relative === EVENT_LOG) continue
      if (relative === READ_STORE) await copyDatabase(relative)
      else await manifest.add(relative, await copyHashed(path.join(dataDir, relative), await destination(relative)))
      before++
    }
    report(`read models, checkpoints and keys: ${before} file${before === 1 ? '' : 's'}, ${mib(manifest.bytes)}`)

    const logStarted = performance.now()
    const bytesBefore = manifest.bytes
    const facts = eventLogFacts(await copyDatabase(EVENT_LOG))
    report(`event log: ${facts.events.toLocaleString('en-US')} events up to position ${facts.head}, ${mib(manifest.bytes - bytesBefore)} in ${((performance.now() - logStarted) / 1000).toFixed(1)} s`)

    const files = await backupStoredFiles(dataDir, manifest, destination)
    report(`stored files: ${files.copied.toLocaleString('en-US')}${files.gone === 0 ? '' : ` (${files.gone} deleted while the backup ran, left out)`}`)

    const manifestSha256 = await manifest.close()
    const summary: BackupSummary = {
      format: BACKUP_FORMAT, createdAt: options.now.toISOString(), eventLog: facts, entries: manifest.entries, bytes: manifest.bytes, manifestSha256,
    }
    await fs.writeFile(path.join(staging, SUMMARY_FILE), `${JSON.stringify(summary, null, 2)}\n`, { flag: 'wx', mode: 0o600 })
    for (const file of [path.join(staging, MANIFEST_FILE), path.join(staging, SUMMARY_FILE), ...made, staging]) await syncPath(file)
    await fs.rename(staging, target)
    await syncPath(path.dirname(target))
    report(`backup ${target}: ${summary.entries} files, ${mib(summary.bytes)}, log at position ${facts.head}, in ${((performance.now() - started) / 1000).toFixed(1)} s`)
    return { target, summary }
  } catch (error) {
    await fs.rm(staging, { recursive: true, force: true })
    throw asBackupError(error)
  }
}

/**
 * The file store's files, each as its sidecar then its content. Going by the
 * sidecars, a file still being stored (content renamed, sidecar not yet, so
 * no event names it) is not taken, and a file deleted during the backup (an
 * expired export) is left out whole rather than copied half.
 */
const backupStoredFiles = async (
  dataDir: string,
  manifest: ManifestWriter,
  destination: (relative: string) => Promise<string>,
): Promise<{ copied: number; gone: number }> => {
  const root = path.join(dataDir, FILES_FOLDER)
  if (!(await fs.stat(root).then((stats) => stats.isDirectory(), () => false))) return { copied: 0, gone: 0 }
  const copyPair = async (sidecar: string): Promise<Array<[string, Digest]> | null> => {
    const content = sidecar.slice(0, -'.json'.length)
    const copies: Array<[string, Digest]> = []
    try {
      // Whichever of the two a deletion meanwhile removes first, the pair is left out whole: a record copied is taken back.
      for (const relative of [sidecar, content]) copies.push([relative, await copyHashed(path.join(dataDir, relative), await destination(relative))])
    } catch (error) {
      if (errorCode(error) !== 'ENOENT') throw error
      for (const [relative] of copies) await fs.rm(await destination(relative), { force: true })
      return null
    }
    return copies
  }
  let copied = 0
  let gone = 0
  // Several pairs at once: each copy waits for its own fsync, which one after another made thousands of small files slow.
  for await (const copies of mapInOrder(sidecars(dataDir), copyPair, PARALLEL_COPIES)) {
    if (copies === null) {
      gone++
      continue
    }
    for (const [relative, digest] of copies) await manifest.add(relative, digest)
    copied++
  }
  return { copied, gone }
}

async function* sidecars(dataDir: string): AsyncGenerator<string> {
  for await (const relative of regularFiles(dataDir, FILES_FOLDER, () => false)) if (relative.endsWith('.json')) yield relative
}

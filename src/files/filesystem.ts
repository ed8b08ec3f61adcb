import { randomUUID } from 'node:crypto'
import { once } from 'node:events'
import { createReadStream, createWriteStream } from 'node:fs'
import fs from 'node:fs/promises'
import path from 'node:path'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { digestStream } from '../shared/digestStream.js'
import { syncPath } from '../shared/durableFs.js'
import { isTimeOrderedId } from '../shared/ids.js'
import type { FileMetadata, FileStore, OpenedFile, StoredFile } from './fileStore.js'

const SAFE_ID = /^[A-Za-z0-9_-]{1,128}$/

/**
 * The subdirectory of a file: two characters of its id that spread files
 * evenly. A UUIDv7 begins with its time (every file of a year would share
 * one directory), so it is sharded by its last, random characters; other
 * ids (files stored before ids were time-ordered) by their first, as they
 * always were.
 */
export const shardOf = (fileId: string): string => isTimeOrderedId(fileId) ? fileId.slice(-2) : fileId.slice(0, 2)

/** Files under DATA_DIR/files: content and a JSON sidecar, each written to a temp name, fsynced and renamed into place. */
export class FilesystemFileStore implements FileStore {
  readonly kind = 'filesystem' as const
  constructor(private readonly root: string) {}

  private paths(fileId: string) {
    if (!SAFE_ID.test(fileId)) throw new Error(`invalid file id ${fileId}`)
    const dir = path.join(this.root, shardOf(fileId))
    return { dir, content: path.join(dir, fileId), meta: path.join(dir, `${fileId}.json`) }
  }

  async put(fileId: string, content: Readable | Buffer, metadata: FileMetadata): Promise<StoredFile> {
    const paths = this.paths(fileId)
    const created = await fs.mkdir(paths.dir, { recursive: true })
    const temp = `${paths.content}.${randomUUID()}.tmp`
    const measure = digestStream()
    const writer = createWriteStream(temp, { flags: 'wx' })
    try {
      await pipeline(Buffer.isBuffer(content) ? Readable.from([content]) : content, measure.stream, writer)
      const { bytes: size, sha256 } = measure.digest()
      const stored: StoredFile = { ...metadata, fileId, size, sha256, storedAt: new Date().toISOString() }
      const metaTemp = `${paths.meta}.${randomUUID()}.tmp`
      await fs.writeFile(metaTemp, JSON.stringify(stored))
      // The event naming the file is committed (and fsynced) once this answers: the bytes and both names must survive a power loss first.
      await Promise.all([syncPath(temp), syncPath(metaTemp)])
      await fs.rename(temp, paths.content)
      await fs.rename(metaTemp, paths.meta)
      await syncPath(paths.dir)
      // A directory made for this file: each parent's entry of it too, from the shard up to the first one made.
      if (created !== undefined) {
        for (let dir = paths.dir; dir !== path.dirname(created); dir = path.dirname(dir)) await syncPath(path.dirname(dir))
      }
      return stored
    } catch (error) {
      // A failed pipeline can settle before the destroyed writer has opened (and so created) the file: removing it earlier would leave it behind.
      if (!writer.closed) await once(writer, 'close').catch(() => undefined)
      await fs.rm(temp, { force: true })
      throw error
    }
  }

  async stat(fileId: string): Promise<StoredFile | null> {
    try {
      const parsed: StoredFile = JSON.parse(await fs.readFile(this.paths(fileId).meta, 'utf8'))
      return parsed
    } catch {
      return null
    }
  }

  async open(fileId: string): Promise<OpenedFile | null> {
    const file = await this.stat(fileId)
    if (file === null) return null
    return { file, stream: createReadStream(this.paths(fileId).content) }
  }

  async removeLeftovers(idleMs: number, now: Date): Promise<number> {
    let removed = 0
    const shards = await fs.readdir(this.root, { withFileTypes: true }).catch(() => [])
    for (const shard of shards.filter((entry) => entry.isDirectory())) {
      const dir = path.join(this.root, shard.name)
      for (const name of (await fs.readdir(dir)).filter((each) => each.endsWith('.tmp'))) {
        const file = path.join(dir, name)
        const stats = await fs.stat(file).catch(() => null)
        if (stats === null || now.getTime() - stats.mtimeMs < idleMs) continue
        await fs.rm(file, { force: true })
        removed++
      }
    }
    return removed
  }

  async delete(fileId: string): Promise<boolean> {
    const paths = this.paths(fileId)
    const existed = (await this.stat(fileId)) !== null
    await fs.rm(paths.meta, { force: true })
    await fs.rm(paths.content, { force: true })
    return existed
  }
}

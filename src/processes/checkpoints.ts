import fs from 'node:fs/promises'
import path from 'node:path'
import type { ReadStore } from '../projections/readStore.js'

/** Where process managers remember how far they got. Correctness never depends on it: they are idempotent. */
export interface CheckpointStore {
  get(name: string): Promise<number>
  set(name: string, position: number): Promise<void>
  flush(): Promise<void>
}

/**
 * A JSON file in DATA_DIR, replaced atomically, for when the read store lives
 * in memory. Writes are coalesced (at most one per `flushEveryMs`): a checkpoint
 * only saves work on restart, the managers' own idempotency keeps them correct.
 */
export class FileCheckpointStore implements CheckpointStore {
  private cache: Record<string, number> | undefined
  private writing: Promise<void> = Promise.resolve()
  private timer: NodeJS.Timeout | undefined
  private dirty = false

  constructor(private readonly file: string, private readonly flushEveryMs = 1000) {}

  private async load(): Promise<Record<string, number>> {
    if (this.cache !== undefined) return this.cache
    try {
      const parsed: unknown = JSON.parse(await fs.readFile(this.file, 'utf8'))
      const entries = typeof parsed === 'object' && parsed !== null ? Object.entries(parsed) : []
      this.cache = Object.fromEntries(entries.filter((e): e is [string, number] => typeof e[1] === 'number'))
    } catch {
      this.cache = {}
    }
    return this.cache
  }

  async get(name: string): Promise<number> {
    return (await this.load())[name] ?? 0
  }

  async set(name: string, position: number): Promise<void> {
    const all = await this.load()
    all[name] = position
    this.dirty = true
    this.timer ??= setTimeout(() => void this.flush(), this.flushEveryMs)
  }

  /** Writes pending checkpoints now (also called on stop). */
  async flush(): Promise<void> {
    clearTimeout(this.timer)
    this.timer = undefined
    if (!this.dirty || this.cache === undefined) return this.writing
    this.dirty = false
    const snapshot = JSON.stringify(this.cache)
    this.writing = this.writing.then(async () => {
      await fs.mkdir(path.dirname(this.file), { recursive: true })
      const temp = `${this.file}.tmp`
      await fs.writeFile(temp, snapshot)
      await fs.rename(temp, this.file)
    })
    return this.writing
  }
}

/** Checkpoints kept in MongoDB with the read models. */
export class ReadStoreCheckpointStore implements CheckpointStore {
  constructor(private readonly store: ReadStore) {}
  get(name: string): Promise<number> {
    return this.store.getCheckpoint(`process:${name}`)
  }
  set(name: string, position: number): Promise<void> {
    return this.store.setCheckpoint(`process:${name}`, position)
  }
  async flush(): Promise<void> {}
}

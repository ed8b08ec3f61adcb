import type { RecordedEvent } from '../events/catalogue.js'
import { requireKnownType } from '../events/serialization.js'
import type { EventStore, EventSubscription } from '../events/store.js'
import { systemClock, type Clock } from '../shared/clock.js'
import { errorMessage } from '../shared/errors.js'
import { withLease } from './lease.js'
import type { Projection } from './projection.js'
import type { ReadStore } from './readStore.js'

export interface RunnerLogger {
  info(object: object, message: string): void
  error(object: object, message: string): void
}

export interface ProjectionStatus {
  name: string
  version: number
  position: number
  lag: number
  failed: string | null
}

interface Waiter {
  position: number
  resolve(reached: boolean): void
  timer: NodeJS.Timeout | undefined
}

interface Tracked {
  projection: Projection
  position: number
  failed: string | null
}

/** Time one projection spent on one event type during a timed rebuild. */
export interface ProjectionTiming {
  projection: string
  eventType: string
  events: number
  milliseconds: number
}

/** Projection → event type → [events, milliseconds]. */
type Timings = Map<string, Map<string, [number, number]>>

export interface RunnerOptions {
  logger: RunnerLogger
  /** Called after every event has gone through every projection (feeds the live hub). */
  onProjected?: (event: RecordedEvent) => void
  /** How many events between checkpoint saves on a persistent read store. */
  checkpointEvery?: number
  /** Times the lease of `replaceOtherVersions` (default the system clock). */
  clock?: Clock
  /** How long the lease of `replaceOtherVersions` lasts unless renewed (default 60 s; renewed every third of it). */
  leaseTtlMs?: number
}

/** The lease instances sharing a persistent read store take to replace projection versions, one at a time. */
export const VERSIONS_LEASE = 'projection-versions'
const LEASE_TTL_MS = 60_000
const LEASE_POLL_MS = 100


/**
 * Feeds the global log through every projection, in order. Each projection
 * keeps its own checkpoint (persisted with its documents in MongoDB; in memory
 * for the embedded store, which starts from zero). A projection that throws is
 * marked failed and left behind (visible on /v1/health) while the others go on.
 */
export class ProjectionRunner {
  private readonly tracked: Tracked[]
  /** Event type → the projections handling it, in registration order: one lookup per event rather than one per projection. */
  private readonly handlers = new Map<string, Tracked[]>()
  private subscription: EventSubscription | undefined
  private loop: Promise<void> | undefined
  private waiters: Waiter[] = []
  private processed = 0
  private head = 0
  private running = false
  private sinceCheckpoint = 0
  private caughtUp: { position: number; resolve: () => void; reject: (error: unknown) => void } | undefined
  /** Set only during a timed rebuild: otherwise no event pays for a clock read. */
  private timings: Timings | undefined

  constructor(
    private readonly eventStore: EventStore,
    private readonly readStore: ReadStore,
    projections: readonly Projection[],
    private readonly options: RunnerOptions,
  ) {
    this.tracked = projections.map((projection) => ({ projection, position: 0, failed: null }))
    for (const t of this.tracked) {
      for (const type of new Set<string>(t.projection.handles)) this.handlers.set(type, [...(this.handlers.get(type) ?? []), t])
    }
  }

  get projections(): readonly Projection[] {
    return this.tracked.map((t) => t.projection)
  }

  /** The position every projection has reached (the slowest one). */
  get position(): number {
    return this.processed
  }

  /** Where each projection stands: what a snapshot of the read store records. */
  positions(): Record<string, number> {
    return Object.fromEntries(this.tracked.map((t) => [t.projection.name, t.position]))
  }

  /**
   * Loads checkpoints and processes the log up to its current head, then keeps
   * following it live. On a persistent read store, a projection whose
   * documents there were made by another version of it is first dropped and
   * projected again from the start of the log.
   */
  async start(onProgress?: (position: number, head: number) => void): Promise<void> {
    if (this.readStore.persistent) await this.replaceOtherVersions()
    for (const t of this.tracked) t.position = await this.readStore.getCheckpoint(t.projection.name)
    this.processed = Math.min(...this.tracked.map((t) => t.position), Number.MAX_SAFE_INTEGER)
    if (this.tracked.length === 0) this.processed = 0
    this.head = await this.eventStore.headPosition()
    const caughtUp = this.head <= this.processed
      ? Promise.resolve()
      : new Promise<void>((resolve, reject) => { this.caughtUp = { position: this.head, resolve, reject } })
    this.running = true
    this.subscription = this.eventStore.subscribe(this.processed)
    this.loop = this.follow(this.subscription, onProgress)
    await caughtUp
  }

  /**
   * A store with a checkpoint but no version was filled by code from before
   * versions were recorded: what its documents hold is unknown, so it is
   * rebuilt too. A new store, or a projection new to it, only records its version.
   */
  private async replaceOtherVersions(): Promise<void> {
    if (await this.versionsRecorded()) return
    // Instances of the new code starting together: without the lease each could find the old version and drop in turn,
    // one of them dropping what another had begun to project again.
    const lease = { clock: this.options.clock ?? systemClock, ttlMs: this.options.leaseTtlMs ?? LEASE_TTL_MS, pollMs: LEASE_POLL_MS, logger: this.options.logger }
    await withLease(this.readStore, VERSIONS_LEASE, lease, (stillHeld) => this.replaceOtherVersionsHeld(stillHeld))
  }

  private async versionsRecorded(): Promise<boolean> {
    for (const { projection } of this.tracked) {
      if (await this.readStore.getProjectionVersion(projection.name) !== projection.version) return false
    }
    return true
  }

  /** Run while holding the lease: what another instance did before it was taken is seen, and not done again. */
  private async replaceOtherVersionsHeld(stillHeld: () => void): Promise<void> {
    for (const { projection } of this.tracked) {
      const recorded = await this.readStore.getProjectionVersion(projection.name)
      if (recorded === projection.version) continue
      const checkpoint = await this.readStore.getCheckpoint(projection.name)
      if (recorded !== null || checkpoint > 0) {
        this.options.logger.info({ projection: projection.name, recorded, version: projection.version, checkpoint },
          'read model made by another version of its projection: rebuilding it from the start of the log')
        stillHeld()
        await this.forget(projection)
      }
      stillHeld()
      await this.readStore.setProjectionVersion(projection.name, projection.version)
    }
  }

  /** Drops a projection's documents and sets its checkpoint back to the start of the log. */
  private async forget(projection: Projection): Promise<void> {
    await this.readStore.drop(projection.collections.map((c) => c.name))
    await this.readStore.setCheckpoint(projection.name, 0)
  }

  private async follow(subscription: EventSubscription, onProgress?: (position: number, head: number) => void): Promise<void> {
    try {
      for await (const event of subscription) {
        if (!this.running) break
        requireKnownType(event)
        await this.apply(event)
        if (onProgress !== undefined && (event.position % 1000 === 0 || event.position >= this.head)) onProgress(event.position, this.head)
      }
    } catch (error) {
      if (this.running) {
        this.options.logger.error({ err: error }, 'projection runner stopped on a read error')
        // Every read model stops here: health says so (503), and a start waiting to catch up fails with the reason instead of waiting for ever.
        const reason = `the log could not be read: ${errorMessage(error)}`
        for (const t of this.tracked) t.failed ??= reason
        const starting = this.caughtUp
        this.caughtUp = undefined
        starting?.reject(error)
      }
    } finally {
      await this.saveCheckpoints()
    }
  }

  private async apply(event: RecordedEvent): Promise<void> {
    for (const t of this.handlers.get(event.type) ?? []) {
      if (t.failed !== null || t.position >= event.position) continue
      try {
        if (this.timings === undefined) await t.projection.project(this.readStore, event, event.position)
        else await this.timed(t.projection, event, this.timings)
        t.position = event.position
      } catch (error) {
        t.failed = `${errorMessage(error)} (event ${event.type} at ${event.position})`
        this.options.logger.error({ err: error, projection: t.projection.name, event: event.id, type: event.type }, 'projection failed')
      }
    }
    // The others have nothing to do with the event and pass it.
    for (const t of this.tracked) if (t.failed === null && t.position < event.position) t.position = event.position
    this.processed = event.position
    if (event.position > this.head) this.head = event.position
    this.options.onProjected?.(event)
    if (this.readStore.persistent && ++this.sinceCheckpoint >= (this.options.checkpointEvery ?? 100)) await this.saveCheckpoints()
    this.release()
  }

  private async timed(projection: Projection, event: RecordedEvent, timings: Timings): Promise<void> {
    const started = performance.now()
    try {
      await projection.project(this.readStore, event, event.position)
    } finally {
      const byType = timings.get(projection.name) ?? new Map<string, [number, number]>()
      timings.set(projection.name, byType)
      const spent = byType.get(event.type) ?? [0, 0]
      byType.set(event.type, [spent[0] + 1, spent[1] + performance.now() - started])
    }
  }

  private release(): void {
    if (this.caughtUp !== undefined && this.processed >= this.caughtUp.position) {
      this.caughtUp.resolve()
      this.caughtUp = undefined
    }
    if (this.waiters.length === 0) return
    const still: Waiter[] = []
    for (const waiter of this.waiters) {
      if (waiter.position <= this.processed) {
        clearTimeout(waiter.timer)
        waiter.resolve(true)
      } else still.push(waiter)
    }
    this.waiters = still
  }

  private async saveCheckpoints(): Promise<void> {
    if (!this.readStore.persistent) return
    this.sinceCheckpoint = 0
    for (const t of this.tracked) await this.readStore.setCheckpoint(t.projection.name, t.position)
  }

  /** Resolves true once every projection has processed `position`, false if `timeoutMs` passes first. */
  waitFor(position: number, timeoutMs: number): Promise<boolean> {
    if (position <= this.processed) return Promise.resolve(true)
    return new Promise<boolean>((resolve) => {
      const waiter: Waiter = { position, resolve, timer: undefined }
      waiter.timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter)
        resolve(false)
      }, timeoutMs)
      this.waiters.push(waiter)
    })
  }

  async status(): Promise<{ head: number; projections: ProjectionStatus[] }> {
    const head = Math.max(await this.eventStore.headPosition(), this.head)
    return {
      head,
      projections: this.tracked.map((t) => ({
        name: t.projection.name,
        version: t.projection.version,
        position: t.position,
        lag: Math.max(0, head - t.position),
        failed: t.failed,
      })),
    }
  }

  async stop(): Promise<void> {
    if (!this.running) return
    this.running = false
    for (const waiter of this.waiters) {
      clearTimeout(waiter.timer)
      waiter.resolve(false)
    }
    this.waiters = []
    this.caughtUp?.resolve()
    await this.subscription?.close()
    await this.loop
  }

  /**
   * Drops the named projections' documents and checkpoints (all when none are
   * named) and projects the whole log again. Run it with the service stopped.
   */
  async rebuild(names: readonly string[] = [], onProgress?: (position: number, head: number) => void): Promise<void> {
    const chosen = names.length === 0 ? this.tracked : this.tracked.filter((t) => names.includes(t.projection.name))
    const unknown = names.filter((n) => !this.tracked.some((t) => t.projection.name === n))
    if (unknown.length > 0) throw new Error(`unknown projection(s): ${unknown.join(', ')}`)
    await this.stop()
    for (const t of chosen) {
      await this.forget(t.projection)
      t.failed = null
    }
    await this.start(onProgress)
  }

  /**
   * A rebuild that also times each projection per event type (one clock read
   * before and after every projection call): where a rebuild's time goes,
   * which a CPU profile hides when an object's cost is paid later by other
   * code or by the garbage collector. Slowest first.
   */
  async timedRebuild(names: readonly string[] = [], onProgress?: (position: number, head: number) => void): Promise<ProjectionTiming[]> {
    const timings: Timings = new Map()
    this.timings = timings
    try {
      await this.rebuild(names, onProgress)
    } finally {
      this.timings = undefined
    }
    const rows: ProjectionTiming[] = []
    for (const [projection, byType] of timings) {
      for (const [eventType, [events, milliseconds]] of byType) rows.push({ projection, eventType, events, milliseconds })
    }
    return rows.sort((a, b) => b.milliseconds - a.milliseconds)
  }
}

import type { CommandContext } from '../commands/handler.js'
import { isEventOf, type DomainEventType, type RecordedEvent, type RecordedOf } from '../events/catalogue.js'
import type { EventStore, EventSubscription } from '../events/store.js'
import type { CheckpointStore } from './checkpoints.js'

export interface ProcessLogger {
  debug(object: object, message: string): void
  info(object: object, message: string): void
  warn(object: object, message: string): void
  error(object: object, message: string): void
}

/**
 * A process manager reacts to events by issuing commands, and records what it
 * did as events keyed by the triggering event, so a redelivery (restart,
 * rebuild) neither loses nor repeats an action.
 */
export interface ProcessManager<Deps> {
  name: string
  handles: readonly DomainEventType[]
  handle(event: RecordedEvent, deps: Deps): Promise<void>
  /** Runs once before the manager follows the log (e.g. to settle work a crash interrupted). */
  recover?(deps: Deps): Promise<void>
}

export const defineProcess = <Deps, T extends DomainEventType>(definition: {
  name: string
  handles: readonly T[]
  handle(event: RecordedOf<T>, deps: Deps): Promise<void>
  recover?(deps: Deps): Promise<void>
}): ProcessManager<Deps> => ({
  name: definition.name,
  handles: definition.handles,
  handle: async (event, deps) => {
    if (isEventOf(event, definition.handles)) await definition.handle(event, deps)
  },
  ...(definition.recover === undefined ? {} : { recover: definition.recover }),
})

/** The context of a command issued in reaction to an event: its organization and correlation, caused by it. */
export const causedBy = (event: RecordedEvent, actorId: string | null = event.metadata.actorId): CommandContext => ({
  organizationId: event.metadata.organizationId,
  actorId,
  correlationId: event.metadata.correlationId,
  causationId: event.id,
})

export interface ProcessRunnerOptions {
  logger: ProcessLogger
  /** Resolves when the read models have processed a position, so a manager reads what its event changed. */
  projectionsReached(position: number): Promise<void>
  maxAttempts?: number
  retryDelayMs?: number
  /** Unhandled events between checkpoint saves. */
  checkpointEvery?: number
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Follows the global log for each process manager, each from its own checkpoint. */
export class ProcessSupervisor<Deps> {
  private readonly loops: Array<{ subscription: EventSubscription; done: Promise<void> }> = []
  private running = false

  constructor(
    private readonly eventStore: EventStore,
    private readonly checkpoints: CheckpointStore,
    private readonly managers: ReadonlyArray<ProcessManager<Deps>>,
    private readonly deps: Deps,
    private readonly options: ProcessRunnerOptions,
  ) {}

  async start(): Promise<void> {
    this.running = true
    for (const manager of this.managers) {
      await manager.recover?.(this.deps)
      // A manager that only recovers at start has nothing to follow.
      if (manager.handles.length === 0) continue
      const from = await this.checkpoints.get(manager.name)
      const subscription = this.eventStore.subscribe(from)
      this.loops.push({ subscription, done: this.follow(manager, subscription) })
    }
  }

  private async follow(manager: ProcessManager<Deps>, subscription: EventSubscription): Promise<void> {
    const handles = new Set<string>(manager.handles)
    let unsaved = 0
    let last = 0
    try {
      for await (const event of subscription) {
        if (!this.running) break
        last = event.position
        if (!handles.has(event.type)) {
          if (++unsaved >= (this.options.checkpointEvery ?? 500)) {
            unsaved = 0
            await this.checkpoints.set(manager.name, last)
          }
          continue
        }
        await this.options.projectionsReached(event.position)
        await this.handleWithRetry(manager, event)
        unsaved = 0
        await this.checkpoints.set(manager.name, event.position)
      }
    } catch (error) {
      if (this.running) this.options.logger.error({ err: error, process: manager.name }, 'process manager stopped on a read error')
    } finally {
      if (last > 0) await this.checkpoints.set(manager.name, last).catch(() => undefined)
    }
  }

  private async handleWithRetry(manager: ProcessManager<Deps>, event: RecordedEvent): Promise<void> {
    const attempts = this.options.maxAttempts ?? 5
    for (let attempt = 1; this.running; attempt++) {
      try {
        await manager.handle(event, this.deps)
        return
      } catch (error) {
        if (attempt >= attempts) {
          this.options.logger.error({ err: error, process: manager.name, event: event.id, type: event.type },
            'process manager gave up on an event after repeated failures')
          return
        }
        this.options.logger.warn({ err: error, process: manager.name, event: event.id, attempt }, 'process manager failed; retrying')
        await sleep((this.options.retryDelayMs ?? 200) * 2 ** (attempt - 1))
      }
    }
  }

  async stop(): Promise<void> {
    if (!this.running) return
    this.running = false
    await Promise.all(this.loops.map(async (loop) => {
      await loop.subscription.close()
      await loop.done
    }))
    this.loops.length = 0
    await this.checkpoints.flush()
  }
}

import { LRUCache } from 'lru-cache'
import type { Subscription } from 'rxjs'
import type { RecordedEvent } from '../events/catalogue.js'
import type { DataKey } from '../identity/dataKey.js'
import type { LiveHub } from '../processes/liveHub.js'
import type { Queries } from '../projections/queries.js'
import { compileTemplate } from '../templates/compile.js'
import type { Clock } from '../shared/clock.js'
import { ApprovalsInFlight } from './approvalsInFlight.js'
import { DestinationBreakers } from './breaker.js'
import { unsealed } from './configuration.js'
import { templateFields } from './render.js'
import type { SendableConfiguration } from './sender.js'

/** The webhooks a credit line links, as the credit-line read model holds them. */
export interface WebhookLinks {
  organizationId: string
  onOrderWebhooks: readonly string[]
  onDeliveredWebhooks: readonly string[]
  /** The log position of the line's last change the read model applied (null when the document does not say). */
  changedAt: number | null
}

/** A stored webhook ready to fire: its configuration unsealed, and the tags its templates read through fromWebhook. */
export interface FiringWebhook {
  id: string
  organizationId: string
  archived: boolean
  configuration: SendableConfiguration
  readsTags: ReadonlySet<string>
  /** Its sends render `.Credit.Score` empty (see `WebhookDoc.scoresHidden`). */
  scoresHidden: boolean
}

/**
 * A read-through cache of read-model documents that events invalidate: the
 * hub publishes every event before the process managers handle anything
 * after it, so a firing never sees an entry older than its trigger. A load
 * that raced with an invalidation is used once and not kept.
 */
class InvalidatedCache<V> {
  private readonly entries: LRUCache<string, { value: V }>
  private generation = 0

  constructor(max: number) {
    this.entries = new LRUCache({ max })
  }

  async get(key: string, load: () => Promise<V>): Promise<V> {
    const hit = this.entries.get(key)
    if (hit !== undefined) return hit.value
    const generation = this.generation
    const value = await load()
    if (generation === this.generation) this.entries.set(key, { value })
    return value
  }

  invalidate(key: string): void {
    this.generation++
    this.entries.delete(key)
  }
}

const readTags = (configuration: SendableConfiguration): ReadonlySet<string> => {
  const tags = new Set<string>()
  for (const field of templateFields) {
    try {
      for (const tag of compileTemplate(configuration[field]).fromWebhook.tags) tags.add(tag)
    } catch {
      // A template that no longer compiles fails its send with TEMPLATE_ERROR; it orders nothing.
    }
  }
  return tags
}

const CACHE_ENTRIES = 10_000

/** Configuration the firing path reads on every trigger, kept in memory and dropped when an event changes it. */
export class WebhookDirectory {
  private readonly lines = new InvalidatedCache<WebhookLinks | null>(CACHE_ENTRIES)
  private readonly webhooks = new InvalidatedCache<FiringWebhook | null>(CACHE_ENTRIES)
  private readonly organizations = new InvalidatedCache<string>(CACHE_ENTRIES)
  private readonly subscription: Subscription

  constructor(private readonly deps: { queries: Queries; dataKey: DataKey; hub: LiveHub }) {
    this.subscription = deps.hub.events$.subscribe((event) => this.invalidate(event))
  }

  private invalidate(event: RecordedEvent): void {
    switch (event.type) {
      case 'CreditLineCreated':
      case 'CreditLineUpdated':
        return this.lines.invalidate(event.data.creditLineId)
      case 'WebhookCreated':
      case 'WebhookUpdated':
      case 'WebhookArchived':
        return this.webhooks.invalidate(event.data.webhookId)
      case 'OrganizationCreated':
      case 'OrganizationRenamed':
        return this.organizations.invalidate(event.data.organizationId)
      default:
        return undefined
    }
  }

  links(creditLineId: string): Promise<WebhookLinks | null> {
    return this.lines.get(creditLineId, async () => {
      const line = await this.deps.queries.creditLines.get(creditLineId)
      return line === null ? null : {
        organizationId: line.organizationId, onOrderWebhooks: line.onOrderWebhooks, onDeliveredWebhooks: line.onDeliveredWebhooks,
        changedAt: line._position ?? null,
      }
    })
  }

  webhook(id: string): Promise<FiringWebhook | null> {
    return this.webhooks.get(id, async () => {
      const doc = await this.deps.queries.webhooks.getAny(id)
      if (doc === null) return null
      const configuration = unsealed(doc.configuration, this.deps.dataKey)
      return {
        id, organizationId: doc.organizationId, archived: doc.archived, configuration, readsTags: readTags(configuration), scoresHidden: doc.scoresHidden === true,
      }
    })
  }

  organizationName(id: string): Promise<string> {
    return this.organizations.get(id, async () => (await this.deps.queries.organizations.get(id))?.name ?? '')
  }

  close(): void {
    this.subscription.unsubscribe()
  }
}

/**
 * Bounds the webhook sends in flight (WEBHOOK_CONCURRENCY): a firing takes a
 * slot before it records a send's start and gives it back when the outcome is
 * recorded, so at most that many sends can be left `unknown` by a crash.
 */
export class SendSlots {
  private free: number
  private readonly waiting: Array<() => void> = []
  private readonly inFlight = new Set<Promise<unknown>>()

  constructor(limit: number) {
    this.free = limit
  }

  /** Resolves with the function that gives the slot back, once one is free (first come, first served). */
  async acquire(): Promise<() => void> {
    if (this.free > 0) this.free--
    else await new Promise<void>((resolve) => this.waiting.push(resolve))
    let released = false
    return () => {
      if (released) return
      released = true
      const next = this.waiting.shift()
      if (next === undefined) this.free++
      else next()
    }
  }

  /** Keeps a send that runs on its own, so `drain` can wait for it. */
  track(work: Promise<unknown>): void {
    const tracked: Promise<void> = work.then(() => undefined, () => undefined).finally(() => this.inFlight.delete(tracked))
    this.inFlight.add(tracked)
  }

  /** Waits for every tracked send (at shutdown, once nothing starts new ones). */
  async drain(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight])
  }
}

/** The webhook machinery one service instance shares between the firing process and the routes. */
export interface WebhookRuntime {
  directory: WebhookDirectory
  slots: SendSlots
  /** The approvals the firing took, so each renders the credit with the earlier ones applied. */
  approvals: ApprovalsInFlight
  /** Destinations whose automatic sends fail at once for a while, having timed out repeatedly. */
  breakers: DestinationBreakers
  /** Waits for the sends in flight; run after the process managers stopped. */
  drain(): Promise<void>
  close(): void
}

export interface WebhookRuntimeDeps {
  queries: Queries
  dataKey: DataKey
  hub: LiveHub
  concurrency: number
  breaker: { timeouts: number; openMs: number; clock: Clock }
}

export const createWebhookRuntime = (deps: WebhookRuntimeDeps): WebhookRuntime => {
  const directory = new WebhookDirectory(deps)
  const slots = new SendSlots(deps.concurrency)
  return {
    directory, slots, approvals: new ApprovalsInFlight(), breakers: new DestinationBreakers(deps.breaker),
    drain: () => slots.drain(), close: () => directory.close(),
  }
}

import { LRUCache } from 'lru-cache'
import type { Clock } from '../shared/clock.js'

/** How an exchange with a destination ended, as the breaker counts it. */
export type ExchangeEnding = 'answered' | 'timedOut' | 'failedFast'

/** Leave to make one exchange: `probe` when it is the automatic one let through to see whether a destination is back. */
export interface Admission {
  key: string | null
  manual: boolean
  probe: boolean
}

/** Why an exchange was not attempted. */
export interface Refusal {
  timeouts: number
  until: Date
}

interface Entry {
  /** Timeouts in a row of automatic exchanges since the destination last answered. */
  timeouts: number
  /** While open: the monotonic moment one automatic exchange may be tried again. */
  openUntil: number | null
  probing: boolean
}

export interface BreakerSettings {
  /** Timeouts in a row that open a breaker; 0 never opens one. */
  timeouts: number
  openMs: number
  /** Wall time, for saying until when. */
  clock: Clock
  /** Measures the open period: a wall clock stepped back would hold a breaker open for the step. */
  monotonic?: () => number
}

/**
 * Which breaker an exchange counts toward: one per stored webhook, kind of
 * request (its token request apart from its own) and destination (scheme,
 * host and port), so that one organization's webhooks never open another's,
 * a token endpoint that answers on the same host does not hide a webhook URL
 * that does not, and a webhook moved to another destination is not refused
 * for the timeouts of the one it left. Null (no breaker) for a test of a
 * configuration that is not stored.
 */
export const breakerKey = (organizationId: string, webhookId: string | null, kind: 'token' | 'webhook', destination: string): string | null =>
  webhookId === null ? null : `${organizationId}/${webhookId}/${kind} ${destination}`

/** Breakers kept at most; the least recently used is forgotten (its destination is tried again), so destinations left behind cannot pile up. */
const MAX_ENTRIES = 10_000

/**
 * Circuit breakers for automatic webhook sends. A destination that lets
 * exchanges run into WEBHOOK_TIMEOUT_MS holds a send slot for that long each
 * time, and the slots are shared by every organization; after `timeouts`
 * automatic exchanges in a row that timed out, the breaker opens and its
 * automatic sends fail at once (`DESTINATION_UNAVAILABLE`) for `openMs`.
 * Then one automatic exchange is let through: an answer of any status closes
 * the breaker, a timeout opens it again. Refusals and resets fail fast on
 * their own, so they count as answers. Manual sends always go and are not
 * counted, but their answer closes the breaker: a person checking that the
 * destination is back. Entries exist only for breakers that saw a timeout.
 */
export class DestinationBreakers {
  private readonly entries = new LRUCache<string, Entry>({ max: MAX_ENTRIES })
  private readonly monotonic: () => number

  constructor(private readonly settings: BreakerSettings) {
    this.monotonic = settings.monotonic ?? (() => performance.now())
  }

  /** Leave to make an exchange counted under `key`, or why not (an open breaker). */
  admit(key: string | null, manual: boolean): Admission | Refusal {
    const counted = this.settings.timeouts === 0 ? null : key
    const entry = counted === null ? undefined : this.entries.get(counted)
    if (manual || entry === undefined || entry.openUntil === null) return { key: counted, manual, probe: false }
    const left = entry.openUntil - this.monotonic()
    if (entry.probing || left > 0) return { timeouts: entry.timeouts, until: new Date(this.settings.clock.now().getTime() + Math.max(left, 0)) }
    entry.probing = true
    return { key: counted, manual, probe: true }
  }

  /** An admitted exchange that was not made after all (its token request failed first): a probe's turn passes to the next send. */
  abandon(admission: Admission): void {
    if (!admission.probe || admission.key === null) return
    const entry = this.entries.get(admission.key)
    if (entry !== undefined) entry.probing = false
  }

  /** Counts how an admitted exchange ended; says when that opened or closed the breaker (for the log). */
  record(admission: Admission, ending: ExchangeEnding): 'opened' | 'closed' | null {
    const { key } = admission
    if (key === null) return null
    const entry = this.entries.get(key)
    if (ending !== 'timedOut') {
      if (entry === undefined) return null
      // An automatic exchange admitted before the breaker opened does not close it: only a probe's answer, or a person's, does.
      if (entry.openUntil !== null && !admission.probe && !admission.manual) return null
      this.entries.delete(key)
      return entry.openUntil === null ? null : 'closed'
    }
    if (admission.manual) return null
    const current = entry ?? { timeouts: 0, openUntil: null, probing: false }
    this.entries.set(key, current)
    current.timeouts += 1
    const probeOfThisOpening = admission.probe && current.probing
    if (probeOfThisOpening) {
      current.probing = false
      current.openUntil = this.monotonic() + this.settings.openMs
      return null
    }
    if (current.openUntil !== null || current.timeouts < this.settings.timeouts) return null
    current.openUntil = this.monotonic() + this.settings.openMs
    return 'opened'
  }
}

export const isRefusal = (answer: Admission | Refusal): answer is Refusal => 'until' in answer

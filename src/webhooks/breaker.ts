import type { Clock } from '../shared/clock.js'

/** How an exchange with a destination ended, as the breaker counts it. */
export type ExchangeEnding = 'answered' | 'timedOut' | 'failedFast'

/** Leave to make one exchange: `probe` when it is the one let through to see whether a destination is back. */
export interface Admission {
  key: string | null
  probe: boolean
}

/** Why an exchange was not attempted. */
export interface Refusal {
  timeouts: number
  until: Date
}

interface Entry {
  /** Timeouts in a row since the destination last answered. */
  timeouts: number
  /** While open: the moment one exchange may be tried again. */
  openUntil: number | null
  probing: boolean
}

export interface BreakerSettings {
  /** Timeouts in a row that open a destination's breaker; 0 never opens one. */
  timeouts: number
  openMs: number
  clock: Clock
}

/**
 * The destination (scheme, host and port) of a URL, or null for one that
 * does not parse: the destination check refuses it before any exchange.
 */
export const destinationOf = (url: string): string | null => {
  try {
    return new URL(url).origin
  } catch {
    return null
  }
}

/**
 * Circuit breakers, one per destination, for automatic webhook sends. A
 * destination that lets exchanges run into WEBHOOK_TIMEOUT_MS holds a send
 * slot for that long each time, and the slots are shared by every
 * organization; after `timeouts` such exchanges in a row its breaker opens and
 * its automatic sends fail at once (`DESTINATION_UNAVAILABLE`) for `openMs`.
 * Then one exchange is let through: an answer of any status closes it, a
 * timeout opens it again. Refusals and resets fail fast on their own, so they
 * count as answers. Only destinations that timed out are kept.
 */
export class DestinationBreakers {
  private readonly entries = new Map<string, Entry>()

  constructor(private readonly settings: BreakerSettings) {}

  /** Leave to exchange with the URL's destination, or why not (an open breaker). Manual sends are always let through, as probes. */
  admit(url: string, manual: boolean): Admission | Refusal {
    const key = this.settings.timeouts === 0 ? null : destinationOf(url)
    const entry = key === null ? undefined : this.entries.get(key)
    if (key === null || entry === undefined || entry.openUntil === null || manual) return { key, probe: manual && entry?.openUntil != null }
    if (entry.probing || this.settings.clock.now().getTime() < entry.openUntil) return { timeouts: entry.timeouts, until: new Date(entry.openUntil) }
    entry.probing = true
    return { key, probe: true }
  }

  /** Counts how an admitted exchange ended; says when that opened or closed the destination's breaker (for the log). */
  record(admission: Admission, ending: ExchangeEnding): 'opened' | 'closed' | null {
    const { key } = admission
    if (key === null) return null
    const entry = this.entries.get(key)
    if (ending !== 'timedOut') {
      if (entry === undefined) return null
      // An exchange admitted before the breaker opened does not close it: only a probe's answer does.
      if (entry.openUntil !== null && !admission.probe) return null
      this.entries.delete(key)
      return entry.openUntil === null ? null : 'closed'
    }
    const current = entry ?? { timeouts: 0, openUntil: null, probing: false }
    this.entries.set(key, current)
    current.timeouts += 1
    if (admission.probe) current.probing = false
    const opens = current.openUntil === null && current.timeouts >= this.settings.timeouts
    if (opens || admission.probe) current.openUntil = this.settings.clock.now().getTime() + this.settings.openMs
    return opens ? 'opened' : null
  }
}

export const isRefusal = (answer: Admission | Refusal): answer is Refusal => 'until' in answer

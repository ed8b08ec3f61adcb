import type { Subscription } from 'rxjs'
import { isEventOf, type RecordedOf } from '../events/catalogue.js'
import type { LiveHub } from '../processes/liveHub.js'

export const triggerTypes = ['PaymentOrderApproved', 'CreditDisbursed'] as const
export type Trigger = RecordedOf<(typeof triggerTypes)[number]>

/**
 * The triggers the live hub has published (so the read models hold them)
 * that the firing process manager has not reached yet. The manager handles
 * one event at a time and waits for each send's start to be durable, so
 * firing triggers one by one costs a commit each; instead, when it handles a
 * trigger it also fires the ones already published after it, and their
 * starts share commits. A trigger fired ahead is marked, and the manager
 * skips it when it gets there; one whose firing failed is left to the manager.
 *
 * Only an optimization: entries past the bound are not kept (the manager
 * fires them in its turn), and after a restart the deterministic send ids
 * keep every send at most once whatever this remembered.
 */
export class UpcomingTriggers {
  private readonly published = new Map<string, Trigger>()
  private readonly firedAhead = new Set<string>()
  private readonly subscription: Subscription

  constructor(hub: LiveHub, private readonly bound: number) {
    this.subscription = hub.events$.subscribe((event) => {
      if (isEventOf(event, triggerTypes) && this.published.size < this.bound) this.published.set(event.id, event)
    })
  }

  /**
   * The published triggers after `position`, oldest first, at most `limit`,
   * taken out so no other firing claims them; triggers at or before
   * `position` are forgotten (the manager has reached them).
   */
  claim(position: number, limit: number): Trigger[] {
    const claimed: Trigger[] = []
    for (const [id, event] of this.published) {
      if (event.position > position) {
        if (claimed.length >= limit) break
        claimed.push(event)
      }
      this.published.delete(id)
    }
    return claimed
  }

  /** Every send of this trigger has its start recorded: the manager need not fire it again. */
  markFired(eventId: string): void {
    if (this.firedAhead.size < this.bound) this.firedAhead.add(eventId)
  }

  /** Whether this trigger was fired ahead of the manager (answered once). */
  takeFired(eventId: string): boolean {
    return this.firedAhead.delete(eventId)
  }

  close(): void {
    this.subscription.unsubscribe()
  }
}

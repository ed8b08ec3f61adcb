import type { CreditState } from '../events/creditState.js'
import type { PaymentOrderApproved } from '../events/paymentOrder.js'

type Approval = PaymentOrderApproved['data']

/** A credit as an approval rendered it: `base` (the read model's document) with the pending approvals and `orderId` applied. */
interface Rendered {
  base: CreditState
  orderId: string
  state: CreditState
}

/**
 * The approvals the firing has taken, in log order, kept per credit for the
 * next `capacity` approvals. An approval's `.Credit` must show every earlier
 * approval of the credit applied, then its own; the credit read model shows
 * only those the payment applier has recorded, which it does on its own
 * schedule, so approvals close together would otherwise each show only
 * themselves. The applier takes a credit's approvals in log order, so those
 * still to show are the ones after the last the credit has applied: an
 * approval needs no removal when applied, and ages out when `capacity`
 * later ones have been taken.
 */
export class ApprovalsInFlight {
  private readonly byCredit = new Map<string, Approval[]>()
  private readonly taken = new Set<string>()
  private readonly lastRendered = new Map<string, Rendered>()
  /** Credit ids in the order their approvals were taken: the oldest entry leaves first. */
  private readonly order: string[] = []
  private head = 0

  constructor(private readonly capacity = 4_096) {}

  /** Takes a batch's approvals in log order, before any of them is read; one taken again (a redelivery) keeps its place. */
  take(approval: Approval): void {
    if (this.taken.has(approval.orderId)) return
    this.taken.add(approval.orderId)
    const list = this.byCredit.get(approval.creditId) ?? []
    list.push(approval)
    this.byCredit.set(approval.creditId, list)
    this.order.push(approval.creditId)
    if (this.order.length - this.head > this.capacity) this.forgetOldest()
  }

  /**
   * The approvals of the credit taken before this order's and after the last
   * one `applied` says the credit shows, oldest first (none when this order
   * was not taken). Walked from this order back, so the work is the few not
   * yet applied, not every approval kept.
   */
  pendingBefore(creditId: string, orderId: string, applied: (orderId: string) => boolean): Approval[] {
    const list = this.byCredit.get(creditId) ?? []
    const index = indexOf(list, orderId)
    const pending: Approval[] = []
    for (let earlier = index - 1; earlier >= 0; earlier -= 1) {
      const approval = list[earlier]
      if (approval === undefined || applied(approval.orderId)) break
      pending.push(approval)
    }
    return pending.reverse()
  }

  /**
   * Where this order's rendering of its credit starts: the credit as the
   * approval taken just before it rendered it, when `base` (the read-model
   * document) is that rendering's own document or shows no approval after
   * it: nothing is left to apply but this order's payment. Otherwise `base`
   * with the approvals `pendingBefore` finds. The applier applies a credit's
   * approvals in log order, so a document whose last applied order is at or
   * before the rendered one is the same credit with fewer of them applied.
   * Approvals of one credit come faster than the applier records them, so
   * without this each would apply every pending one again, and each new
   * document from the applier would start that over.
   */
  renderFrom(creditId: string, orderId: string, base: CreditState, applied: (orderId: string) => boolean): { from: CreditState; pending: Approval[] } {
    const rendered = this.lastRendered.get(creditId)
    if (rendered !== undefined) {
      const list = this.byCredit.get(creditId) ?? []
      const index = indexOf(list, orderId)
      const previous = index - 1
      if (previous >= 0 && list[previous]?.orderId === rendered.orderId && (rendered.base === base || appliedUpTo(list, previous, base))) {
        return { from: rendered.state, pending: [] }
      }
    }
    return { from: base, pending: this.pendingBefore(creditId, orderId, applied) }
  }

  /** Keeps how this order rendered its credit, for the credit's next approval. */
  rendered(creditId: string, orderId: string, base: CreditState, state: CreditState): void {
    if (this.byCredit.has(creditId)) this.lastRendered.set(creditId, { base, orderId, state })
  }

  private forgetOldest(): void {
    const creditId = this.order[this.head] ?? ''
    this.head += 1
    const list = this.byCredit.get(creditId)
    const forgotten = list?.shift()
    if (forgotten !== undefined) this.taken.delete(forgotten.orderId)
    if (list?.length === 0) {
      this.byCredit.delete(creditId)
      this.lastRendered.delete(creditId)
    }
    // The consumed front of the queue is dropped now and then rather than shifted per entry.
    if (this.head >= this.capacity) {
      this.order.splice(0, this.head)
      this.head = 0
    }
  }
}

/** Whether the credit's last applied order is in the list at or before `last`: the document shows no approval after that one. */
const appliedUpTo = (list: readonly Approval[], last: number, credit: CreditState): boolean => {
  const lastApplied = credit.appliedOrders.at(-1)
  if (lastApplied === undefined) return false
  for (let index = last; index >= 0; index -= 1) if (list[index]?.orderId === lastApplied) return true
  return false
}

/** Where an order is in its credit's list, searched from the newest (an approval is read soon after it is taken); -1 if absent. */
const indexOf = (list: readonly Approval[], orderId: string): number => {
  let index = list.length - 1
  while (index >= 0 && list[index]?.orderId !== orderId) index -= 1
  return index
}

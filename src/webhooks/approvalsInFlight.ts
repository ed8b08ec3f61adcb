import type { PaymentOrderApproved } from '../events/paymentOrder.js'

type Approval = PaymentOrderApproved['data']

/**
 * The approvals the firing has taken, in log order, kept per credit for the
 * next `capacity` approvals. An approval's `.Credit` must show every earlier
 * approval of the credit applied, then its own; the credit read model shows
 * only those the payment applier has recorded, which it does on its own
 * schedule, so approvals close together would otherwise each show only
 * themselves. Ones the credit has applied meanwhile are skipped when applied
 * again (the credit remembers its orders), so an entry needs no removal
 * before it ages out; by then the applier has long recorded it.
 */
export class ApprovalsInFlight {
  private readonly byCredit = new Map<string, Approval[]>()
  /** Credit ids in the order their approvals were taken: the oldest entry leaves first. */
  private readonly order: string[] = []
  private head = 0

  constructor(private readonly capacity = 4_096) {}

  /** Takes a batch's approvals in log order, before any of them is read; one taken again (a redelivery) keeps its place. */
  take(approval: Approval): void {
    const list = this.byCredit.get(approval.creditId) ?? []
    if (list.some((taken) => taken.orderId === approval.orderId)) return
    list.push(approval)
    this.byCredit.set(approval.creditId, list)
    this.order.push(approval.creditId)
    if (this.order.length - this.head > this.capacity) this.forgetOldest()
  }

  /** The approvals of the credit taken before this order's, oldest first (none when this order was not taken). */
  before(creditId: string, orderId: string): Approval[] {
    const list = this.byCredit.get(creditId) ?? []
    const index = list.findIndex((taken) => taken.orderId === orderId)
    return index < 0 ? [] : list.slice(0, index)
  }

  private forgetOldest(): void {
    const creditId = this.order[this.head] ?? ''
    this.head += 1
    const list = this.byCredit.get(creditId)
    list?.shift()
    if (list?.length === 0) this.byCredit.delete(creditId)
    // The consumed front of the queue is dropped now and then rather than shifted per entry.
    if (this.head >= this.capacity) {
      this.order.splice(0, this.head)
      this.head = 0
    }
  }
}

import type { Allocation, InterestWaiver, ScheduledInstallmentRow } from '../shared/installments.js'
import type { RateType } from '../shared/lending.js'
import type { Event, RequestKey } from './types.js'

/** An installment as scheduled at request time. */
export type InstallmentSchedule = ScheduledInstallmentRow

export type CreditRequested = Event<'CreditRequested', {
  creditId: string
  organizationId: string
  creditLineId: string
  creditLineName: string
  debtorId: string
  principal: string
  /** Months. */
  term: number
  /** The line's rate percentage at request time, fixed for the life of the credit. */
  rate: string
  rateType: RateType
  /** Monthly rate as a percentage, 10 decimals (display; the schedule was computed unrounded). */
  monthlyRate: string
  currency: string
  installmentAmount: string
  totalInterest: string
  totalAmount: string
  /** The first due date the requester asked for, or null (then one month after disbursement). */
  requestedFirstDueDate: string | null
  /**
   * The first period from the request day to the provisional first due date
   * (whole months, then days): the first installment's interest is that
   * period's. Present on credits requested from November 2026 on; on earlier
   * ones the first installment is a month's interest whatever the period.
   * The disbursement replaces it with the final period (CreditDisbursed).
   */
  firstPeriod?: { months: number; days: number }
  /** The line's availableDays at request time: days an approval stays disbursable (0: no limit). */
  availableDays: number
  installments: InstallmentSchedule[]
  requestedAt: string
  /** The requester's `Idempotency-Key` and a hash of its request; absent when it sent none. */
  idempotency?: CreditRequestKey
}>

export type CreditRequestKey = RequestKey

export type CreditApproved = Event<'CreditApproved', { creditId: string; organizationId: string; approvedBy: string; approvedAt: string }>
export type CreditRejected = Event<'CreditRejected', { creditId: string; organizationId: string; reason: string; rejectedBy: string; rejectedAt: string }>
export type CreditCancelled = Event<'CreditCancelled', {
  creditId: string
  organizationId: string
  reason: string
  /** The state the credit was cancelled from (Solicitado or Aprobado). */
  from: 'Solicitado' | 'Aprobado'
  cancelledBy: string
  cancelledAt: string
}>

/** The credit reached Desembolsado: fires the line's onDeliveredWebhooks. Carries the final due dates. */
export type CreditDisbursed = Event<'CreditDisbursed', {
  creditId: string
  organizationId: string
  creditLineId: string
  debtorId: string
  principal: string
  currency: string
  method: string
  reference: string
  firstDueDate: string
  maturityDate: string
  installments: Array<{ installmentId: string; number: number; dueDate: string }>
  /**
   * The first period from the disbursement day to `firstDueDate` (whole
   * months, then days) and the first installment's interest and amount for
   * it. Absent on credits disbursed before November 2026, whose first
   * installment kept a month's interest whatever the period's length.
   */
  firstPeriod?: { months: number; days: number; interest: string; amount: string }
  disbursedBy: string
  disbursedAt: string
}>

/**
 * An automatic score of a requested credit, recorded by the creditScoring
 * process with the model version in force at the request; an `approve` or
 * `reject` decision is followed, in the same append, by CreditApproved or
 * CreditRejected.
 */
export type CreditScored = Event<'CreditScored', {
  creditId: string
  organizationId: string
  scoringModelId: string
  /** The version label of the model that scored, and its number (1, 2…). */
  version: string
  versionNumber: number
  /** Decimal string. */
  score: string
  decision: 'approve' | 'reject' | 'review'
  reasons: string[]
  scoredAt: string
}>

/** Part of a payment that went to one installment (interest first, then principal). */
export type PaymentAllocation = Allocation

/** An approved payment order applied to the credit (once per order). */
export type CreditPaymentApplied = Event<'CreditPaymentApplied', {
  creditId: string
  organizationId: string
  creditLineId: string
  orderId: string
  /** The order's installment id, or `zero` for a full-flow order. */
  installmentId: string
  installmentNumber: number
  currency: string
  /** The order's amount. */
  amount: string
  /** What went to installments (interest first, then principal). */
  appliedAmount: string
  /** Money received beyond what was owed when the order was applied (to refund or re-apply). */
  unappliedAmount: string
  collectionCosts: string
  /**
   * Per installment, adding up to `appliedAmount`. In a payoff an
   * installment's interest is negative when interest paid ahead of its
   * accrual is credited to principal.
   */
  allocations: PaymentAllocation[]
  /**
   * A `zero` order that covered the payoff on its day weighed: the day the
   * quote was for and the interest of later periods it forgave. Absent on any
   * other payment (and on every payment recorded before payoffs waived
   * interest, which charged the whole schedule).
   */
  payoff?: { day: string; waivers: InterestWaiver[] }
  outstanding: { principal: string; interest: string; total: string }
  appliedAt: string
}>

/** Nothing is owed any more: the credit is Pagado. */
export type CreditPaid = Event<'CreditPaid', { creditId: string; organizationId: string; paidAt: string }>

export type CreditEvent =
  | CreditRequested
  | CreditApproved
  | CreditRejected
  | CreditCancelled
  | CreditDisbursed
  | CreditScored
  | CreditPaymentApplied
  | CreditPaid

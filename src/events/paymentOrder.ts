import type { OrderType, PaymentProviderName } from '../shared/lending.js'
import type { Event } from './types.js'

export type PaymentOrderCreated = Event<'PaymentOrderCreated', {
  orderId: string
  organizationId: string
  creditId: string
  creditLineId: string
  /** An installment id, or `zero` for a full-flow payment: the payoff, which settles the credit. */
  installmentId: string
  /** 0 for a `zero` order. */
  installmentNumber: number
  amount: string
  currency: string
  collectionCosts: string
  type: OrderType
  provider: PaymentProviderName
  method: string
  gatewayOption: string
  overrideMethod: string
  /** The idempotency key of the creation request ('' when none was given). */
  key: string
  /** SHA-256 of the creation request's normalized body: a key reused with another body is refused. */
  requestHash: string
  /** Value date the payer gave (`Date`), or the creation time. */
  paymentDate: string
  creatorId: string
  /** The line demanded, at creation, an approver other than the creator. */
  requireDistinctApprover: boolean
  createdAt: string
}>

/** The provider accepted the payment and is processing it. */
export type PaymentOrderSubmitted = Event<'PaymentOrderSubmitted', {
  orderId: string
  organizationId: string
  provider: PaymentProviderName
  transactionReference: string
  paymentReference: string
  /** When to ask the provider for the outcome. */
  pollAfter: string
  submittedAt: string
}>

/** Status `completed`: fires the line's onOrderWebhooks and is applied to the credit. */
export type PaymentOrderApproved = Event<'PaymentOrderApproved', Pick<PaymentOrderCreated['data'], 'orderId' | 'organizationId' | 'creditId'
  | 'creditLineId' | 'installmentId' | 'installmentNumber' | 'amount' | 'collectionCosts' | 'currency' | 'provider' | 'createdAt'> & {
  /** User or client id that approved through the API; '' when the provider completed the payment. */
  approverId: string
  approvedBy: 'principal' | 'provider'
  paymentReference: string
  /** Milliseconds from creation to completion. */
  processingTime: number
  completedAt: string
  /** The order's value date (`PaymentDate`), which a payoff is weighed on; absent on approvals recorded before payoffs were (the applier then reads the order's). */
  paymentDate?: string
}>

/**
 * Status `failed`: rejected through the API (`principal`), declined by the
 * provider (`provider`), or withdrawn by the service (`service`) before it was
 * submitted, its credit paid off or its installment paid meanwhile.
 */
export type PaymentOrderFailed = Event<'PaymentOrderFailed', {
  orderId: string
  organizationId: string
  creditId: string
  errorMessage: string
  failedBy: 'principal' | 'provider' | 'service'
  /** The rejecting user or client; '' when the provider declined or the service withdrew it. */
  actorId: string
  processingTime: number
  failedAt: string
}>

export type PaymentOrderEvent = PaymentOrderCreated | PaymentOrderSubmitted | PaymentOrderApproved | PaymentOrderFailed

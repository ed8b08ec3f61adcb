import type { PaymentOrderCreated } from '../events/paymentOrder.js'
import { evolvePaymentOrder, initialPaymentOrderState, type PaymentOrderState, type PaymentOrderStreamEvent } from '../events/paymentOrderState.js'
import type { TaxRate } from '../events/tax.js'
import { AppError, invalidTransition } from '../shared/errors.js'
import { orderTransitions, type OrderStatus } from '../shared/lending.js'
import type { Aggregate } from './decider.js'
import { orderTaxApplications } from './taxation.js'

type OrderFields = PaymentOrderCreated['data']

export type PaymentOrderCommand =
  /** `taxes`: the organization's active taxes (read before the command, like `now`); those that apply are recorded with the order. */
  | { type: 'CreatePaymentOrder'; order: OrderFields; taxes: readonly TaxRate[] }
  | { type: 'SubmitPaymentOrder'; transactionReference: string; paymentReference: string; pollAfter: string; now: string }
  /** `lineRequiresDistinctApprover`: the line's setting now; the order keeps the one of its creation, and either applies. */
  | { type: 'ApprovePaymentOrder'; approverId: string; lineRequiresDistinctApprover: boolean; now: string }
  | { type: 'RejectPaymentOrder'; reason: string; actorId: string; now: string }
  /** The provider's outcome of a payment it processed. */
  | { type: 'SettlePaymentOrder'; outcome: 'completed' | 'failed'; errorMessage: string; paymentReference: string; now: string }
  /** The service fails an order nobody submitted yet whose credit or installment owes nothing any more (a payoff raced it). */
  | { type: 'WithdrawPaymentOrder'; reason: string; now: string }

const requireOrder = (state: PaymentOrderState): { status: OrderStatus; order: OrderFields } => {
  if (state.status === 'none' || state.order === null) throw new AppError('NOT_FOUND', 'payment order not found', { resource: 'order' })
  return { status: state.status, order: state.order }
}

const moveTo = (state: PaymentOrderState, to: OrderStatus): OrderFields => {
  const { status, order } = requireOrder(state)
  const allowed = orderTransitions[status]
  if (!allowed.includes(to)) throw invalidTransition(status, to, allowed)
  return order
}

const elapsed = (from: string, to: string): number => Math.max(0, Date.parse(to) - Date.parse(from))

const approved = (state: PaymentOrderState, order: OrderFields, approverId: string, paymentReference: string, now: string): PaymentOrderStreamEvent => ({
  type: 'PaymentOrderApproved',
  data: {
    orderId: order.orderId, organizationId: order.organizationId, creditId: order.creditId, creditLineId: order.creditLineId,
    installmentId: order.installmentId, installmentNumber: order.installmentNumber, amount: order.amount, collectionCosts: order.collectionCosts,
    currency: order.currency, provider: order.provider, approverId, approvedBy: approverId === '' ? 'provider' : 'principal',
    paymentReference: paymentReference === '' ? state.paymentReference : paymentReference,
    processingTime: elapsed(order.createdAt, now), createdAt: order.createdAt, completedAt: now, paymentDate: order.paymentDate,
  },
})

const failed = (
  order: OrderFields, errorMessage: string, actorId: string, now: string, failedBy: 'provider' | 'service' = 'provider',
): PaymentOrderStreamEvent => ({
  type: 'PaymentOrderFailed',
  data: {
    orderId: order.orderId, organizationId: order.organizationId, creditId: order.creditId, errorMessage,
    failedBy: actorId === '' ? failedBy : 'principal', actorId, processingTime: elapsed(order.createdAt, now), failedAt: now,
  },
})

export const paymentOrderAggregate: Aggregate<PaymentOrderCommand, PaymentOrderStreamEvent, PaymentOrderState> = {
  streamType: 'order',
  eventTypes: ['PaymentOrderCreated', 'PaymentOrderSubmitted', 'PaymentOrderApproved', 'PaymentOrderFailed', 'TaxApplied'],
  initialState: initialPaymentOrderState,
  decide(command, state) {
    switch (command.type) {
      case 'CreatePaymentOrder': {
        const fields = command.order
        if (state.order !== null) {
          // The same idempotency key: the same request is answered with the order it made, another one is refused.
          if (state.order.requestHash === fields.requestHash) return []
          throw new AppError('IDEMPOTENCY_KEY_REUSED', 'this Key was already used for a different payment order request on this credit', {
            key: fields.key, orderId: state.order.orderId,
          })
        }
        return [{ type: 'PaymentOrderCreated', data: fields }, ...orderTaxApplications(command.taxes, fields, fields.createdAt)]
      }
      case 'SubmitPaymentOrder': {
        const { order } = requireOrder(state)
        if (state.status !== 'pending') return []
        return [{ type: 'PaymentOrderSubmitted', data: {
          orderId: order.orderId, organizationId: order.organizationId, provider: order.provider, transactionReference: command.transactionReference,
          paymentReference: command.paymentReference, pollAfter: command.pollAfter, submittedAt: command.now,
        } }]
      }
      case 'ApprovePaymentOrder': {
        const order = moveTo(state, 'completed')
        if ((order.requireDistinctApprover || command.lineRequiresDistinctApprover) && order.creatorId === command.approverId) {
          throw new AppError('APPROVER_IS_CREATOR', 'this credit line requires a payment order to be approved by someone other than its creator', {
            creatorId: order.creatorId,
          })
        }
        return [approved(state, order, command.approverId, '', command.now)]
      }
      case 'RejectPaymentOrder':
        return [failed(moveTo(state, 'failed'), command.reason, command.actorId, command.now)]
      case 'SettlePaymentOrder': {
        const { status, order } = requireOrder(state)
        // An outcome for an order already decided through the API changes nothing.
        if (status === 'completed' || status === 'failed') return []
        return command.outcome === 'completed'
          ? [approved(state, order, '', command.paymentReference, command.now)]
          : [failed(order, command.errorMessage, '', command.now)]
      }
      case 'WithdrawPaymentOrder': {
        const { status, order } = requireOrder(state)
        // Submitted to a provider, approved or failed already: nothing to withdraw.
        if (status !== 'pending') return []
        return [failed(order, command.reason, '', command.now, 'service')]
      }
      default: {
        const _never: never = command
        return _never
      }
    }
  },
  evolve: evolvePaymentOrder,
}

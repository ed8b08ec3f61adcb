import { creditAggregate } from '../commands/credit.js'
import type { CreditState } from '../events/creditState.js'
import type { PaymentOrderApproved } from '../events/paymentOrder.js'
import type { ResponseValues } from '../projections/webhookResponseValues.js'
import type { Services } from '../services.js'
import { AppError } from '../shared/errors.js'
import type { TriggerContext } from '../templates/context.js'
import type { ApprovalsInFlight } from './approvalsInFlight.js'
import type { ContextSource } from './context.js'

/**
 * The credit as it stands once an approved order is applied. The payment
 * applier records that application on its own schedule; folding the same
 * decision here makes an approval's `.Credit` show the payment every time,
 * whether or not the applier has run yet.
 */
export const withPaymentApplied = (credit: CreditState, approval: PaymentOrderApproved['data']): CreditState => {
  if (credit.appliedOrders.includes(approval.orderId)) return credit
  try {
    const events = creditAggregate.decide({
      type: 'ApplyPayment', orderId: approval.orderId, installmentId: approval.installmentId, installmentNumber: approval.installmentNumber,
      amount: approval.amount, collectionCosts: approval.collectionCosts, valueDate: approval.paymentDate ?? approval.completedAt, orderedAt: approval.createdAt,
      now: approval.completedAt,
    }, credit)
    return events.reduce(creditAggregate.evolve, credit)
  } catch (error) {
    // An order the credit cannot take (the applier refuses it too): the credit as it is.
    if (error instanceof AppError) return credit
    throw error
  }
}

/** The credit with the approvals of it the firing took before this one applied in log order, then this one. */
const withApprovalsApplied = (credit: CreditState, approval: PaymentOrderApproved['data'], approvals: ApprovalsInFlight): CreditState => {
  const { creditId, orderId } = approval
  const { from, pending } = approvals.renderFrom(creditId, orderId, credit, (id) => credit.appliedOrders.includes(id))
  const state = [...pending, approval].reduce(withPaymentApplied, from)
  approvals.rendered(creditId, orderId, credit, state)
  return state
}

/** `fromWebhook` over the values stored for one credit: nil (null) when none. */
export const fromWebhookLookup = (values: ResponseValues) => (tag: string, query: string): unknown => values.get(tag)?.get(query) ?? null

export interface SourceRequest {
  organizationId: string
  creditId: string
  /** The order of an approval (or of the send a manual re-send repeats). */
  orderId: string | null
  /** For automatic sends of an approval: render the credit with this payment applied. */
  approval: PaymentOrderApproved['data'] | null
  trigger: Omit<TriggerContext, 'SendID'>
}

/** Everything a credit's sends render from, read once per trigger: null when the credit is not in the read model. */
export const loadSource = async (services: Services, request: SourceRequest): Promise<Omit<ContextSource, 'trigger'> & {
  trigger: Omit<TriggerContext, 'SendID'>
  values: ResponseValues
} | null> => {
  const { queries } = services
  const { organizationId, creditId, orderId } = request
  const credit = await queries.credits.get(organizationId, creditId)
  if (credit === null) return null
  const [debtor, order, organizationName, values] = await Promise.all([
    queries.profiles.get(organizationId, credit.debtorId),
    orderId === null ? null : queries.paymentOrders.get(orderId),
    services.webhooks.directory.organizationName(organizationId),
    queries.webhookResponseValues.forCredit(organizationId, creditId),
  ])
  return {
    credit: request.approval === null ? credit : withApprovalsApplied(credit, request.approval, services.webhooks.approvals),
    debtor,
    order: order !== null && order.organizationId === organizationId ? order : null,
    organization: { id: organizationId, name: organizationName },
    trigger: request.trigger,
    at: services.clock.now(),
    values,
  }
}

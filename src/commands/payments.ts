import type { CreditLineConfiguration } from '../events/creditLine.js'
import type { PaymentOrderApproved } from '../events/paymentOrder.js'
import type { CreditState } from '../events/creditState.js'
import type { PaymentOrderState } from '../events/paymentOrderState.js'
import type { TaxRate } from '../events/tax.js'
import { dayOf } from '../shared/amortization.js'
import { AppError, invalidFields, notFound, type FieldError } from '../shared/errors.js'
import { exact, isZero, larger, lessThan, toMoneyText, ZERO, type ExactDecimal } from '../shared/exactDecimal.js'
import { deterministicId, newId } from '../shared/ids.js'
import { owedFor } from '../shared/installments.js'
import { payoffOf } from '../shared/payoff.js'
import { isPaymentProviderName, providerDefaultMethods, ZERO_INSTALLMENT } from '../shared/lending.js'
import { fitsMinorUnit, money, toMoneyString } from '../shared/money.js'
import { creditAggregate } from './credit.js'
import { creditLineAggregate, methodNames } from './creditLine.js'
import type { CommandContext, CommandHandler } from './handler.js'
import { createOnce, hashRequest } from './idempotency.js'
import { loadCreditIn } from './lending.js'
import { paymentOrderAggregate } from './paymentOrder.js'

/** The interface's order body, as received. */
export interface OrderRequest {
  Amount?: string
  Provider?: string
  Date?: string
  OverrideMethod?: string
  Key?: string
  GatewayOption?: string
  CollectionCosts?: string
}

/** A Key names one order per credit: its id (and stream) derive from both, so concurrent duplicates meet on one stream. */
export const keyedOrderId = (creditId: string, key: string): string => deterministicId('order', creditId, key)

/** Hash of what makes two requests with one Key "the same": amounts compared as numbers, absent fields as absent. */
export const orderRequestHash = (installmentId: string, body: OrderRequest): string => {
  const amount = (value: string | undefined) => (value === undefined ? null : money(value).toFixed())
  return hashRequest([
    installmentId, amount(body.Amount), body.Provider ?? null, body.Date === undefined ? null : new Date(body.Date).toISOString(),
    body.OverrideMethod ?? null, body.GatewayOption ?? null, amount(body.CollectionCosts),
  ])
}

export interface CreatedOrder {
  order: PaymentOrderState
  /** False when the Key named an order that already existed (the same request again). */
  created: boolean
  position: number
}

const existingOrder = (
  state: PaymentOrderState, scope: { organizationId: string; creditId: string }, requestHash: string, key: string, position: number,
): CreatedOrder => {
  if (state.order === null || state.order.organizationId !== scope.organizationId) throw notFound('credit', scope.creditId)
  if (state.order.requestHash !== requestHash) {
    throw new AppError('IDEMPOTENCY_KEY_REUSED', 'this Key was already used for a different payment order request on this credit', {
      key, orderId: state.order.orderId,
    })
  }
  return { order: state, created: false, position }
}

const moneyErrors = (field: string, value: string, currency: string, positive: boolean): FieldError[] => {
  const amount = money(value)
  if (positive ? amount.lessThanOrEqualTo(0) : amount.isNegative()) return [{ field, message: positive ? 'must be positive' : 'must not be negative' }]
  if (!fitsMinorUnit(value, currency)) return [{ field, message: `has more decimals than ${currency} allows` }]
  return []
}

/** A value date is a day money moved: not one to come, nor one before the credit's money left. */
const valueDateErrors = (date: string | undefined, disbursedAt: string | null, now: string): FieldError[] => {
  if (date === undefined) return []
  const day = dayOf(date)
  if (day > dayOf(now)) return [{ field: 'body.Date', message: `must not be after today (${dayOf(now)})` }]
  if (disbursedAt !== null && day < dayOf(disbursedAt)) return [{ field: 'body.Date', message: `must not be before the credit's disbursement (${dayOf(disbursedAt)})` }]
  return []
}

/** Amounts, value date, provider and method of an order request against what is owed, the credit and the line; the provider and method it gets. */
const checkOrderRequest = (
  body: OrderRequest, owed: Owed, credit: { currency: string; disbursedAt: string | null }, line: CreditLineConfiguration | null,
  now: string,
) => {
  const { currency } = credit
  const provider = body.Provider ?? line?.provider ?? 'manual'
  const gatewayMethods = methodNames(line?.gatewayMethods ?? [])
  const errors: FieldError[] = [...valueDateErrors(body.Date, credit.disbursedAt, now)]
  if (body.Amount !== undefined) {
    // A payoff of 0 is ordered for 0; every other order pays something.
    errors.push(...moneyErrors('body.Amount', body.Amount, currency, !(owed.whole && isZero(owed.amount))))
    const payoff = toMoneyText(owed.amount, currency)
    if (lessThan(owed.amount, exact(body.Amount))) errors.push({ field: 'body.Amount', message: `must not exceed ${owed.what} (${payoff})` })
    else if (owed.whole && lessThan(exact(body.Amount), owed.amount)) {
      errors.push({ field: 'body.Amount', message: `must be ${owed.what} (${payoff}): a zero order pays the credit off; pay part of it with installment orders` })
    }
  }
  if (body.CollectionCosts !== undefined) errors.push(...moneyErrors('body.CollectionCosts', body.CollectionCosts, currency, false))
  if (body.OverrideMethod !== undefined && gatewayMethods.length > 0 && !gatewayMethods.includes(body.OverrideMethod)) {
    errors.push({ field: 'body.OverrideMethod', message: `must be one of the line's gateway methods: ${gatewayMethods.join(', ')}` })
  }
  if (!isPaymentProviderName(provider)) {
    throw invalidFields([...errors, { field: 'body.Provider', message: `unknown payment provider "${provider}"` }])
  }
  if (errors.length > 0) throw invalidFields(errors)
  return { provider, method: body.OverrideMethod ?? gatewayMethods[0] ?? providerDefaultMethods[provider] }
}

export interface OrderInput {
  organizationId: string
  creditId: string
  installmentId: string
  body: OrderRequest
  taxes: readonly TaxRate[]
  creatorId: string
  now: string
}

/**
 * A payment order on an installment (or `zero`: the payoff, which settles the credit)
 * of a disbursed credit. With a Key the order id derives from credit and Key,
 * and the order stream is created with `no_stream`: whatever the concurrency,
 * one order exists per Key; the same request again gets it back, another
 * request with that Key is refused. `taxes` are the organization's active
 * taxes on `PAYMENT` and `FEE` (none are needed without collection costs):
 * those that apply to the collection costs are recorded with the order.
 */
export const createPaymentOrder = async (commands: CommandHandler, input: OrderInput, context: CommandContext): Promise<CreatedOrder> => {
  const { body, organizationId, creditId } = input
  const key = body.Key ?? ''
  const requestHash = orderRequestHash(input.installmentId, body)
  const orderId = key === '' ? newId() : keyedOrderId(creditId, key)
  const earlier = async () => {
    if (key === '') return null
    const existing = await commands.load(paymentOrderAggregate, orderId)
    return existing.revision === 'no_stream' ? null : existingOrder(existing.state, { organizationId, creditId }, requestHash, key, existing.position)
  }
  // The credit is checked in the caller's organization before the Key is looked up, so another organization's Keys stay unobservable.
  const credit = await loadCreditIn(commands, organizationId, creditId)
  return createOnce(earlier, () => createOrder(commands, { ...input, orderId, key, requestHash }, credit, context), (result) => ({
    order: result.state, created: true, position: result.position,
  }))
}

/** The order a request creates on the credit, once the Key named none. */
const createOrder = async (
  commands: CommandHandler,
  input: OrderInput & { orderId: string; key: string; requestHash: string },
  credit: CreditState,
  context: CommandContext,
) => {
  const { body, organizationId, creditId, orderId, key, requestHash } = input
  const refusal = unpayable(credit, input.installmentId)
  if (refusal !== null) throw refusal
  const paymentDate = body.Date === undefined ? input.now : new Date(body.Date).toISOString()
  const owed = owedByOrder(credit, input.installmentId, paymentDate, input.now)
  if (owed === null) throw notFound('installment', input.installmentId)
  const { currency } = credit
  const { state: line } = await commands.load(creditLineAggregate, credit.creditLineId)
  const config = line.configuration
  const { provider, method } = checkOrderRequest(body, owed, credit, config, input.now)
  const installment = credit.installments.find((i) => i.installmentId === input.installmentId)
  const created = await commands.execute(paymentOrderAggregate, orderId, { type: 'CreatePaymentOrder', order: {
    orderId, organizationId, creditId, creditLineId: credit.creditLineId, installmentId: input.installmentId,
    installmentNumber: input.installmentId === ZERO_INSTALLMENT ? 0 : installment?.number ?? 0,
    amount: body.Amount === undefined ? toMoneyText(owed.amount, currency) : toMoneyString(body.Amount, currency), currency, collectionCosts: toMoneyString(body.CollectionCosts ?? '0', currency),
    type: 'payment', provider, method,
    gatewayOption: body.GatewayOption ?? '', overrideMethod: body.OverrideMethod ?? '', key, requestHash,
    paymentDate, creatorId: input.creatorId,
    requireDistinctApprover: config?.requireDistinctApprover ?? false, createdAt: input.now,
  }, taxes: input.taxes }, context)
  // The credit was read before the order's append: a payoff committed in between is only seen now.
  const late = await withdrawIfUnpayable(commands, { creditId, installmentId: input.installmentId, orderId }, input.now, context)
  if (late.outcome === 'stands') return created
  // Withdrawn now, or already by the payment flow: either way the order is failed and the answer is the refusal.
  const { state: order } = await commands.load(paymentOrderAggregate, orderId)
  if (late.outcome === 'withdrawn' || order.status === 'failed') throw late.refusal
  return { ...created, state: order }
}

/**
 * What an order on the installment may pay at most, and pays by default: the
 * installment's outstanding amount, or for `zero` the payoff at the order's
 * value date (interest of later periods is not owed; docs/credits.md).
 */
const owedByOrder = (credit: CreditState, installmentId: string, paymentDate: string, now: string): Owed | null => {
  if (installmentId !== ZERO_INSTALLMENT || credit.disbursedAt === null) {
    const amount = owedFor(credit.installments, installmentId)
    return amount === null ? null : { amount, what: 'what is owed', whole: false }
  }
  const { day, total } = payoffOf(credit, credit.disbursedAt, paymentDate, now)
  // Every principal paid ahead, or interest paid ahead worth more than what is owed: an order of 0 settles the credit, the rest owed back.
  const amount = larger(total, ZERO)
  return { amount, what: `the payoff on ${day}`, whole: true }
}

/** What an order may pay: at most `amount`, and exactly that when `whole` (a `zero` order pays the credit off). */
interface Owed {
  amount: ExactDecimal
  what: string
  whole: boolean
}

/** Why a credit takes no order on the installment (`zero`: the credit, owing anything) now, or null when it does. */
const unpayable = (credit: CreditState, installmentId: string): AppError | null => {
  if (credit.status !== 'Desembolsado') {
    return new AppError('CREDIT_NOT_PAYABLE', `payment orders need a Desembolsado credit; this one is ${credit.status}`, { state: credit.status })
  }
  const owed = owedFor(credit.installments, installmentId)
  if (owed !== null && isZero(owed)) return new AppError('INSTALLMENT_ALREADY_PAID', 'nothing is owed on this installment', { installmentId })
  return null
}

/**
 * Fails an order no provider has taken yet (`pending`) when its credit or
 * installment owes nothing any more: a payoff committed after the order's
 * checks read the credit. `stands`: the credit still takes it; `withdrawn`:
 * failed now; `not-pending`: it owes nothing but the order was no longer
 * pending (taken by a provider, decided, or withdrawn already), so nothing
 * was recorded. The refusal names the order.
 */
export const withdrawIfUnpayable = async (
  commands: CommandHandler, order: { creditId: string; installmentId: string; orderId: string }, now: string, context: CommandContext,
): Promise<{ outcome: 'stands' } | { outcome: 'withdrawn' | 'not-pending'; refusal: AppError }> => {
  const { state: credit } = await commands.load(creditAggregate, order.creditId)
  const reason = unpayable(credit, order.installmentId)
  if (reason === null) return { outcome: 'stands' }
  const { events } = await commands.execute(paymentOrderAggregate, order.orderId, { type: 'WithdrawPaymentOrder', reason: reason.message, now }, context)
  const refusal = new AppError(reason.code, reason.message, { ...reason.details, orderId: order.orderId })
  return { outcome: events.length === 0 ? 'not-pending' : 'withdrawn', refusal }
}

/** The order when it exists under the credit and installment of the path, in the organization. */
export const loadOrderIn = async (
  commands: CommandHandler,
  scope: { organizationId: string; creditId: string; installmentId: string; orderId: string },
) => {
  const { state } = await commands.load(paymentOrderAggregate, scope.orderId)
  const order = state.order
  if (order === null || order.organizationId !== scope.organizationId || order.creditId !== scope.creditId || order.installmentId !== scope.installmentId) {
    throw notFound('payment order', scope.orderId)
  }
  return state
}

/**
 * Approves an order found in the organization. The line's rule as it is now
 * counts beside the one the order recorded at its creation: switched on
 * later, it still holds the order (read from the line's stream, which no
 * read model lags).
 */
export const approvePaymentOrder = async (
  commands: CommandHandler,
  scope: { organizationId: string; creditId: string; installmentId: string; orderId: string },
  approval: { approverId: string; now: string },
  context: CommandContext,
) => {
  const { order } = await loadOrderIn(commands, scope)
  const line = order === null ? null : (await commands.load(creditLineAggregate, order.creditLineId)).state.configuration
  return commands.execute(paymentOrderAggregate, scope.orderId, {
    type: 'ApprovePaymentOrder', ...approval, lineRequiresDistinctApprover: line?.requireDistinctApprover ?? false,
  }, context)
}

/** Applies an approved order to its credit; the credit remembers applied orders, so a redelivery changes nothing. */
export const applyApprovedPayment = async (commands: CommandHandler, approval: PaymentOrderApproved['data'], context: CommandContext) =>
  commands.execute(creditAggregate, approval.creditId, {
    type: 'ApplyPayment', orderId: approval.orderId, installmentId: approval.installmentId, installmentNumber: approval.installmentNumber,
    amount: approval.amount, collectionCosts: approval.collectionCosts, valueDate: approval.paymentDate ?? await recordedPaymentDate(commands, approval),
    orderedAt: approval.createdAt, now: approval.completedAt,
  }, context)

/** The value date of an order approved before approvals carried it: read from the order itself. */
const recordedPaymentDate = async (commands: CommandHandler, approval: PaymentOrderApproved['data']): Promise<string> =>
  (await commands.load(paymentOrderAggregate, approval.orderId)).state.order?.paymentDate ?? approval.completedAt

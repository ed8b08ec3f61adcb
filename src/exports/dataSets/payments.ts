import type { Static } from 'typebox'
import type { OrderDoc } from '../../projections/paymentOrders.js'
import type { Filter } from '../../projections/readStore.js'
import { money as decimalOf, toMoneyString } from '../../shared/money.js'
import type { PaymentFilters } from '../catalogue.js'
import { defineDataSet, type DataSetContext } from '../dataSets.js'
import { integer, money, text, timestamp } from '../lib/columns.js'
import { instantsIn, periodOf, type Period } from '../lib/period.js'
import { taxColumns } from '../lib/taxColumns.js'

type Filters = Static<typeof PaymentFilters>

/**
 * The read-model filter of a body: every field but the amounts is a query
 * condition; `debtorId` becomes the debtor's credits (orders do not name the
 * debtor, and a debtor has a bounded number of credits).
 */
const orderFilter = async (period: Period, filters: Filters, context: DataSetContext): Promise<Filter> => {
  const filter: Filter = instantsIn('createdAt', period)
  const and: Filter[] = []
  if (filters.status !== undefined) filter['status'] = { $in: filters.status }
  if (filters.provider !== undefined) filter['provider'] = { $in: filters.provider }
  if (filters.orderType !== undefined) filter['order.type'] = { $in: filters.orderType }
  if (filters.creditLineId !== undefined) filter['order.creditLineId'] = { $in: filters.creditLineId }
  if (filters.creditId !== undefined) and.push({ creditId: filters.creditId })
  if (filters.debtorId !== undefined) {
    const credits: string[] = []
    for await (const credit of context.queries.credits.stream(context.organizationId, { debtorId: filters.debtorId })) credits.push(credit._id)
    and.push({ creditId: { $in: credits } })
  }
  return and.length === 0 ? filter : { ...filter, $and: and }
}

/** `minAmount` and `maxAmount` compare decimals, which the stores cannot: they are checked on each order. */
const amountWithin = (filters: Filters) => (order: OrderDoc): boolean => {
  const amount = decimalOf(order.order?.amount ?? '0')
  return (filters.minAmount === undefined || amount.greaterThanOrEqualTo(filters.minAmount))
    && (filters.maxAmount === undefined || amount.lessThanOrEqualTo(filters.maxAmount))
}

async function* matchingOrders(body: { after?: string; before?: string; filters?: Filters }, context: DataSetContext): AsyncIterable<OrderDoc> {
  const filters = body.filters ?? {}
  const within = amountWithin(filters)
  const filter = await orderFilter(periodOf(body, context.requestedAt), filters, context)
  for await (const order of context.queries.paymentOrders.stream(context.organizationId, filter)) if (within(order)) yield order
}

/** Completed or failed; the read model keeps a processing time of 0 until then. */
const decided = (order: OrderDoc): boolean => order.status === 'completed' || order.status === 'failed'

const field = <K extends keyof NonNullable<OrderDoc['order']>>(order: OrderDoc, key: K) => order.order?.[key]

/**
 * Payment orders created in the period, in every status, narrowed by
 * `filters` (each field narrows; absent fields do not filter).
 */
export const paymentsDataSet = defineDataSet({
  type: 'payments',
  description: 'payment orders created in the period, narrowed by filters',
  columns: [
    text<OrderDoc>('order_id', 'payment order id', (o) => o._id),
    timestamp<OrderDoc>('created_at', 'when the order was created', (o) => o.createdAt),
    text<OrderDoc>('credit_id', 'credit id', (o) => o.creditId),
    text<OrderDoc>('credit_line_id', 'credit line id', (o) => field(o, 'creditLineId')),
    text<OrderDoc>('installment_id', 'installment id, or `zero` for the whole balance', (o) => o.installmentId),
    integer<OrderDoc>('installment_number', 'installment number (0 for `zero`)', (o) => field(o, 'installmentNumber')),
    text<OrderDoc>('type', 'order type (`payment`)', (o) => field(o, 'type')),
    text<OrderDoc>('provider', '`manual` or `sandbox`', (o) => o.provider),
    text<OrderDoc>('method', 'payment method (pse, credit_card, cash…)', (o) => field(o, 'method')),
    text<OrderDoc>('status', '`pending`, `processing`, `completed` or `failed`', (o) => o.status),
    text<OrderDoc>('currency', 'ISO 4217 code', (o) => field(o, 'currency')),
    money<OrderDoc>('amount', 'amount applied to the debt', (o) => field(o, 'amount')),
    money<OrderDoc>('collection_costs', 'charged on top of the amount', (o) => field(o, 'collectionCosts')),
    money<OrderDoc>('total_charged', 'amount plus collection costs', (o) => {
      const currency = field(o, 'currency')
      return currency === undefined ? null : toMoneyString(decimalOf(field(o, 'amount') ?? '0').plus(field(o, 'collectionCosts') ?? '0'), currency)
    }),
    timestamp<OrderDoc>('payment_date', 'value date the payer gave', (o) => field(o, 'paymentDate')),
    text<OrderDoc>('transaction_reference', 'provider transaction reference', (o) => o.transactionReference),
    text<OrderDoc>('payment_reference', 'provider payment reference', (o) => o.paymentReference),
    timestamp<OrderDoc>('submitted_at', 'when the provider took it', (o) => o.submittedAt),
    timestamp<OrderDoc>('completed_at', 'when it was completed', (o) => o.completedAt),
    text<OrderDoc>('approver_id', 'who approved it; empty when the provider completed it', (o) => o.approverId),
    text<OrderDoc>('error_message', 'why it failed', (o) => o.errorMessage),
    integer<OrderDoc>('processing_time_ms', 'milliseconds from creation to the decision; empty while undecided',
      (o) => (decided(o) ? o.processingTime : null)),
    money<OrderDoc>('applied_amount', 'what went to the installments', (o) => o.application?.appliedAmount),
    money<OrderDoc>('unapplied_amount', 'received beyond what was owed', (o) => o.application?.unappliedAmount),
    timestamp<OrderDoc>('applied_at', 'when it was applied to the credit', (o) => o.application?.appliedAt),
    text<OrderDoc>('creator_id', 'who created it', (o) => field(o, 'creatorId')),
    text<OrderDoc>('idempotency_key', 'the creation request\'s Key', (o) => field(o, 'key')),
    timestamp<OrderDoc>('updated_at', 'last change', (o) => o.updatedAt),
    ...taxColumns<OrderDoc>('the collection costs', (o) => o.taxes, (o) => field(o, 'currency')),
  ],
  rows: matchingOrders,
  async count(body, context) {
    const filters = body.filters ?? {}
    if (filters.minAmount === undefined && filters.maxAmount === undefined) {
      return context.queries.paymentOrders.count(context.organizationId, await orderFilter(periodOf(body, context.requestedAt), filters, context))
    }
    let n = 0
    for await (const _order of matchingOrders(body, context)) n += 1
    return n
  },
})

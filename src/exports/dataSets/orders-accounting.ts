import { paymentMovementId } from '../../projections/creditMovements.js'
import type { OrderDoc } from '../../projections/paymentOrders.js'
import { money as decimalOf, toMoneyString } from '../../shared/money.js'
import { defineDataSet } from '../dataSets.js'
import { date, integer, money, text, timestamp } from '../lib/columns.js'
import { ledgerAccounts } from '../lib/ledger.js'
import { instantsIn, periodOf, type Period } from '../lib/period.js'

const completedIn = (period: Period) => ({ status: 'completed', ...instantsIn('completedAt', period) })

const applied = (order: OrderDoc, part: 'principal' | 'interest'): string | null => {
  const { application, order: fields } = order
  if (application === null || fields === null) return null
  return toMoneyString(application.allocations.reduce((sum, a) => sum.plus(a[part]), decimalOf(0)), fields.currency)
}

/**
 * Collections for accounting: one row per payment order completed in the
 * period (the money received), with how it was applied to the credit and
 * the ledger-a entry that books it. Orders approved but not yet applied
 * (application is asynchronous, a moment later) have empty application columns.
 */
export const ordersAccountingDataSet = defineDataSet({
  type: 'orders-accounting',
  description: 'payment orders completed in the period, as received money and its application',
  columns: [
    text<OrderDoc>('order_id', 'payment order id', (o) => o._id),
    timestamp<OrderDoc>('completed_at', 'when the payment was completed', (o) => o.completedAt),
    date<OrderDoc>('value_date', 'value day the payer gave', (o) => o.order?.paymentDate),
    text<OrderDoc>('credit_id', 'credit id', (o) => o.creditId),
    text<OrderDoc>('credit_line_id', 'credit line id', (o) => o.order?.creditLineId),
    integer<OrderDoc>('installment_number', 'installment the order was for (0: the whole balance; money beyond it paid the next ones)', (o) => o.order?.installmentNumber),
    text<OrderDoc>('currency', 'ISO 4217 code', (o) => o.order?.currency),
    money<OrderDoc>('amount', 'amount toward the debt', (o) => o.order?.amount),
    money<OrderDoc>('collection_costs', 'collection costs charged on top', (o) => o.order?.collectionCosts),
    money<OrderDoc>('total_received', 'amount plus collection costs (debit to the bank)', (o) =>
      (o.order === null ? null : toMoneyString(decimalOf(o.order.amount).plus(o.order.collectionCosts), o.order.currency))),
    money<OrderDoc>('applied_principal', 'principal repaid', (o) => applied(o, 'principal')),
    money<OrderDoc>('applied_interest', 'interest collected; for a payoff, net of interest paid ahead it credited to principal (negative when that is more)', (o) => applied(o, 'interest')),
    money<OrderDoc>('unapplied', 'received beyond what was owed', (o) => o.application?.unappliedAmount),
    timestamp<OrderDoc>('applied_at', 'when it was applied to the credit', (o) => o.application?.appliedAt),
    text<OrderDoc>('provider', 'payment provider', (o) => o.provider),
    text<OrderDoc>('method', 'payment method', (o) => o.order?.method),
    text<OrderDoc>('payment_reference', 'provider payment reference', (o) => o.paymentReference),
    text<OrderDoc>('transaction_reference', 'provider transaction reference', (o) => o.transactionReference),
    text<OrderDoc>('approved_by', 'who approved it, or `provider`', (o) => (o.approverId === '' ? 'provider' : o.approverId)),
    text<OrderDoc>('bank_account', 'account debited with the total received', () => ledgerAccounts.bank.code),
    text<OrderDoc>('ledger_entry_id', 'the ledger-a entry of its application', (o) => (o.application === null ? null : paymentMovementId(o.creditId, o._id))),
  ],
  rows: (body, context) => context.queries.paymentOrders.stream(context.organizationId, completedIn(periodOf(body, context.requestedAt))),
  count: (body, context) => context.queries.paymentOrders.count(context.organizationId, completedIn(periodOf(body, context.requestedAt))),
})

import type { CreditDoc } from '../../projections/credits.js'
import type { CreditMovementDoc } from '../../projections/creditMovements.js'
import { dayOf } from '../../shared/amortization.js'
import { ZERO_INSTALLMENT } from '../../shared/lending.js'
import { money as decimalOf } from '../../shared/money.js'
import { defineDataSet, type DataSetContext } from '../dataSets.js'
import { boolean, date, integer, money, text, timestamp } from '../lib/columns.js'
import { instantsIn, periodOf, type Period } from '../lib/period.js'

/** A new credit of the same debtor disbursed this close to a payoff is taken as its replacement. */
export const REFINANCE_WINDOW_DAYS = 30
const DAY = 86_400_000

interface Row {
  payoff: CreditMovementDoc
  credit: CreditDoc
  replacement: CreditDoc | null
}

/** `zero` orders applied in the period that left their credit owing nothing. */
const settlingZeroOrdersIn = (period: Period) => ({ kind: 'payment', target: ZERO_INSTALLMENT, settles: true, ...instantsIn('at', period) })

/**
 * A `zero` order applied to a credit that already owed nothing (approved after
 * the payoff, or after the last installment was paid) also leaves it settled,
 * but all of it is unapplied: it paid nothing off.
 */
const paidOff = (movement: CreditMovementDoc): boolean => !decimalOf(movement.principal).isZero() || !decimalOf(movement.interest).isZero()

/** The payoffs of the period; the read stores cannot compare decimals, so `paidOff` is checked on each movement (a period has few). */
async function* payoffsIn(body: { after?: string; before?: string }, context: DataSetContext): AsyncIterable<CreditMovementDoc> {
  const movements = context.queries.creditMovements.stream(context.organizationId, settlingZeroOrdersIn(periodOf(body, context.requestedAt)))
  for await (const movement of movements) if (paidOff(movement)) yield movement
}

/**
 * The debtor's other credit disbursed nearest the payoff within the window
 * (the earlier on a tie), or null. Only credits disbursed by the time the
 * export was requested count, so a resumed job finds the same one.
 */
const replacementOf = async (context: DataSetContext, payoff: CreditMovementDoc): Promise<CreditDoc | null> => {
  const at = Date.parse(payoff.at)
  const window = { $gte: new Date(at - REFINANCE_WINDOW_DAYS * DAY).toISOString(), $lte: new Date(at + REFINANCE_WINDOW_DAYS * DAY).toISOString() }
  let best: CreditDoc | null = null
  for await (const candidate of context.queries.credits.stream(context.organizationId, { debtorId: payoff.debtorId, disbursedAt: window })) {
    if (candidate._id === payoff.creditId || candidate.disbursedAt === null || candidate.disbursedAt > context.requestedAt) continue
    const distance = (credit: CreditDoc) => Math.abs(Date.parse(credit.disbursedAt ?? '') - at)
    if (best === null || distance(candidate) < distance(best) || (distance(candidate) === distance(best) && candidate.disbursedAt < (best.disbursedAt ?? ''))) {
      best = candidate
    }
  }
  return best
}

/**
 * Refinancing. The service has no refinance operation: a credit refinanced
 * by substitution shows as its whole balance paid at once (a `zero` order
 * that takes it from owing something to owing nothing) and a new credit
 * disbursed to the same debtor. One row per credit paid off that way in the
 * period; `refinanced` says whether a new credit of the debtor was disbursed
 * within 30 days before or after the payoff (the nearest is shown), so a
 * plain payoff is told apart.
 */
export const refinanceDataSet = defineDataSet({
  type: 'refinance',
  description: 'credits paid off by a whole-balance (`zero`) order in the period, refinanced or not, with the debtor\'s new credit disbursed within 30 days',
  columns: [
    text<Row>('credit_id', 'the credit paid off', (r) => r.credit._id),
    text<Row>('debtor_id', 'debtor (profile) id', (r) => r.credit.debtorId),
    text<Row>('debtor_type', '`natural` or `legal`', (r) => r.credit.debtor?.type),
    text<Row>('credit_line_id', 'its credit line', (r) => r.credit.creditLineId),
    text<Row>('currency', 'ISO 4217 code', (r) => r.credit.currency),
    money<Row>('principal', 'amount it lent', (r) => r.credit.principal),
    timestamp<Row>('disbursed_at', 'when it was disbursed', (r) => r.credit.disbursedAt),
    date<Row>('maturity_date', 'due date of its last installment', (r) => r.credit.maturityDate),
    timestamp<Row>('payoff_at', 'when the whole balance was applied', (r) => r.payoff.at),
    text<Row>('payoff_order_id', 'the payment order that paid it off', (r) => r.payoff.reference),
    money<Row>('payoff_principal', 'principal it paid', (r) => r.payoff.principal),
    money<Row>('payoff_interest', 'interest it paid, net of interest paid ahead it credited to principal (negative when that is more)', (r) => r.payoff.interest),
    money<Row>('payoff_amount', 'the order\'s amount', (r) => r.payoff.amount),
    integer<Row>('installments_prepaid', 'installments due after the payoff day', (r) => r.credit.installments.filter((i) => i.dueDate > dayOf(r.payoff.at)).length),
    boolean<Row>('refinanced', `a new credit of the debtor was disbursed within ${REFINANCE_WINDOW_DAYS} days of the payoff`, (r) => r.replacement !== null),
    text<Row>('new_credit_id', 'the new credit', (r) => r.replacement?._id),
    text<Row>('new_credit_line_id', 'its credit line', (r) => r.replacement?.creditLineId),
    timestamp<Row>('new_credit_disbursed_at', 'when it was disbursed', (r) => r.replacement?.disbursedAt),
    money<Row>('new_credit_principal', 'amount it lent', (r) => r.replacement?.principal),
    integer<Row>('new_credit_term_months', 'its installments', (r) => r.replacement?.term),
    money<Row>('new_credit_annual_rate', 'its annual rate, percent', (r) => r.replacement?.rate),
    integer<Row>('days_between', 'days from the payoff to the new disbursement (negative: disbursed before)',
      (r) => {
        const disbursedAt = r.replacement?.disbursedAt ?? null
        return disbursedAt === null ? null : Math.trunc((Date.parse(disbursedAt) - Date.parse(r.payoff.at)) / DAY)
      }),
  ],
  async *rows(body, context) {
    const { queries, organizationId } = context
    for await (const payoff of payoffsIn(body, context)) {
      const credit = await queries.credits.get(organizationId, payoff.creditId)
      if (credit !== null) yield { payoff, credit, replacement: await replacementOf(context, payoff) }
    }
  },
  async count(body, context) {
    let n = 0
    for await (const _payoff of payoffsIn(body, context)) n += 1
    return n
  },
})

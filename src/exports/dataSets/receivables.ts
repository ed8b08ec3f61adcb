import type { CreditDoc } from '../../projections/credits.js'
import { dayOf } from '../../shared/amortization.js'
import { rejectionReasonWithoutScore } from '../../shared/lending.js'
import { defineDataSet } from '../dataSets.js'
import { creditColumn as c, through } from '../lib/creditColumns.js'
import { atMinorUnit, date, integer, money, text, timestamp } from '../lib/columns.js'
import { instantsIn, periodOf } from '../lib/period.js'
import { creditArrears, portfolioOf, riskCategory } from '../lib/positions.js'

/** A credit with its arrears counted to the day the export was requested. */
interface Receivable {
  credit: CreditDoc
  daysPastDue: number
}

/**
 * The loan book: one row per credit requested in the period, in any state,
 * with its balances as the read model holds them when the export is
 * requested. For the book as it stood at a past moment, see
 * receivables-cutoff.
 */
export const receivablesDataSet = defineDataSet({
  type: 'receivables',
  description: 'credits requested in the period, any state, balances as of the request of the export',
  columns: [
    ...through([c.id, c.lineId, c.lineName, c.debtorId, c.debtorType, c.portfolio, c.state, c.currency, c.principal, c.term, c.rate, c.rateType,
      c.monthlyRate, c.installmentAmount, c.totalInterest, c.totalAmount, c.requestedAt, c.approvedAt], (r: Receivable) => r.credit),
    timestamp<Receivable>('rejected_at', 'when it was rejected', (r) => r.credit.rejectedAt),
    text<Receivable>('rejection_reason', 'why it was rejected (an automatic rejection names the model\'s version, not the score)',
      (r) => rejectionReasonWithoutScore(r.credit.rejectionReason)),
    timestamp<Receivable>('cancelled_at', 'when it was cancelled', (r) => r.credit.cancelledAt),
    ...through([c.disbursedAt, c.paidAt, c.firstDueDate, c.maturityDate, c.installmentsCount], (r: Receivable) => r.credit),
    integer<Receivable>('installments_paid', 'installments paid in full', (r) => r.credit.installmentsPaid),
    date<Receivable>('next_due_date', 'due date of the oldest installment with anything owed', (r) => r.credit.nextDueDate),
    integer<Receivable>('days_past_due', 'days the oldest unpaid installment is overdue (Desembolsado credits), to the export day', (r) => r.daysPastDue),
    text<Receivable>('risk_category', 'A–E by days past due and portfolio (Desembolsado credits)',
      (r) => (r.credit.status === 'Desembolsado' ? riskCategory(portfolioOf(r.credit), r.daysPastDue) : null)),
    money<Receivable>('outstanding_principal', 'principal still owed', (r) => r.credit.outstandingPrincipal),
    money<Receivable>('outstanding_interest', 'scheduled interest still owed (including installments not yet due)', (r) => r.credit.outstandingInterest),
    money<Receivable>('outstanding_total', 'principal plus interest still owed', (r) => r.credit.outstandingTotal),
    money<Receivable>('paid_total', 'principal plus interest paid', (r) => r.credit.paidTotal),
    money<Receivable>('unapplied', 'money received beyond what was owed (owed back to the debtor)', (r) => atMinorUnit(r.credit.unapplied, r.credit.currency)),
  ],
  async *rows(body, context) {
    const day = dayOf(context.requestedAt)
    for await (const credit of context.queries.credits.stream(context.organizationId, instantsIn('requestedAt', periodOf(body, context.requestedAt)))) {
      yield { credit, daysPastDue: creditArrears(credit, day) }
    }
  },
  count: (body, context) => context.queries.credits.count(context.organizationId, instantsIn('requestedAt', periodOf(body, context.requestedAt))),
})

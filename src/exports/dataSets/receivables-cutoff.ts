import type { Queries } from '../../projections/queries.js'
import type { Column } from '../csv.js'
import { defineDataSet } from '../dataSets.js'
import { creditColumn as c, through } from '../lib/creditColumns.js'
import { date, integer, money, text, timestamp } from '../lib/columns.js'
import { closingDay, outstandingAt, periodOf } from '../lib/period.js'
import { portfolioOf, positionedCredits, riskCategory, type PositionedCredit } from '../lib/positions.js'

export interface CutoffRow extends PositionedCredit {
  cutoffDay: string
}

/** A credit as it stood at a cut-off: shared with the daily portfolio snapshot. */
export const cutoffColumns: ReadonlyArray<Column<CutoffRow>> = [
  date<CutoffRow>('cutoff_date', 'the last day the cut-off covers', (r) => r.cutoffDay),
  ...through([c.id, c.lineId, c.debtorId, c.debtorType, c.portfolio, c.currency, c.principal, c.disbursedAt, c.firstDueDate, c.maturityDate,
    c.installmentsCount], (r: CutoffRow) => r.credit),
  integer<CutoffRow>('installments_paid', 'installments paid in full at the cut-off', (r) => r.position.installmentsPaid),
  integer<CutoffRow>('installments_overdue', 'installments overdue at the cut-off', (r) => r.position.installmentsOverdue),
  money<CutoffRow>('outstanding_principal', 'principal owed', (r) => r.position.outstanding.principal),
  money<CutoffRow>('outstanding_interest', 'scheduled interest not yet paid (including installments not yet due)', (r) => r.position.outstanding.interest),
  money<CutoffRow>('overdue_principal', 'principal of overdue installments', (r) => r.position.overdue.principal),
  money<CutoffRow>('overdue_interest', 'interest of overdue installments', (r) => r.position.overdue.interest),
  money<CutoffRow>('overdue_total', 'overdue principal plus interest', (r) => r.position.overdue.total),
  money<CutoffRow>('balance', 'what was owed at the cut-off: all the principal plus overdue interest', (r) => r.position.balance),
  date<CutoffRow>('next_due_date', 'due date of the oldest unpaid installment', (r) => r.position.nextDueDate),
  integer<CutoffRow>('days_past_due', 'days the oldest unpaid installment was overdue', (r) => r.position.daysPastDue),
  text<CutoffRow>('risk_category', 'A–E by days past due and portfolio', (r) => riskCategory(portfolioOf(r.credit), r.position.daysPastDue)),
  timestamp<CutoffRow>('last_payment_at', 'the last payment applied before the cut-off', (r) => r.position.lastPaymentAt),
  money<CutoffRow>('principal_collected', 'principal repaid before the cut-off', (r) => r.position.principalCollected),
  money<CutoffRow>('interest_collected', 'interest collected before the cut-off', (r) => r.position.interestCollected),
  money<CutoffRow>('unapplied', 'received beyond what was owed, before the cut-off', (r) => r.position.unapplied),
]

/** Credits outstanding at the instant (disbursed before it, not paid off before it), each as it stood then. */
export async function* cutoffRows(queries: Queries, organizationId: string, instant: string): AsyncIterable<CutoffRow> {
  const cutoffDay = closingDay(instant)
  for await (const row of positionedCredits(queries, organizationId, outstandingAt(instant), instant)) yield { ...row, cutoffDay }
}

/**
 * The portfolio at a cut-off (`before`, default the moment of the request):
 * every credit owed at that instant, with its balances, arrears and
 * category as they stood then (payments applied later are left out).
 */
export const receivablesCutoffDataSet = defineDataSet({
  type: 'receivables-cutoff',
  description: 'the portfolio as it stood at the cut-off: credits owed at that instant',
  columns: cutoffColumns,
  rows: (body, context) => cutoffRows(context.queries, context.organizationId, periodOf(body, context.requestedAt).before),
  count: (body, context) => context.queries.credits.count(context.organizationId, outstandingAt(periodOf(body, context.requestedAt).before)),
})

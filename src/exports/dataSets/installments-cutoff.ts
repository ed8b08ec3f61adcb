import { installmentStatus } from '../../projections/credits.js'
import { daysPastDue } from '../../shared/amortization.js'
import { isPaid, type InstallmentPosition } from '../../shared/installments.js'
import { toMoneyString } from '../../shared/money.js'
import { defineDataSet } from '../dataSets.js'
import { date, integer, money, text, timestamp } from '../lib/columns.js'
import { installmentOutstanding } from '../lib/positions.js'
import { periodOf } from '../lib/period.js'
import { cutoffRows, type CutoffRow } from './receivables-cutoff.js'

interface Row {
  credit: CutoffRow
  installment: InstallmentPosition
}

/**
 * The schedules of the portfolio at a cut-off: every installment of every
 * credit owed at that instant, with what had been paid on it by then.
 */
export const installmentsCutoffDataSet = defineDataSet({
  type: 'installments-cutoff',
  description: 'installments of the credits owed at the cut-off, as they stood then',
  columns: [
    date<Row>('cutoff_date', 'the last day the cut-off covers', (r) => r.credit.cutoffDay),
    text<Row>('installment_id', 'installment id', (r) => r.installment.installmentId),
    text<Row>('credit_id', 'credit id', (r) => r.credit.credit._id),
    text<Row>('debtor_id', 'debtor (profile) id', (r) => r.credit.credit.debtorId),
    integer<Row>('number', 'installment number', (r) => r.installment.number),
    date<Row>('due_date', 'due date', (r) => r.installment.dueDate),
    text<Row>('currency', 'ISO 4217 code', (r) => r.credit.credit.currency),
    money<Row>('principal', 'principal part', (r) => r.installment.principal),
    money<Row>('interest', 'interest part', (r) => r.installment.interest),
    money<Row>('amount', 'principal plus interest', (r) => r.installment.amount),
    money<Row>('paid_principal', 'principal paid by the cut-off', (r) => toMoneyString(r.installment.paidPrincipal, r.credit.credit.currency)),
    money<Row>('paid_interest', 'interest paid by the cut-off', (r) => toMoneyString(r.installment.paidInterest, r.credit.credit.currency)),
    money<Row>('outstanding_principal', 'principal owed on it', (r) => installmentOutstanding(r.installment, r.credit.credit.currency).principal),
    money<Row>('outstanding_interest', 'interest owed on it', (r) => installmentOutstanding(r.installment, r.credit.credit.currency).interest),
    money<Row>('outstanding', 'owed on it', (r) => installmentOutstanding(r.installment, r.credit.credit.currency).total),
    text<Row>('status', '`pending`, `partial` or `paid` at the cut-off', (r) => installmentStatus(r.installment)),
    timestamp<Row>('paid_at', 'when the last of it was paid, if before the cut-off', (r) => r.installment.paidAt),
    integer<Row>('days_past_due', 'days overdue at the cut-off while anything was owed on it', (r) =>
      (!isPaid(r.installment) && r.installment.dueDate < r.credit.position.day ? daysPastDue(r.installment.dueDate, r.credit.position.day) : 0)),
    money<Row>('waived_interest', 'interest a payoff before the cut-off forgave (0 otherwise)',
      (r) => toMoneyString(r.installment.waivedInterest ?? '0', r.credit.credit.currency)),
  ],
  async *rows(body, context) {
    for await (const credit of cutoffRows(context.queries, context.organizationId, periodOf(body, context.requestedAt).before)) {
      for (const installment of credit.position.installments) yield { credit, installment }
    }
  },
})

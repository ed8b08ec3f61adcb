import type { InstallmentDoc } from '../../projections/credits.js'
import { dayOf } from '../../shared/amortization.js'
import { defineDataSet } from '../dataSets.js'
import { atMinorUnit, date, integer, money, text, timestamp } from '../lib/columns.js'
import { collectibleDueIn, periodOf } from '../lib/period.js'
import { installmentArrears } from '../lib/positions.js'

interface Row {
  installment: InstallmentDoc
  daysPastDue: number
}

/**
 * The collection schedule: one row per installment of a disbursed credit due
 * in the period (a due day belongs to the period when its midnight does),
 * with what has been paid on it when the export is requested.
 */
export const installmentsDataSet = defineDataSet({
  type: 'installments',
  description: 'installments of disbursed credits due in the period, with payments as of the request of the export',
  columns: [
    text<Row>('installment_id', 'installment id', (r) => r.installment._id),
    text<Row>('credit_id', 'credit id', (r) => r.installment.creditId),
    text<Row>('credit_line_id', 'credit line id', (r) => r.installment.creditLineId),
    text<Row>('debtor_id', 'debtor (profile) id', (r) => r.installment.debtorId),
    text<Row>('credit_state', 'Desembolsado or Pagado', (r) => r.installment.creditState),
    integer<Row>('number', 'installment number, from 1', (r) => r.installment.number),
    date<Row>('due_date', 'due date', (r) => r.installment.dueDate),
    text<Row>('currency', 'ISO 4217 code', (r) => r.installment.currency),
    money<Row>('principal', 'principal part', (r) => r.installment.principal),
    money<Row>('interest', 'interest part', (r) => r.installment.interest),
    money<Row>('amount', 'principal plus interest', (r) => r.installment.amount),
    money<Row>('paid_principal', 'principal paid', (r) => atMinorUnit(r.installment.paidPrincipal, r.installment.currency)),
    money<Row>('paid_interest', 'interest paid', (r) => atMinorUnit(r.installment.paidInterest, r.installment.currency)),
    money<Row>('paid_amount', 'principal plus interest paid', (r) => r.installment.paidAmount),
    money<Row>('outstanding', 'still owed on it', (r) => r.installment.outstanding),
    text<Row>('status', '`pending` (nothing paid), `partial` or `paid`', (r) => r.installment.status),
    timestamp<Row>('paid_at', 'when the last of it was paid', (r) => r.installment.paidAt),
    integer<Row>('days_past_due', 'days overdue to the export day, while anything is owed on a Desembolsado credit', (r) => r.daysPastDue),
    money<Row>('waived_interest', 'interest a payoff forgave, not accrued when the credit was paid off (0 otherwise)',
      (r) => atMinorUnit(r.installment.waivedInterest ?? '0', r.installment.currency)),
  ],
  async *rows(body, context) {
    const day = dayOf(context.requestedAt)
    for await (const installment of context.queries.credits.streamInstallments(context.organizationId, collectibleDueIn(periodOf(body, context.requestedAt)))) {
      yield { installment, daysPastDue: installmentArrears(installment, day) }
    }
  },
  count: (body, context) => context.queries.credits.countInstallments(context.organizationId, collectibleDueIn(periodOf(body, context.requestedAt))),
})

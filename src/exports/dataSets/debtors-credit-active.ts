import { defineDataSet } from '../dataSets.js'
import { bookFigures, type BookFigures } from '../lib/bookFigures.js'
import { date, integer, money, text, timestamp } from '../lib/columns.js'
import { through } from '../lib/creditColumns.js'
import { debtorBooks, type DebtorBook } from '../lib/debtorBooks.js'
import { debtorColumn as d } from '../lib/debtorColumns.js'
import { periodOf } from '../lib/period.js'

interface Row {
  book: DebtorBook
  figures: BookFigures
}

/**
 * Debtors with an active credit: one row per debtor and currency with a
 * credit disbursed before the period ends and not paid off before it
 * starts, with how to reach them and what they owed at the period's end
 * (collections, portfolio follow-up).
 */
export const debtorsCreditActiveDataSet = defineDataSet({
  type: 'debtors-credit-active',
  description: 'debtors with a credit active in the period, per currency, with what they owed at its end',
  columns: [
    ...through([d.id, d.type, d.documentType, d.documentNumber, d.verificationDigit, d.name, d.email, d.phone, d.address, d.cityDaneCode, d.cityName],
      (r: Row) => r.book),
    text<Row>('currency', 'ISO 4217 code', (r) => r.book.currency),
    integer<Row>('active_credits', 'their credits in this currency active in the period', (r) => r.book.credits.length),
    money<Row>('principal_disbursed', 'principal those credits lent', (r) => r.figures.principalDisbursed),
    money<Row>('outstanding_principal', 'principal owed at the period\'s end', (r) => r.figures.outstandingPrincipal),
    money<Row>('balance', 'principal plus interest due, owed at the period\'s end', (r) => r.figures.balance),
    money<Row>('overdue_total', 'overdue principal plus interest at the period\'s end', (r) => r.figures.overdueTotal),
    integer<Row>('max_days_past_due', 'the worst arrears among those credits', (r) => r.figures.maxDaysPastDue),
    text<Row>('risk_category', 'the worst category (A–E) among those credits', (r) => r.figures.worstRiskCategory),
    date<Row>('next_due_date', 'the earliest unpaid due date', (r) => r.figures.nextDueDate),
    timestamp<Row>('last_payment_at', 'their latest payment before the period\'s end', (r) => r.figures.lastPaymentAt),
  ],
  async *rows(body, context) {
    const period = periodOf(body, context.requestedAt)
    for await (const book of debtorBooks(context, period)) yield { book, figures: bookFigures(book, period.after) }
  },
})

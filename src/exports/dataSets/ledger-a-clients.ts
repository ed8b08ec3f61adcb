import { defineDataSet } from '../dataSets.js'
import { integer, text } from '../lib/columns.js'
import { through } from '../lib/creditColumns.js'
import { debtorBooks, type DebtorBook } from '../lib/debtorBooks.js'
import { ledgerTotals, ledgerTotalsColumns, type LedgerTotals } from '../lib/ledger.js'
import { periodOf } from '../lib/period.js'

interface Row {
  book: DebtorBook
  totals: LedgerTotals
}

/**
 * Ledger A by debtor (the third-party subledger): one line per debtor and
 * currency with credits active in the period, adding up that debtor's
 * credits as ledger-a-individual shows them.
 */
export const ledgerAClientsDataSet = defineDataSet({
  type: 'ledger-a-clients',
  description: 'third-party subledger: one line per debtor and currency with credits active in the period',
  columns: [
    text<Row>('debtor_id', 'debtor (profile) id', (r) => r.book.profile._id),
    text<Row>('debtor_type', '`natural` or `legal`', (r) => r.book.profile.type),
    integer<Row>('credits', 'credits of the debtor in this currency active in the period', (r) => r.book.credits.length),
    ...through(ledgerTotalsColumns, (r: Row) => r.totals),
  ],
  async *rows(body, context) {
    const period = periodOf(body, context.requestedAt)
    for await (const book of debtorBooks(context, period)) {
      yield { book, totals: ledgerTotals(book.credits.flatMap((c) => c.movements), book.currency, period.after, period.before) }
    }
  },
})

import { defineDataSet } from '../dataSets.js'
import { integer, text } from '../lib/columns.js'
import { through } from '../lib/creditColumns.js'
import { subledgerCredits } from '../lib/creditScopes.js'
import { debtorBooks, type DebtorBook } from '../lib/debtorBooks.js'
import { ledgerTotals, ledgerTotalsColumns, type LedgerTotals } from '../lib/ledger.js'
import { periodOf } from '../lib/period.js'

interface Row {
  book: DebtorBook
  totals: LedgerTotals
}

/**
 * Ledger A by debtor (the third-party subledger): one line per debtor and
 * currency with credits in ledger-a-individual (active in the period, or with
 * a movement in it), adding up those lines.
 */
export const ledgerAClientsDataSet = defineDataSet({
  type: 'ledger-a-clients',
  description: 'third-party subledger: one line per debtor and currency with credits in ledger-a-individual',
  columns: [
    text<Row>('debtor_id', 'debtor (profile) id', (r) => r.book.profile._id),
    text<Row>('debtor_type', '`natural` or `legal`', (r) => r.book.profile.type),
    integer<Row>('credits', 'credits of the debtor in this currency in ledger-a-individual', (r) => r.book.credits.length),
    ...through(ledgerTotalsColumns, (r: Row) => r.totals),
  ],
  async *rows(body, context) {
    const period = periodOf(body, context.requestedAt)
    for await (const book of debtorBooks(context, period, subledgerCredits)) {
      yield { book, totals: ledgerTotals(book.credits.flatMap((c) => c.movements), book.currency, period.after, period.before) }
    }
  },
})

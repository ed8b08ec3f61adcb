import type { CreditDoc } from '../../projections/credits.js'
import { defineDataSet } from '../dataSets.js'
import { creditColumn as c, through } from '../lib/creditColumns.js'
import { countSubledgerCredits, scopedCredits, subledgerCredits } from '../lib/creditScopes.js'
import { ledgerTotals, ledgerTotalsColumns, type LedgerTotals } from '../lib/ledger.js'
import { periodOf } from '../lib/period.js'

interface Row {
  credit: CreditDoc
  totals: LedgerTotals
}

/**
 * Ledger A by credit (the portfolio subledger): one line per credit owed
 * something at some moment of the period or with a movement in it, with its
 * principal at both ends of the period and what moved in between, so the
 * closing balances add up to account 1405 of ledger-a and the period's
 * columns to its entries.
 */
export const ledgerAIndividualDataSet = defineDataSet({
  type: 'ledger-a-individual',
  description: 'portfolio subledger: one line per credit active in the period or with a movement in it',
  columns: [
    ...through([c.id, c.lineId, c.debtorId, c.debtorType, c.portfolio], (r: Row) => r.credit),
    ...through(ledgerTotalsColumns, (r: Row) => r.totals),
  ],
  async *rows(body, context) {
    const period = periodOf(body, context.requestedAt)
    for await (const { credit, movements } of scopedCredits(context.queries, context.organizationId, subledgerCredits, period)) {
      yield { credit, totals: ledgerTotals(movements, credit.currency, period.after, period.before) }
    }
  },
  count: (body, context) => countSubledgerCredits(context.queries, context.organizationId, periodOf(body, context.requestedAt)),
})

import type { CreditDoc } from '../../projections/credits.js'
import { defineDataSet } from '../dataSets.js'
import { creditColumn as c, through } from '../lib/creditColumns.js'
import { ledgerTotals, ledgerTotalsColumns, type LedgerTotals } from '../lib/ledger.js'
import { activeIn, periodOf } from '../lib/period.js'

interface Row {
  credit: CreditDoc
  totals: LedgerTotals
}

/**
 * Ledger A by credit (the portfolio subledger): one line per credit owed
 * something at some moment of the period, with its principal at both ends
 * of the period and what moved in between, so the closing balances add up
 * to account 1405 of ledger-a.
 */
export const ledgerAIndividualDataSet = defineDataSet({
  type: 'ledger-a-individual',
  description: 'portfolio subledger: one line per credit active in the period',
  columns: [
    ...through([c.id, c.lineId, c.debtorId, c.debtorType, c.portfolio], (r: Row) => r.credit),
    ...through(ledgerTotalsColumns, (r: Row) => r.totals),
  ],
  async *rows(body, context) {
    const { after, before } = periodOf(body, context.requestedAt)
    for await (const credit of context.queries.credits.stream(context.organizationId, activeIn({ after, before }))) {
      const movements = await context.queries.creditMovements.ofCredit(credit._id, before)
      yield { credit, totals: ledgerTotals(movements, credit.currency, after, before) }
    }
  },
  count: (body, context) => context.queries.credits.count(context.organizationId, activeIn(periodOf(body, context.requestedAt))),
})

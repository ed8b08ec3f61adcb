import { defineBlobProducer } from '../blobs.js'
import { creditColumn as c, through } from '../lib/creditColumns.js'
import { integer, money, text } from '../lib/columns.js'
import { scopedCredits, subledgerCredits } from '../lib/creditScopes.js'
import { ledgerTotals, ledgerTotalsColumns, type LedgerTotals } from '../lib/ledger.js'
import { portfolioOf, positionAt, riskCategory, type PositionedCredit } from '../lib/positions.js'

interface Row extends PositionedCredit {
  month: string
  totals: LedgerTotals
}

/**
 * `monthly`: the month-end close of the portfolio (cierre de cartera), one
 * row per credit of ledger-a-individual for the previous UTC month (owed
 * something at some moment of it, or with a movement in it): its principal
 * at both ends of the month and what moved in between, and its state,
 * balance, arrears and category at month end. Made at 00:25 server time on
 * the 1st.
 */
export const monthlyBlobProducer = defineBlobProducer<Row>({
  kind: 'monthly',
  description: 'month-end portfolio close: per credit, the month\'s movements and its position at month end',
  columns: [
    text<Row>('month', 'the month closed (YYYY-MM)', (r) => r.month),
    ...through([c.id, c.lineId, c.debtorId, c.debtorType, c.portfolio], (r: Row) => r.credit),
    ...through(ledgerTotalsColumns, (r: Row) => r.totals),
    text<Row>('state_at_close', 'the credit\'s state at month end', (r) => r.position.state),
    money<Row>('balance', 'owed at month end: all the principal plus overdue interest', (r) => r.position.balance),
    money<Row>('overdue_total', 'overdue principal plus interest at month end', (r) => r.position.overdue.total),
    integer<Row>('days_past_due', 'arrears at month end', (r) => r.position.daysPastDue),
    text<Row>('risk_category', 'A–E at month end', (r) => riskCategory(portfolioOf(r.credit), r.position.daysPastDue)),
  ],
  async *rows(context) {
    const { start, end, label } = context.period
    for await (const { credit, movements } of scopedCredits(context.queries, context.organizationId, subledgerCredits, { after: start, before: end })) {
      yield { credit, month: label, totals: ledgerTotals(movements, credit.currency, start, end), position: positionAt(credit, movements, end) }
    }
  },
})

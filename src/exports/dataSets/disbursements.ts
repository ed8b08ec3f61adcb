import type { CreditDoc } from '../../projections/credits.js'
import { defineDataSet } from '../dataSets.js'
import { creditColumn as c } from '../lib/creditColumns.js'
import { integer, text } from '../lib/columns.js'
import { instantsIn, periodOf } from '../lib/period.js'
import { taxColumns } from '../lib/taxColumns.js'

const DAY = 86_400_000

/** Credits disbursed in the period: what went out, how, and on what terms. */
export const disbursementsDataSet = defineDataSet({
  type: 'disbursements',
  description: 'credits disbursed in the period',
  columns: [
    c.id, c.lineId, c.lineName, c.debtorId, c.debtorType, c.portfolio, c.disbursedAt,
    text<CreditDoc>('method', 'disbursement method (bank_transfer, nequi…)', (d) => d.disbursementMethod),
    text<CreditDoc>('reference', 'transfer reference', (d) => d.disbursementReference),
    c.currency, c.principal, c.term, c.rate, c.rateType, c.monthlyRate, c.installmentAmount, c.totalInterest, c.totalAmount,
    c.firstDueDate, c.maturityDate, c.requestedAt, c.approvedAt,
    text<CreditDoc>('approved_by', 'who approved it', (d) => d.approvedBy),
    integer<CreditDoc>('days_to_disburse', 'whole days from the request to the disbursement',
      (d) => (d.disbursedAt === null ? null : Math.floor((Date.parse(d.disbursedAt) - Date.parse(d.requestedAt)) / DAY))),
    c.state,
    ...taxColumns<CreditDoc>('the principal at disbursement', (d) => d.taxes, (d) => d.currency),
  ],
  rows: (body, context) => context.queries.credits.stream(context.organizationId, instantsIn('disbursedAt', periodOf(body, context.requestedAt))),
  count: (body, context) => context.queries.credits.count(context.organizationId, instantsIn('disbursedAt', periodOf(body, context.requestedAt))),
})

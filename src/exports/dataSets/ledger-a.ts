import type { CreditMovementDoc } from '../../projections/creditMovements.js'
import { defineDataSet } from '../dataSets.js'
import { date, integer, money, text, timestamp } from '../lib/columns.js'
import { journalLines, type JournalLine } from '../lib/ledger.js'
import { instantsIn, periodOf } from '../lib/period.js'

interface Row {
  movement: CreditMovementDoc
  line: JournalLine
  number: number
}

const description = (movement: CreditMovementDoc): string => {
  if (movement.kind === 'disbursement') return `Desembolso del crédito ${movement.creditId}`
  return movement.target === 'zero' ? `Recaudo del saldo total del crédito ${movement.creditId}` : `Recaudo de cuota del crédito ${movement.creditId}`
}

/**
 * Accounting ledger, format A: the journal of the period. Each disbursement
 * and each payment applied to a credit is an entry of balanced lines (debit
 * equals credit), ready for an accounting system's import; the accounts are
 * documented in docs/exports.md.
 */
export const ledgerADataSet = defineDataSet({
  type: 'ledger-a',
  description: 'journal entries (double entry) of disbursements and payments in the period',
  columns: [
    text<Row>('entry_id', 'the entry: one per disbursement or payment', (r) => r.movement._id),
    date<Row>('entry_date', 'accounting day (UTC)', (r) => r.movement.at),
    text<Row>('entry_type', '`disbursement` or `collection`', (r) => (r.movement.kind === 'disbursement' ? 'disbursement' : 'collection')),
    integer<Row>('line', 'line within the entry, from 1', (r) => r.number),
    text<Row>('account_code', 'account (PUC structure)', (r) => r.line.account.code),
    text<Row>('account_name', 'account name', (r) => r.line.account.name),
    money<Row>('debit', 'debit amount', (r) => r.line.debit),
    money<Row>('credit', 'credit amount', (r) => r.line.credit),
    text<Row>('currency', 'ISO 4217 code', (r) => r.movement.currency),
    text<Row>('credit_id', 'credit id', (r) => r.movement.creditId),
    text<Row>('debtor_id', 'the third party (debtor profile id)', (r) => r.movement.debtorId),
    text<Row>('credit_line_id', 'credit line id (cost centre)', (r) => r.movement.creditLineId),
    text<Row>('reference', 'transfer reference (disbursement) or payment order id (collection)', (r) => r.movement.reference),
    text<Row>('description', 'entry description', (r) => description(r.movement)),
    timestamp<Row>('recorded_at', 'when the movement happened', (r) => r.movement.at),
  ],
  async *rows(body, context) {
    for await (const movement of context.queries.creditMovements.stream(context.organizationId, instantsIn('at', periodOf(body, context.requestedAt)))) {
      let number = 0
      for (const line of journalLines(movement)) {
        number += 1
        yield { movement, line, number }
      }
    }
  },
})

import type { TaxApplied } from '../../events/tax.js'
import { money as decimalOf, toMoneyString } from '../../shared/money.js'
import type { Column } from '../csv.js'
import { money, text } from './columns.js'

type Applied = TaxApplied['data']

const sumOf = (taxes: readonly Applied[], currency: string | undefined): string | null =>
  currency === undefined ? null : toMoneyString(taxes.reduce((sum, tax) => sum.plus(tax.amount), decimalOf(0)), currency)

/**
 * The taxes recorded on a row's subject (an order's collection costs, a
 * credit's principal), last in the file so the columns before them keep
 * their places. A retention is withheld, not charged, so it is summed apart;
 * each tax is also given as JSON, since an organization names its taxes
 * freely and a file cannot give each its own column.
 */
export const taxColumns = <Row>(subject: string, taxesOf: (row: Row) => readonly Applied[], currencyOf: (row: Row) => string | undefined): Array<Column<Row>> => [
  money<Row>('taxes', `taxes other than retentions applied to ${subject}, summed`,
    (row) => sumOf(taxesOf(row).filter((tax) => tax.type !== 'RETENTION'), currencyOf(row))),
  money<Row>('withholdings', `retentions (type RETENTION) applied to ${subject}, summed`,
    (row) => sumOf(taxesOf(row).filter((tax) => tax.type === 'RETENTION'), currencyOf(row))),
  text<Row>('tax_detail', `each tax applied to ${subject}: JSON [{name, type, percentage, base, amount}]`, (row) =>
    JSON.stringify(taxesOf(row).map(({ name, type, percentage, base, amount }) => ({ name, type, percentage, base, amount })))),
]

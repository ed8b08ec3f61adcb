import type { TaxApplied } from '../../events/tax.js'
import { money as decimalOf, toMoneyString } from '../../shared/money.js'
import type { Column } from '../csv.js'
import { money, text } from './columns.js'

type Applied = TaxApplied['data']

/**
 * The taxes recorded on a row's subject (an order's collection costs, a
 * credit's principal) as two columns: their sum, and each one as JSON
 * (`[{"name":"IVA","type":"VAT","percentage":"19","base":"12345.67","amount":"2345.68"}]`),
 * since an organization names its taxes freely and a file cannot give each its own column.
 */
export const taxColumns = <Row>(subject: string, taxesOf: (row: Row) => readonly Applied[], currencyOf: (row: Row) => string | undefined): Array<Column<Row>> => [
  money<Row>('taxes', `taxes applied to ${subject}, summed`, (row) => {
    const currency = currencyOf(row)
    return currency === undefined ? null : toMoneyString(taxesOf(row).reduce((sum, tax) => sum.plus(tax.amount), decimalOf(0)), currency)
  }),
  text<Row>('tax_detail', `each tax applied to ${subject}: JSON [{name, type, percentage, base, amount}]`, (row) =>
    JSON.stringify(taxesOf(row).map(({ name, type, percentage, base, amount }) => ({ name, type, percentage, base, amount })))),
]

import { minorUnitDigits, toMoneyString } from '../../shared/money.js'
import type { CellFormat, Column } from '../csv.js'

/**
 * Column builders, so a data set reads as its file does: header, meaning,
 * value. `money` columns are decimal strings as the read models keep them (the
 * currency's minor unit); `decimal(scale)` fixes the digits.
 */
const of = (format: CellFormat) => <Row>(name: string, description: string, value: (row: Row) => unknown): Column<Row> =>
  ({ name, format, description, value })

export const text = of('text')
export const integer = of('integer')
export const money = of('decimal')
export const date = of('date')
export const timestamp = of('timestamp')
export const boolean = of('boolean')

export const decimal = (scale: number) => <Row>(name: string, description: string, value: (row: Row) => unknown): Column<Row> =>
  ({ name, format: 'decimal', scale, description, value })

const minorUnits = new Map<string, { pattern: RegExp; zero: string; digits: number }>()

/** A money string at its currency's minor unit (`0` → `0.00` in COP); strings already there are returned as they are, cheaply. */
export const atMinorUnit = (value: string, currency: string): string => {
  let unit = minorUnits.get(currency)
  if (unit === undefined) {
    const digits = minorUnitDigits(currency)
    unit = { digits, zero: toMoneyString(0, currency), pattern: new RegExp(digits === 0 ? '^-?\\d+$' : `^-?\\d+\\.\\d{${digits}}$`) }
    minorUnits.set(currency, unit)
  }
  if (value === '0') return unit.zero
  return unit.pattern.test(value) ? value : toMoneyString(value, currency)
}

/** A row reduced to its column values, so files of different row types can share one data set (csv-a's typeFile). */
export interface Cells {
  values: readonly unknown[]
}

export const asCells = <Row>(columns: ReadonlyArray<Column<Row>>): { columns: Column<Cells>[]; cells: (row: Row) => Cells } => ({
  columns: columns.map((column, i) => ({ ...column, value: (row: Cells) => row.values[i] })),
  cells: (row) => ({ values: columns.map((column) => column.value(row)) }),
})

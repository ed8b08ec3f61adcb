import { Readable } from 'node:stream'
import { stringify as stringifyRecords } from 'csv-stringify/sync'
import { Decimal } from 'decimal.js'

/**
 * How a column writes its values:
 * - `text`: as is; a value starting with `=`, `+`, `-`, `@`, tab or CR gets a leading `'` so spreadsheets never run it as a formula
 * - `integer`: digits
 * - `decimal`: a plain decimal string (never exponent notation), with `scale` fixed digits when the column names one; without a
 *   scale a plain decimal string is written as given (money keeps its currency's minor unit)
 * - `date`: `YYYY-MM-DD` (UTC)
 * - `timestamp`: ISO 8601 UTC with milliseconds
 * - `boolean`: `true` / `false`
 * Absent values (null, undefined) are empty fields.
 */
export type CellFormat = 'text' | 'integer' | 'decimal' | 'date' | 'timestamp' | 'boolean'

export interface Column<Row> {
  /** Header of the column. */
  name: string
  format: CellFormat
  /** `decimal` only: digits after the point. */
  scale?: number
  description: string
  value(row: Row): unknown
}

/** A value a data set produced that its column cannot write: the export fails with this message. */
export class CellError extends Error {
  constructor(column: string, message: string) {
    super(`column ${column}: ${message}`)
    this.name = 'CellError'
  }
}

/** First characters a spreadsheet would read as a formula: = + - @ tab CR. */
const FORMULA_CHARS = new Set([61, 43, 45, 64, 9, 13])

const PLAIN_DECIMAL = /^-?(0|[1-9]\d*)(\.\d+)?$/
const plainWithScale = new Map<number, RegExp>()

/**
 * A decimal string already written as the column writes it: plain notation,
 * and exactly the column's scale when it has one. Without a scale the string is
 * kept as the read model holds it, so money keeps its currency's minor unit
 * (`3000000.00`, not `3000000`).
 */
const alreadyPlain = (value: string, scale: number | undefined): boolean => {
  if (scale === undefined) return PLAIN_DECIMAL.test(value) && !/^-0(\.0+)?$/.test(value)
  let pattern = plainWithScale.get(scale)
  if (pattern === undefined) {
    pattern = new RegExp(scale === 0 ? '^(0|[1-9]\\d*)$' : `^(0|[1-9]\\d*)\\.\\d{${scale}}$`)
    plainWithScale.set(scale, pattern)
  }
  return pattern.test(value)
}

const isoOf = (column: string, value: unknown): string => {
  const date = value instanceof Date ? value : typeof value === 'string' || typeof value === 'number' ? new Date(value) : null
  if (date === null || Number.isNaN(date.getTime())) throw new CellError(column, `${String(value)} is not a date`)
  return date.toISOString()
}

export const formatCell = <Row>(column: Column<Row>, value: unknown): string => {
  if (value === null || value === undefined) return ''
  switch (column.format) {
    case 'text': {
      const text = String(value)
      return FORMULA_CHARS.has(text.charCodeAt(0)) ? `'${text}` : text
    }
    case 'integer':
      if ((typeof value === 'number' && Number.isSafeInteger(value)) || (typeof value === 'string' && /^-?\d+$/.test(value))) return String(value)
      throw new CellError(column.name, `${String(value)} is not an integer`)
    case 'decimal': {
      if (typeof value !== 'string' && !(value instanceof Decimal)) throw new CellError(column.name, 'decimals must be decimal strings, never floats')
      if (typeof value === 'string' && alreadyPlain(value, column.scale)) return value
      let decimal: Decimal
      try {
        decimal = new Decimal(value)
      } catch {
        throw new CellError(column.name, `${String(value)} is not a decimal`)
      }
      return column.scale === undefined ? decimal.toFixed() : decimal.toFixed(column.scale, Decimal.ROUND_HALF_UP)
    }
    case 'date':
      return typeof value === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(value) ? value : isoOf(column.name, value).slice(0, 10)
    case 'timestamp':
      return isoOf(column.name, value)
    case 'boolean':
      if (typeof value !== 'boolean') throw new CellError(column.name, `${String(value)} is not a boolean`)
      return value ? 'true' : 'false'
    default: {
      const _never: never = column.format
      return _never
    }
  }
}

/** Records travel in batches: one await per batch rather than per row, with memory bounded by the batch. */
export const RECORDS_PER_BATCH = 256

/** The formatted records of rows, in batches of at most RECORDS_PER_BATCH. */
export async function* recordBatches<Row>(columns: readonly Column<Row>[], rows: AsyncIterable<Row>): AsyncIterable<string[][]> {
  let batch: string[][] = []
  for await (const row of rows) {
    const record: string[] = new Array<string>(columns.length)
    for (let i = 0; i < columns.length; i++) {
      const column = columns[i]
      if (column !== undefined) record[i] = formatCell(column, column.value(row))
    }
    batch.push(record)
    if (batch.length === RECORDS_PER_BATCH) {
      yield batch
      batch = []
    }
  }
  if (batch.length > 0) yield batch
}

// csv-stringify quotes only its own record delimiter; RFC 4180 wants any CR or LF inside a field quoted.
const csvOptions = { record_delimiter: 'windows', bom: false, quoted_match: /[\r\n]/ } as const

/**
 * RFC 4180 CSV as a byte stream: UTF-8 without BOM, CRLF line ends, fields
 * quoted when they hold a comma, quote or line break, quotes doubled.
 * csv-stringify writes each batch of records as the reader consumes them, so
 * memory stays flat; a reader that stops (client gone, job aborted) ends the
 * source too.
 */
export const csvStream = (header: readonly string[], batches: AsyncIterable<string[][]>): Readable => {
  async function* chunks(): AsyncIterable<Buffer> {
    yield Buffer.from(stringifyRecords([[...header]], csvOptions))
    for await (const batch of batches) yield Buffer.from(stringifyRecords(batch, csvOptions))
  }
  return Readable.from(chunks())
}

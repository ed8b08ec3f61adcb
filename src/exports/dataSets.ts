import type { Queries } from '../projections/queries.js'
import type { FieldError } from '../shared/errors.js'
import { CSV_CONTENT_TYPE, isBodyOf, type ExportBody, type ExportType } from './catalogue.js'
import { recordBatches, type Column } from './csv.js'
import { Registry } from './registry.js'

/** What a data set reads with: the read models of one organization, as of one request. */
export interface DataSetContext {
  organizationId: string
  queries: Queries
  /** When the export was requested: defaults (`before`, cut-offs) use it, never the clock, so a resumed job writes the same file. */
  requestedAt: string
  signal: AbortSignal
}

/**
 * One export type's data set, as its module declares it: columns (in file
 * order, with their formats), and the rows as an async iterable over
 * read-model query functions (`stream`, never arrays).
 */
export interface DataSetDefinition<T extends ExportType, Row> {
  type: T
  description: string
  /** Fixed per type; `reports` derives them from the body's `columns`. */
  columns: readonly Column<Row>[] | ((body: ExportBody<T>) => readonly Column<Row>[])
  rows(body: ExportBody<T>, context: DataSetContext): AsyncIterable<Row>
  /** Rows the export will have, when it can be counted ahead (progress percentages, reports dry runs). */
  count?(body: ExportBody<T>, context: DataSetContext): Promise<number>
  /** Default `text/csv; charset=utf-8`. */
  contentType?: string
  /** What the body schema cannot say (e.g. columns of sources that do not combine): each error answers 400 BIND_ERROR. */
  check?(body: ExportBody<T>): FieldError[]
}

export interface OpenedDataSet {
  header: string[]
  /** Formatted records, in batches. */
  batches: AsyncIterable<string[][]>
}

export interface ColumnInfo {
  name: string
  format: string
  description: string
}

/** A registered data set: its row type hidden behind formatted records. */
export interface DataSet {
  type: ExportType
  description: string
  contentType: string
  open(body: ExportBody, context: DataSetContext): OpenedDataSet
  /** The columns a body gets, in file order (what the documentation lists). */
  columns(body: ExportBody): ColumnInfo[]
  count: ((body: ExportBody, context: DataSetContext) => Promise<number>) | null
  check(body: ExportBody): FieldError[]
}

const mismatch = (expected: string, body: ExportBody) => new Error(`data set ${expected} was given a ${body.type} body`)

export const defineDataSet = <T extends ExportType, Row>(definition: DataSetDefinition<T, Row>): DataSet => {
  const typed = (body: ExportBody): ExportBody<T> => {
    if (!isBodyOf(definition.type, body)) throw mismatch(definition.type, body)
    return body
  }
  const { count, check } = definition
  const columnsOf = (body: ExportBody<T>) => (typeof definition.columns === 'function' ? definition.columns(body) : definition.columns)
  return {
    type: definition.type,
    description: definition.description,
    contentType: definition.contentType ?? CSV_CONTENT_TYPE,
    open(body, context) {
      const own = typed(body)
      const columns = columnsOf(own)
      return { header: columns.map((c) => c.name), batches: recordBatches(columns, definition.rows(own, context)) }
    },
    columns: (body) => columnsOf(typed(body)).map((c) => ({
      name: c.name, format: c.scale === undefined ? c.format : `${c.format}(${c.scale})`, description: c.description,
    })),
    count: count === undefined ? null : (body, context) => count(typed(body), context),
    check: (body) => (check === undefined ? [] : check(typed(body))),
  }
}

/** The data sets this instance can export, by type. Types without one answer 501 EXPORT_TYPE_UNAVAILABLE. */
export class DataSetRegistry extends Registry<ExportType, DataSet> {
  constructor(initial: readonly DataSet[] = []) {
    super((dataSet) => dataSet.type, initial)
  }

  get types(): ExportType[] {
    return this.keys
  }
}

import { LRUCache } from 'lru-cache'
import { setImmediate } from 'node:timers/promises'
import type { Filter } from '../../projections/readStore.js'
import { dayOf } from '../../shared/amortization.js'
import type { FieldError } from '../../shared/errors.js'
import type { ExportBody } from '../catalogue.js'
import { formatCell, type CellFormat, type Column } from '../csv.js'
import { defineDataSet, type DataSetContext } from '../dataSets.js'
import { daysIn, instantsIn, periodOf } from '../lib/period.js'
import type { ReportColumnType } from '../reportSources.js'
import {
  isSourceName, reportSources, type ReportDocs, type ReportEnvironment, type SourceDefinition, type SourceName,
} from '../reports/sources.js'

type Body = ExportBody<'reports'>

interface PlannedColumn {
  qualified: string
  source: SourceName
  type: ReportColumnType
  description: string
  /** Stored field of the source holding exactly the written value (see SourceColumn.field). */
  field: string | undefined
  read(docs: ReportDocs, environment: ReportEnvironment): unknown
}

const plannedColumn = <N extends SourceName>(qualified: string, source: SourceDefinition<N>, columnName: string): PlannedColumn | null => {
  const column = source.columns.find((c) => c.name === columnName)
  if (column === undefined) return null
  return {
    qualified, source: source.name, type: column.type, description: column.description, field: column.field,
    read: (docs, environment) => {
      const doc = docs[source.name]
      return doc === null ? null : column.value(doc, environment)
    },
  }
}

/**
 * How a consolidated report is made: its item (the finest source among its
 * columns and filters: installments or payments, else credits, else debtors
 * or credit lines), one row per item, with the credit, debtor and credit
 * line it belongs to joined in.
 */
interface Plan {
  item: SourceName
  columns: PlannedColumn[]
  filters: Array<PlannedColumn & { values: ReadonlySet<string> }>
}

const formats: Record<ReportColumnType, CellFormat> = {
  string: 'text', integer: 'integer', decimal: 'decimal', date: 'date', timestamp: 'timestamp', boolean: 'boolean',
}

const lookup = (qualified: string): PlannedColumn | null => {
  const [sourceName = '', columnName = ''] = qualified.split('.')
  if (!isSourceName(sourceName)) return null
  switch (sourceName) {
    case 'credits': return plannedColumn(qualified, reportSources.credits, columnName)
    case 'installments': return plannedColumn(qualified, reportSources.installments, columnName)
    case 'payments': return plannedColumn(qualified, reportSources.payments, columnName)
    case 'debtors': return plannedColumn(qualified, reportSources.debtors, columnName)
    case 'creditLines': return plannedColumn(qualified, reportSources.creditLines, columnName)
    default: {
      const _never: never = sourceName
      return _never
    }
  }
}

const itemOf = (sources: ReadonlySet<SourceName>): SourceName | string => {
  if (sources.has('installments') && sources.has('payments')) return 'installments and payments are different items: choose columns of one of them'
  for (const item of ['installments', 'payments', 'credits'] as const) if (sources.has(item)) return item
  if (sources.has('debtors') && sources.has('creditLines')) return 'debtors and credit lines relate through credits: add a credits column'
  return sources.has('debtors') ? 'debtors' : 'creditLines'
}

const planOf = (body: Body): { plan: Plan } | { errors: FieldError[] } => {
  const errors: FieldError[] = []
  const columns: PlannedColumn[] = []
  body.columns.forEach((qualified, i) => {
    const planned = lookup(qualified)
    if (planned === null) errors.push({ field: `body.columns.${i}`, message: `unknown column ${qualified}` })
    else columns.push(planned)
  })
  const filters: Plan['filters'] = []
  for (const [qualified, value] of Object.entries(body.filters ?? {})) {
    const planned = lookup(qualified)
    if (planned === null) errors.push({ field: `body.filters.${qualified}`, message: `unknown column ${qualified}` })
    else filters.push({ ...planned, values: new Set(typeof value === 'string' ? [value] : value) })
  }
  if (errors.length > 0) return { errors }
  const item = itemOf(new Set([...columns, ...filters].map((c) => c.source)))
  if (!isSourceName(item)) return { errors: [{ field: 'body.columns', message: item }] }
  return { plan: { item, columns, filters } }
}

const planned = (body: Body): Plan => {
  const result = planOf(body)
  if ('errors' in result) throw new Error(result.errors.map((e) => `${e.field} ${e.message}`).join('; '))
  return result.plan
}

/** A row: its documents and the day arrears are counted to. */
interface ReportRow {
  docs: ReportDocs
  environment: ReportEnvironment
}

const columnOf = (planned: PlannedColumn): Column<ReportRow> =>
  ({ name: planned.qualified, format: formats[planned.type], description: planned.description, value: (row) => planned.read(row.docs, row.environment) })

/**
 * The stored values of a text field a filter value selects: those the cell
 * writes as that value. A text cell writes its value, or `'` and its value
 * (the formula guard), so only the value itself and, after a `'`, the rest of
 * it can; formatCell says which do. Null when the store cannot be asked: the
 * empty cell is written for an absent value too, and other formats may
 * rewrite what the store holds.
 */
export const storedValuesWriting = <Row>(column: Column<Row>, written: string): string[] | null => {
  if (column.format !== 'text' || written === '') return null
  const candidates = written.startsWith("'") ? [written, written.slice(1)] : [written]
  return candidates.filter((stored) => formatCell(column, stored) === written)
}

/**
 * Filters on stored fields of the item go to the read store with the period,
 * as the stored values their cells are written from; the others, and a filter
 * with any value the store cannot be asked about (the empty cell), are checked
 * whole on each row, so a list still keeps the union of its values.
 */
const storeFilter = (plan: Plan, body: Body, requestedAt: string): { filter: Filter; remaining: Plan['filters'] } => {
  const source: SourceDefinition<SourceName> = reportSources[plan.item]
  const period = periodOf(body, requestedAt)
  const filter: Filter = source.period.kind === 'day' ? daysIn(source.period.field, period) : instantsIn(source.period.field, period)
  const remaining: Plan['filters'] = []
  for (const f of plan.filters) {
    const column = columnOf(f)
    const stored = [...f.values].map((value) => storedValuesWriting(column, value))
    if (f.source === plan.item && f.field !== undefined && !(f.field in filter) && stored.every((values): values is string[] => values !== null)) {
      filter[f.field] = { $in: [...new Set(stored.flat())] }
    } else {
      remaining.push(f)
    }
  }
  return { filter, remaining }
}

const cached = <V>(load: (id: string) => Promise<V | null>) => {
  const cache = new LRUCache<string, { value: V | null }>({ max: 1000 })
  return async (id: string | null | undefined): Promise<V | null> => {
    if (id === null || id === undefined || id === '') return null
    const hit = cache.get(id)
    if (hit !== undefined) return hit.value
    const value = await load(id)
    cache.set(id, { value })
    return value
  }
}

/** The item documents of a plan, each with the documents it belongs to (loaded only when a column or filter reads them). */
async function* joinedRows(plan: Plan, filter: Filter, context: DataSetContext): AsyncIterable<ReportDocs> {
  const { queries, organizationId } = context
  const needs = new Set([...plan.columns, ...plan.filters].map((c) => c.source))
  const credit = cached((id) => queries.credits.get(organizationId, id))
  const debtor = cached((id) => queries.profiles.get(organizationId, id))
  const line = cached((id) => queries.creditLines.getIn(organizationId, id))
  const empty: ReportDocs = { credits: null, installments: null, payments: null, debtors: null, creditLines: null }
  const complete = async (docs: ReportDocs, ids: { debtorId?: string | undefined; creditLineId?: string | undefined }): Promise<ReportDocs> => ({
    ...docs,
    debtors: docs.debtors ?? (needs.has('debtors') ? await debtor(ids.debtorId ?? docs.credits?.debtorId) : null),
    creditLines: docs.creditLines ?? (needs.has('creditLines') ? await line(ids.creditLineId ?? docs.credits?.creditLineId) : null),
  })
  const creditFor = async (creditId: string) => (needs.has('credits') || needs.has('debtors') ? credit(creditId) : null)
  switch (plan.item) {
    case 'installments':
      for await (const doc of queries.credits.streamInstallments(organizationId, filter)) {
        yield complete({ ...empty, installments: doc, credits: needs.has('credits') ? await credit(doc.creditId) : null },
          { debtorId: doc.debtorId, creditLineId: doc.creditLineId })
      }
      return
    case 'payments':
      for await (const doc of queries.paymentOrders.stream(organizationId, filter)) {
        yield complete({ ...empty, payments: doc, credits: await creditFor(doc.creditId) }, { creditLineId: doc.order?.creditLineId })
      }
      return
    case 'credits':
      for await (const doc of queries.credits.stream(organizationId, filter)) yield complete({ ...empty, credits: doc }, {})
      return
    case 'debtors':
      for await (const doc of queries.profiles.stream(organizationId, filter)) yield { ...empty, debtors: doc }
      return
    case 'creditLines':
      for await (const doc of queries.creditLines.stream(organizationId, filter)) yield { ...empty, creditLines: doc }
      return
    default: {
      const _never: never = plan.item
      return _never
    }
  }
}

/** The rows of a report: joined, then narrowed by the filters the store could not apply (compared as the file writes the value). */
async function* reportRows(body: Body, context: DataSetContext): AsyncIterable<ReportRow> {
  const plan = planned(body)
  const { filter, remaining } = storeFilter(plan, body, context.requestedAt)
  const environment = { day: dayOf(context.requestedAt) }
  const checks = remaining.map((f) => ({ column: columnOf(f), values: f.values }))
  for await (const docs of joinedRows(plan, filter, context)) {
    const row = { docs, environment }
    if (checks.every(({ column, values }) => values.has(formatCell(column, column.value(row))))) yield row
  }
}

/**
 * `reports`: the chosen columns (`source.column`, in the given order) of the
 * sources listed by GET /exports/sources?type=reports, `format`
 * `consolidated` (one row per item, with what it belongs to), the period
 * applied to the item's own date, and `filters` (a column equals a value or
 * one of a list, compared as the file writes it).
 */
export const reportsDataSet = defineDataSet({
  type: 'reports',
  description: 'a consolidated report of chosen columns',
  columns: (body) => planned(body).columns.map(columnOf),
  check: (body) => {
    const result = planOf(body)
    return 'errors' in result ? result.errors : []
  },
  rows: reportRows,
  async count(body, context) {
    let n = 0
    for await (const _row of reportRows(body, context)) {
      // A count runs inside its request, over reads that never wait on I/O: other requests get the event loop every thousand rows, and a caller gone stops it.
      if (++n % 1000 === 0) {
        await setImmediate()
        context.signal.throwIfAborted()
      }
    }
    return n
  },
})

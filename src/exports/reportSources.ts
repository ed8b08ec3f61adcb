import { REPORT_COLUMN_PATTERN } from './catalogue.js'

export type ReportColumnType = 'string' | 'integer' | 'decimal' | 'date' | 'timestamp' | 'boolean'

export interface ReportSourceColumn {
  name: string
  type: ReportColumnType
  description: string
}

/** A read model a report can draw columns from (credits, installments, orders…). */
export interface ReportSource {
  name: string
  description: string
  columns: readonly ReportSourceColumn[]
}

const qualifiedColumn = new RegExp(REPORT_COLUMN_PATTERN)

/** The sources of `reports`, served by GET /exports/sources?type=reports and checked against every reports body. */
export class ReportSourceRegistry {
  private readonly byName = new Map<string, ReportSource>()

  constructor(initial: readonly ReportSource[] = []) {
    for (const source of initial) this.register(source)
  }

  register(source: ReportSource): void {
    if (!/^[A-Za-z][A-Za-z0-9_]*$/.test(source.name)) throw new Error(`invalid report source name ${source.name}`)
    this.byName.set(source.name, source)
  }

  list(): ReportSource[] {
    return [...this.byName.values()].sort((a, b) => a.name.localeCompare(b.name))
  }

  /** The column a `source.column` name refers to, or null. */
  column(qualified: string): (ReportSourceColumn & { source: string }) | null {
    if (!qualifiedColumn.test(qualified)) return null
    const [sourceName = '', columnName = ''] = qualified.split('.')
    const column = this.byName.get(sourceName)?.columns.find((c) => c.name === columnName)
    return column === undefined ? null : { ...column, source: sourceName }
  }
}

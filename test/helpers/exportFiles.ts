import { parse } from 'csv-parse/sync'
import { parseExportBody } from '../../src/exports/catalogue.js'
import { csvStream } from '../../src/exports/csv.js'
import type { Runtime } from '../../src/runtime.js'
import { money } from '../../src/shared/money.js'

export interface ExportedFile {
  text: string
  header: string[]
  rows: Array<Record<string, string>>
  /** The data set's count for the same body, when it has one. */
  count: number | null
}

/** Runs a data set the way the export runner does (the same CSV writer) and reads the file back with a CSV parser. */
export const exportFile = async (runtime: Runtime, organizationId: string, raw: object, requestedAt = runtime.clock.now().toISOString()): Promise<ExportedFile> => {
  const parsed = parseExportBody(raw)
  if ('errors' in parsed) throw new Error(`bad body: ${JSON.stringify(parsed.errors)}`)
  const dataSet = runtime.exports.dataSets.get(parsed.body.type)
  if (dataSet === undefined) throw new Error(`no data set ${parsed.body.type}`)
  const context = { organizationId, queries: runtime.queries, requestedAt, signal: new AbortController().signal }
  const opened = dataSet.open(parsed.body, context)
  let text = ''
  for await (const chunk of csvStream(opened.header, opened.batches)) text += String(chunk)
  const records: string[][] = parse(text, { relax_column_count: false })
  const [header = [], ...body] = records
  return {
    text, header,
    rows: body.map((cells) => Object.fromEntries(header.map((name, i) => [name, cells[i] ?? '']))),
    count: dataSet.count === null ? null : await dataSet.count(parsed.body, context),
  }
}

/** The sum of a money column over rows, as a plain decimal string. */
export const total = (rows: ReadonlyArray<Record<string, string>>, column: string): string =>
  rows.reduce((sum, row) => sum.plus(row[column] || '0'), money(0)).toFixed(2)

import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { parseExportBody, type ExportBody } from '../../src/exports/catalogue.js'
import { productDataSets } from '../../src/exports/products.js'
import { reportSources, sourceNames } from '../../src/exports/reports/sources.js'

const doc = fs.readFileSync(path.resolve(import.meta.dirname, '../../docs/exports.md'), 'utf8')

const body = (raw: object): ExportBody => {
  const parsed = parseExportBody(raw)
  if ('errors' in parsed) throw new Error(JSON.stringify(parsed.errors))
  return parsed.body
}

/** The column names of the table under a `#### title` heading of the column reference. */
const documentedColumns = (title: string): string[] => {
  const start = doc.indexOf(`#### ${title}\n`)
  if (start < 0) return []
  const section = doc.slice(start).split('\n\n')[1] ?? ''
  return section.split('\n').slice(2).map((line) => /^\| \d+ \| `([^`]+)` \|/.exec(line)?.[1] ?? '?')
}

t.test('docs/exports.md lists every data set\'s columns, in file order', async (t) => {
  for (const dataSet of productDataSets) {
    if (dataSet.type === 'reports') continue
    const bodies = dataSet.type === 'csv-a'
      ? (['credits', 'installments', 'payments', 'debtors'] as const).map((typeFile) => ({ title: `csv-a, typeFile \`${typeFile}\``, body: body({ type: 'csv-a', typeFile }) }))
      : [{ title: dataSet.type, body: body({ type: dataSet.type }) }]
    for (const { title, body: b } of bodies) t.same(documentedColumns(title), dataSet.columns(b).map((c) => c.name), title)
  }
})

t.test('docs/exports.md lists every report source with its columns', async (t) => {
  for (const name of sourceNames) {
    const reports = doc.slice(doc.indexOf('## Reports'))
    const row = reports.split('\n').find((line) => line.startsWith(`| \`${name}\` |`)) ?? ''
    t.ok(row.endsWith(`${reportSources[name].columns.map((c) => `\`${c.name}\` ${c.type}`).join(', ')} |`), name)
  }
})

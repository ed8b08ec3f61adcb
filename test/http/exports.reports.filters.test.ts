import t from 'tap'
import { parseExportBody } from '../../src/exports/catalogue.js'
import type { Column } from '../../src/exports/csv.js'
import { reportsDataSet, storedValuesWriting } from '../../src/exports/dataSets/reports.js'
import type { Filter } from '../../src/projections/readStore.js'
import { createTestApp } from '../helpers/app.js'
import { exportFile } from '../helpers/exportFiles.js'
import { jobSettled, postExport } from '../helpers/exports.js'
import { createDebtor, lending } from '../helpers/lending.js'

/**
 * Four credits: one requested and one disbursed on a line named `-Consumo 2026`
 * (written `'-Consumo 2026`), one requested on a line named `'-Consumo 2026`
 * (written as it is, so the same), one disbursed on `Crédito de consumo`.
 * Requested credits have no disbursement method: their cell is empty.
 */
const lendingBook = async (t: Parameters<typeof createTestApp>[0], readStore: 'memory' | 'sqlite') => {
  const svc = await createTestApp(t, { config: { readStore } })
  const l = await lending(svc)
  const guarded = await l.createLine({ name: '-Consumo 2026' })
  const quoted = await l.createLine({ name: "'-Consumo 2026" })
  const plain = await l.createLine()
  const requested = async (creditLineId: string) => (await l.requestCredit({ creditLineId, debtorId: await createDebtor(svc.runtime, svc.organizationId) })).ID
  const credits = {
    guardedRequested: await requested(guarded),
    guardedDisbursed: (await l.disbursedCredit({ creditLineId: guarded })).ID,
    quotedRequested: await requested(quoted),
    plainDisbursed: (await l.disbursedCredit({ creditLineId: plain })).ID,
  }
  return { svc, credits }
}

const ids = (rows: ReadonlyArray<Record<string, string>>) => rows.map((row) => row['credits.id'] ?? '').sort()

const filterCases: ReadonlyArray<[string, string | string[]]> = [
  ['credits.disbursementMethod', ''],
  ['credits.disbursementMethod', 'bank_transfer'],
  ['credits.disbursementMethod', ['', 'bank_transfer']],
  ['credits.disbursementMethod', ['cash', '']],
  ['credits.creditLineName', "'-Consumo 2026"],
  ['credits.creditLineName', '-Consumo 2026'],
  ['credits.creditLineName', ["'-Consumo 2026", 'Crédito de consumo']],
  ['credits.creditLineName', ['-Consumo 2026', 'Crédito de consumo']],
  ['credits.creditLineName', ['', 'Crédito de consumo']],
  ['creditLines.name', "'-Consumo 2026"],
  ['creditLines.name', '-Consumo 2026'],
]

for (const readStore of ['memory', 'sqlite'] as const) {
  t.test(`${readStore} store: a filter keeps exactly the rows whose cell, as the file writes it, is one of its values`, async (t) => {
    const { svc, credits } = await lendingBook(t, readStore)
    const file = (body: object) => exportFile(svc.runtime, svc.organizationId, { type: 'reports', ...body })
    const all = await file({ columns: ['credits.id', 'credits.disbursementMethod', 'credits.creditLineName', 'creditLines.name'] })
    t.same(all.rows.map((row) => row['credits.creditLineName']).sort(), ["'-Consumo 2026", "'-Consumo 2026", "'-Consumo 2026", 'Crédito de consumo'],
      'both names starting with -, written guarded or as they are, are written the same')
    for (const [column, values] of filterCases) {
      const wanted = [values].flat()
      const filtered = await file({ columns: ['credits.id'], filters: { [column]: values } })
      const expected = ids(all.rows.filter((row) => wanted.includes(row[column] ?? '')))
      t.same(ids(filtered.rows), expected, `${column} ${JSON.stringify(values)}: the rows whose cell is written so`)
      t.equal(filtered.count, expected.length, `${column} ${JSON.stringify(values)}: counted as written`)
    }

    const byFilter = async (filters: object) => ids((await file({ columns: ['credits.id'], filters })).rows)
    t.same(await byFilter({ 'credits.disbursementMethod': '' }), [credits.guardedRequested, credits.quotedRequested].sort(),
      'an empty value selects the credits whose cell is empty')
    t.same(await byFilter({ 'credits.disbursementMethod': ['', 'bank_transfer'] }), Object.values(credits).sort(), 'a list gives the union')
    t.same(await byFilter({ 'credits.creditLineName': "'-Consumo 2026" }),
      [credits.guardedRequested, credits.guardedDisbursed, credits.quotedRequested].sort(), 'a guarded value selects by its written form')
    t.same(await byFilter({ 'credits.creditLineName': '-Consumo 2026' }), [], 'the unguarded form is never written, so it selects nothing')
    t.same(await byFilter({ 'credits.creditLineName': ['-Consumo 2026', 'Crédito de consumo'] }), [credits.plainDisbursed],
      'a value never written leaves the others of its list in effect')
  })
}

t.test('over HTTP, a dry run and the job agree on a filter equal to an empty cell', async (t) => {
  const { svc, credits } = await lendingBook(t, 'memory')
  const body = { type: 'reports', columns: ['credits.id', 'credits.disbursementMethod'], filters: { 'credits.disbursementMethod': '' } }
  const dry = await postExport(svc, body, { url: '/v1/exports?dryRun=true' })
  t.equal(dry.statusCode, 200)
  t.equal(dry.json().itemCount, 2)
  const job = await postExport(svc, body)
  const orderId: string = job.json().data.orderID
  t.equal((await jobSettled(svc.runtime, orderId)).rowCount, 2)
  const written = await svc.call({ method: 'GET', url: `/v1/exports/${orderId}/file`, token: svc.adminToken, organizationId: svc.organizationId })
  t.same(written.body.split('\r\n').slice(1, -1).sort(), [`${credits.guardedRequested},`, `${credits.quotedRequested},`].sort())
})

t.test('filters the store can answer exactly still go to it; the empty cell is checked on each row', async (t) => {
  const { svc } = await lendingBook(t, 'memory')
  const seen: Filter[] = []
  const queries = {
    ...svc.runtime.queries,
    credits: { ...svc.runtime.queries.credits, stream: (organizationId: string, filter: Filter = {}) => {
      seen.push(filter)
      return svc.runtime.queries.credits.stream(organizationId, filter)
    } },
  }
  const context = { organizationId: svc.organizationId, queries, requestedAt: svc.runtime.clock.now().toISOString(), signal: new AbortController().signal }
  const storeFilterOf = async (filters: Record<string, string | string[]>) => {
    const parsed = parseExportBody({ type: 'reports', columns: ['credits.id'], filters })
    if ('errors' in parsed) throw new Error(JSON.stringify(parsed.errors))
    seen.length = 0
    await reportsDataSet.count?.(parsed.body, context)
    return seen[0] ?? {}
  }
  t.same((await storeFilterOf({ 'credits.state': ['Desembolsado', 'Solicitado'] }))['status'], { $in: ['Desembolsado', 'Solicitado'] })
  t.same((await storeFilterOf({ 'credits.creditLineName': ["'-Consumo 2026", '-Consumo 2026', 'Crédito de consumo'] }))['creditLineName'],
    { $in: ["'-Consumo 2026", '-Consumo 2026', 'Crédito de consumo'] }, 'a guarded value stands for both values written so; an unguarded one for none')
  t.notOk('disbursementMethod' in await storeFilterOf({ 'credits.disbursementMethod': ['', 'bank_transfer'] }),
    'an empty value is written for an absent one too: the whole filter is checked row by row')
})

t.test('the stored text values a written value stands for', async (t) => {
  const text: Column<unknown> = { name: 'x', format: 'text', description: '', value: () => null }
  t.same(storedValuesWriting(text, 'Desembolsado'), ['Desembolsado'])
  t.same(storedValuesWriting(text, "'-x"), ["'-x", '-x'], 'itself, or the guarded value')
  t.same(storedValuesWriting(text, "'x"), ["'x"], 'a quote before anything else is written as it is')
  t.same(storedValuesWriting(text, "'"), ["'"])
  for (const unwritten of ['-x', '=1+1', '+57', '@a', '\tx']) t.same(storedValuesWriting(text, unwritten), [], `${JSON.stringify(unwritten)} is never written`)
  t.equal(storedValuesWriting(text, ''), null, 'the empty cell: also an absent value')
  t.equal(storedValuesWriting({ ...text, format: 'date' }, '2026-03-10'), null, 'other formats are compared on each row')
})

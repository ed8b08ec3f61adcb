import t from 'tap'
import { exportAggregate } from '../../src/commands/export.js'
import { ManualClock } from '../../src/shared/clock.js'
import { createTestApp } from '../helpers/app.js'
import { blockingDataSet, creditsSource, fixtureDataSet, jobSettled, memberToken, postExport, reportsDataSet } from '../helpers/exports.js'

const report = { type: 'reports', format: 'consolidated', columns: ['credits.id', 'credits.principal'] }

/** The test source with a column only ReadAnalysis may report. */
const scoredCreditsSource = { ...creditsSource, columns: [...creditsSource.columns, { name: 'score', type: 'decimal' as const, description: 'score' }] }

const setup = async (t: Parameters<typeof createTestApp>[0], options: { rows?: number; blocking?: boolean; config?: object } = {}) => {
  const clock = new ManualClock('2026-03-10T09:00:00.000Z')
  const svc = await createTestApp(t, {
    clock,
    config: { exportsReportsSoftWarnRows: 10, exportsReportsMaxRows: 50, ...options.config },
    beforeStart: (runtime) => {
      runtime.exports.sources.register(scoredCreditsSource)
      runtime.exports.dataSets.register(options.blocking === true ? blockingDataSet('reports') : reportsDataSet(options.rows ?? 5))
      runtime.exports.dataSets.register(fixtureDataSet('receivables', 1))
    },
  })
  return { svc, clock }
}

t.test('sources list the report columns with their types', async (t) => {
  const { svc } = await setup(t)
  const response = await svc.call({ method: 'GET', url: '/v1/exports/sources?type=reports', token: svc.adminToken, organizationId: svc.organizationId })
  t.equal(response.statusCode, 200)
  const { sources } = response.json().data
  t.same(sources.map((s: { name: string }) => s.name), ['creditLines', 'credits', 'debtors', 'installments', 'payments'], 'the product\'s sources, by name')
  t.same(sources.find((s: { name: string }) => s.name === 'credits'), scoredCreditsSource, 'a source registered again replaces the product\'s')
  const other = await svc.call({ method: 'GET', url: '/v1/exports/sources?type=receivables', token: svc.adminToken, organizationId: svc.organizationId })
  t.equal(other.statusCode, 400)
  const reader = await memberToken(svc, svc.organizationId, ['ReadExport', 'ReadReceivables'])
  t.equal((await svc.call({ method: 'GET', url: '/v1/exports/sources?type=reports', token: reader, organizationId: svc.organizationId })).statusCode, 403)
})

t.test('a reports job writes the chosen columns; unknown columns are refused', async (t) => {
  const { svc } = await setup(t, { rows: 2 })
  const reporter = await memberToken(svc, svc.organizationId, ['ExportReports'])
  const created = await postExport(svc, report, { token: reporter })
  t.equal(created.statusCode, 202)
  await jobSettled(svc.runtime, created.json().data.orderID)
  const file = await svc.call({ method: 'GET', url: `/v1/exports/${created.json().data.orderID}/file`, token: reporter, organizationId: svc.organizationId })
  t.equal(file.statusCode, 200)
  t.equal(file.body.split('\r\n')[0], 'credits.id,credits.principal')
  t.equal(file.headers['content-disposition'], 'attachment; filename="reports-2026-03-10.csv"')
  const unknown = await postExport(svc, { ...report, columns: ['credits.id', 'credits.colour'], filters: { 'debtors.city': 'Cali' } })
  t.equal(unknown.statusCode, 400)
  t.equal(unknown.json().data.code, 'BIND_ERROR')
  t.same(unknown.json().data.errors.map((e: { field: string }) => e.field), ['body.columns.1', 'body.filters.debtors.city'])
})

t.test('a report naming people (columns or filters) also needs ReadChildEntity, like the files that name them', async (t) => {
  const { svc } = await setup(t, { rows: 2 })
  const reporter = await memberToken(svc, svc.organizationId, ['ExportReports'])
  for (const [what, body] of [
    ['a name column', { ...report, columns: ['credits.id', 'debtors.name'] }],
    ['a document number column', { ...report, columns: ['debtors.documentNumber'] }],
    ['a filter on the e-mail', { ...report, filters: { 'debtors.email': 'ana@example.co' } }],
  ] as const) {
    for (const url of ['/v1/exports', '/v1/exports?dryRun=true']) {
      const refused = await postExport(svc, body, { token: reporter, url })
      t.match([refused.statusCode, refused.json().data.code, refused.json().data.permission], [403, 'FORBIDDEN', 'ReadChildEntity'], `${what}, ${url}`)
    }
  }
  t.equal((await svc.runtime.queries.exportJobs.reportsActivity(svc.organizationId, '2000-01-01T00:00:00Z')).recentRequests.length, 0, 'no job was created')
  t.equal((await postExport(svc, { ...report, columns: ['debtors.id', 'debtors.type', 'debtors.cityName'] }, { token: reporter })).statusCode, 202,
    'pseudonymous debtor columns need no more')
  const identities = await memberToken(svc, svc.organizationId, ['ExportReports', 'ReadChildEntity'])
  t.equal((await postExport(svc, { ...report, columns: ['debtors.name'] }, { token: identities })).statusCode, 202)
})

t.test('reading a report job or its file needs what creating it needed; a list withholds the filters on columns the caller may not read', async (t) => {
  const { svc } = await setup(t, { rows: 2 })
  const reporter = await memberToken(svc, svc.organizationId, ['ExportReports'])
  const get = (url: string, token = reporter) => svc.call({ method: 'GET', url, token, organizationId: svc.organizationId })
  // One after another: the reports cap holds few open jobs.
  const done = async (body: object): Promise<string> => {
    const created = await postExport(svc, body)
    if (created.statusCode !== 202) throw new Error(created.body)
    const id: string = created.json().data.orderID
    t.equal((await jobSettled(svc.runtime, id)).status, 'done')
    return id
  }
  const named = await done({ ...report, columns: ['credits.id', 'debtors.name'] })
  const scored = await done({ ...report, columns: ['credits.id', 'credits.score'] })
  const filtered = await done({ ...report, filters: { 'debtors.documentNumber': '1020304050', 'credits.id': 'c-1' } })
  const fileIdOf = async (id: string) => (await svc.runtime.queries.exportJobs.byId(id))?.fileId ?? ''
  for (const [id, permission] of [[named, 'ReadChildEntity'], [scored, 'ReadAnalysis'], [filtered, 'ReadChildEntity']] as const) {
    for (const url of [`/v1/exports/${id}`, `/v1/exports/${id}/file`, `/v1/reports/export/download/${await fileIdOf(id)}`]) {
      const refused = await get(url)
      t.match([refused.statusCode, refused.json().data.code, refused.json().data.permission], [403, 'FORBIDDEN', permission], url)
    }
  }
  const listed = await get('/v1/exports?type=reports')
  t.equal(listed.statusCode, 200)
  t.notOk(listed.body.includes('1020304050'), 'no filter value on a column the caller may not read')
  const job = listed.json().data.find((j: { orderID: string }) => j.orderID === filtered)
  t.same(job.parameters.filters, { 'credits.id': 'c-1' }, 'the other filters are shown')
  t.same(job.parameters.withheldFilters, ['debtors.documentNumber'], 'and the withheld ones named')
  const full = await memberToken(svc, svc.organizationId, ['ExportReports', 'ReadChildEntity', 'ReadAnalysis'])
  for (const id of [named, scored, filtered]) t.equal((await get(`/v1/exports/${id}/file`, full)).statusCode, 200, 'with the permissions, the file')
  const all = (await get('/v1/exports?type=reports', full)).json().data.find((j: { orderID: string }) => j.orderID === filtered)
  t.same(all.parameters.filters, { 'debtors.documentNumber': '1020304050', 'credits.id': 'c-1' })
  t.notOk('withheldFilters' in all.parameters)
})

t.test('a body the job runner would refuse is refused at the request (formats the route schema lets through)', async (t) => {
  const { svc } = await setup(t)
  for (const [what, body] of [
    ['a time with a space for T', { type: 'receivables', after: '2026-01-01 00:00:00Z' }],
    ['a urn:uuid: id', { type: 'payments', filters: { creditId: 'urn:uuid:0190a1b2-0000-4000-8000-000000000000' } }],
    ['a report time with a space', { ...report, before: '2026-03-01 00:00:00Z' }],
  ] as const) {
    for (const url of ['/v1/exports', '/v1/exports?dryRun=true']) {
      if (url.includes('dryRun') && body.type !== 'reports') continue
      const refused = await postExport(svc, body, { url })
      t.match([refused.statusCode, refused.json().data.code], [400, 'BIND_ERROR'], `${what}, ${url}`)
    }
  }
  t.equal((await svc.runtime.queries.exportJobs.list({ organizationId: svc.organizationId, types: ['receivables', 'payments', 'reports'], offset: 0, limit: 10 })).total, 0,
    'no job was created')
})

t.test('a dry run counts a report without creating a job; thresholds decide overflowed and softWarn', async (t) => {
  for (const [rows, overflowed, softWarn] of [[5, false, false], [11, false, true], [51, true, true]] as const) {
    const { svc } = await setup(t, { rows })
    const response = await postExport(svc, report, { url: '/v1/exports?dryRun=true' })
    t.equal(response.statusCode, 200)
    t.same(response.json(), { itemCount: rows, overflowed, softWarn }, `${rows} rows`)
    t.equal((await svc.runtime.queries.exportJobs.reportsActivity(svc.organizationId, '2000-01-01T00:00:00Z')).recentRequests.length, 0, 'no job')
  }
})

t.test('a dry run of any other type answers 501 DRY_RUN_NOT_SUPPORTED', async (t) => {
  const { svc } = await setup(t)
  const response = await postExport(svc, { type: 'receivables' }, { url: '/v1/exports?dryRun=true' })
  t.equal(response.statusCode, 501)
  t.same(response.json(), { status: 'fail', data: {
    code: 'DRY_RUN_NOT_SUPPORTED', message: 'dry runs are supported for reports only, not receivables', supportedTypes: ['reports'],
  } })
  const exporter = await memberToken(svc, svc.organizationId, ['ReadExport', 'ReadReceivables'])
  t.equal((await postExport(svc, report, { url: '/v1/exports?dryRun=true', token: exporter })).statusCode, 403, 'a dry run needs ExportReports')
  const nobody = await memberToken(svc, svc.organizationId, [])
  t.equal((await postExport(svc, { type: 'receivables' }, { url: '/v1/exports?dryRun=true', token: nobody })).statusCode, 403,
    'permissions are checked before whether the type has dry runs')
})

t.test('a report larger than the maximum fails its job', async (t) => {
  const { svc } = await setup(t, { rows: 51 })
  const created = await postExport(svc, report)
  const doc = await jobSettled(svc.runtime, created.json().data.orderID)
  t.match(doc, { status: 'failed', error: /more than 50 rows/ })
})

t.test('reports jobs are capped per organization: concurrent and per hour, with Retry-After', async (t) => {
  const { svc, clock } = await setup(t, { blocking: true, config: { exportsReportsMaxConcurrent: 2, exportsReportsMaxPerHour: 3 } })
  const first = await postExport(svc, report)
  const second = await postExport(svc, report)
  t.same([first.statusCode, second.statusCode], [202, 202])
  const third = await postExport(svc, report)
  t.equal(third.statusCode, 429)
  t.equal(third.headers['retry-after'], '30')
  t.match(third.json().data, { code: 'EXPORT_RATE_LIMITED', retryAfter: 30, limits: { concurrent: 2, perHour: 3 } })
  t.equal((await postExport(svc, { type: 'receivables' })).statusCode, 202, 'other types are not capped')

  // End the two running reports: stopping the runner interrupts them, then they are failed for good.
  await svc.runtime.exports.workers.stop()
  for (const response of [first, second]) {
    const id = response.json().data.orderID
    await svc.runtime.execute(exportAggregate, id,
      { type: 'FailExport', attemptId: null, error: 'test', now: clock.now().toISOString() }, { organizationId: svc.organizationId, actorId: null, correlationId: 't' })
  }
  clock.advance(10 * 60_000)
  const token = await svc.clientToken(svc.config.adminClientId ?? '', svc.config.adminClientSecret ?? '')
  t.equal((await postExport(svc, report, { token })).statusCode, 202, 'a third in the hour once the first two ended')
  clock.advance(60_000)
  const fourth = await postExport(svc, report, { token })
  t.equal(fourth.statusCode, 429)
  t.equal(fourth.headers['retry-after'], String(60 * 60 - 11 * 60), 'until the first of the hour leaves the window')
  t.equal(fourth.json().data.retryAfter, 60 * 60 - 11 * 60)
})

t.test('concurrent requests cannot slip past the cap', async (t) => {
  const { svc } = await setup(t, { blocking: true, config: { exportsReportsMaxConcurrent: 2, exportsReportsMaxPerHour: 100 } })
  const answers = await Promise.all(Array.from({ length: 6 }, () => postExport(svc, report)))
  t.equal(answers.filter((r) => r.statusCode === 202).length, 2)
  t.equal(answers.filter((r) => r.statusCode === 429).length, 4)
})

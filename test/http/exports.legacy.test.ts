import t from 'tap'
import { exportTypeInfo, exportTypes } from '../../src/exports/catalogue.js'
import { defineDataSet } from '../../src/exports/dataSets.js'
import { ManualClock } from '../../src/shared/clock.js'
import { loadConfig, type Config } from '../../src/shared/config.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { tempDir } from '../helpers/config.js'
import { brokenDataSet, creditsSource, fixtureColumns, fixtureDataSet, fixtureRow, jobSettled, memberToken, postExport, reportsDataSet } from '../helpers/exports.js'

const BEFORE = '2026-06-15T12:00:00.000Z'

const legacyRoutes = [
  ...exportTypes.flatMap((type) => exportTypeInfo[type].legacyPath === null ? [] : [`GET ${exportTypeInfo[type].legacyPath}`]),
  'GET /export/logs', 'GET /export/daily', 'GET /export/monthly',
  'GET /export/orders/receivables', 'GET /export/orders/receivables/sse', 'GET /export/orders/file/{fileid}',
  'POST /reports/export', 'POST /reports/export/estimate', 'GET /reports/export/available-sources', 'GET /reports/export/download/{fileid}',
]
const isReportsRoute = (route: string) => route.includes('/reports/export')

const setup = async (t: Parameters<typeof createTestApp>[0], config: Partial<Config> = {}, dataDir?: string) => {
  const clock = new ManualClock(BEFORE)
  const svc = await createTestApp(t, {
    clock,
    config: { ...config, ...(dataDir === undefined ? {} : { dataDir }) },
    beforeStart: (runtime) => {
      for (const type of exportTypes) runtime.exports.dataSets.register(type === 'reports' ? reportsDataSet(3) : fixtureDataSet(type, 12))
      runtime.exports.sources.register(creditsSource)
    },
  })
  return { svc, clock }
}

/** An administrator token valid at the clock's current time. */
const adminNow = (svc: TestApp) => svc.clientToken(svc.config.adminClientId ?? '', svc.config.adminClientSecret ?? '')

const call = (svc: TestApp, route: string, token: string, payload?: object) => {
  const [method = 'GET', path = ''] = route.split(' ')
  return svc.call({
    method: method === 'POST' ? 'POST' : 'GET', url: `/v1${path.replace('{fileid}', 'f0')}`, token, organizationId: svc.organizationId,
    ...(payload === undefined ? {} : { payload }),
  })
}

t.test('the 28 legacy routes are in the OpenAPI document, deprecated with their sunset', async (t) => {
  const { svc } = await setup(t)
  t.equal(legacyRoutes.length, 28)
  const doc = (await svc.call({ method: 'GET', url: '/v1/openapi.json' })).json()
  for (const route of legacyRoutes) {
    const [method = '', path = ''] = route.split(' ')
    const operation = doc.paths[`/v1${path}`]?.[method.toLowerCase()]
    t.ok(operation, `${route} exists`)
    t.equal(operation?.deprecated, true, `${route} is deprecated`)
    t.equal(operation?.['x-sunset'], isReportsRoute(route) ? '2026-07-01' : '2026-08-01', `${route} sunset`)
  }
  t.notOk(doc.paths['/v1/exports']?.post?.deprecated, 'canonical routes are not deprecated')
})

t.test('a legacy GET export answers the canonical file inline, byte for byte, with deprecation headers', async (t) => {
  const { svc } = await setup(t)
  const filters = { status: ['completed'], minAmount: '1000.00' }
  const queries: Array<[string, object, string]> = [
    ['receivables', { after: '2026-01-03T00:00:00Z', before: '2026-01-09T00:00:00Z' }, '/export/receivables?after=2026-01-03T00:00:00Z&before=2026-01-09T00:00:00Z'],
    ['receivables-cutoff', { before: '2026-01-05T00:00:00Z' }, '/export/receivables/cutoff?before=2026-01-05T00:00:00Z'],
    ['orders-accounting', {}, '/export/orders'],
    ['csv-a', { typeFile: 'installments' }, '/export/csv-a?typeFile=installments'],
    ['payments', { filters }, `/export/payments?filters=${encodeURIComponent(JSON.stringify(filters))}`],
    ['debtors-credit-active-invoicing-a', { after: '2026-01-10T00:00:00Z' }, '/export/debtors/credit-active/invoicing-a?after=2026-01-10T00:00:00Z'],
  ]
  for (const [type, body, legacyUrl] of queries) {
    const orderID = (await postExport(svc, { type, ...body })).json().data.orderID
    await jobSettled(svc.runtime, orderID)
    const canonical = await svc.call({ method: 'GET', url: `/v1/exports/${orderID}/file`, token: svc.adminToken, organizationId: svc.organizationId })
    const legacy = await svc.call({ method: 'GET', url: `/v1${legacyUrl}`, token: svc.adminToken, organizationId: svc.organizationId })
    t.equal(legacy.statusCode, 200, type)
    t.ok(legacy.rawPayload.equals(canonical.rawPayload), `${type}: identical bytes`)
    t.ok(legacy.rawPayload.length > 40, `${type}: not empty`)
    t.equal(legacy.headers['content-type'], canonical.headers['content-type'])
    t.equal(legacy.headers['content-disposition'], canonical.headers['content-disposition'])
    t.equal(legacy.headers['deprecation'], 'true')
    t.equal(legacy.headers['sunset'], 'Sat, 01 Aug 2026 00:00:00 GMT')
    t.equal(legacy.headers['link'], '</v1/exports>; rel="successor-version"')
  }
  const bad = await svc.call({ method: 'GET', url: '/v1/export/payments?filters=%7Bnope', token: svc.adminToken, organizationId: svc.organizationId })
  t.equal(bad.statusCode, 400)
  t.equal(bad.json().data.code, 'BIND_ERROR')
  t.equal(bad.headers['deprecation'], 'true', 'failures carry the deprecation headers too')
  const refused = await svc.call({ method: 'GET', url: '/v1/export/receivables', token: await memberToken(svc, svc.organizationId, ['ReadExport']), organizationId: svc.organizationId })
  t.equal(refused.statusCode, 403, 'the same permissions as the canonical type')
})

t.test('legacy file routes take the file identifier the job views give, and resolve it to the job', async (t) => {
  const { svc } = await setup(t)
  const orderID = (await postExport(svc, { type: 'receivables' })).json().data.orderID
  const doc = await jobSettled(svc.runtime, orderID)
  const get = (url: string) => svc.call({ method: 'GET', url, token: svc.adminToken, organizationId: svc.organizationId })
  const fileId = (await get(`/v1/exports/${orderID}`)).json().data.file.fileId
  t.equal(fileId, doc.fileId, 'the job view names the file identifier')
  const listed = (views: Array<{ orderID: string; file?: { fileId: string } }>) => views.find((view) => view.orderID === orderID)?.file?.fileId
  t.equal(listed((await get('/v1/exports')).json().data), fileId, 'the list too')
  t.equal(listed((await get('/v1/export/orders/receivables')).json().data), fileId, 'and the legacy list')
  const canonical = await get(`/v1/exports/${orderID}/file`)
  for (const path of ['/export/orders/file', '/reports/export/download']) {
    const legacy = await svc.call({ method: 'GET', url: `/v1${path}/${fileId}`, token: svc.adminToken, organizationId: svc.organizationId })
    t.equal(legacy.statusCode, 200, path)
    t.ok(legacy.rawPayload.equals(canonical.rawPayload))
    t.equal(legacy.headers['link'], `</v1/exports/${orderID}/file>; rel="successor-version"`)
    const byOrder = await svc.call({ method: 'GET', url: `/v1${path}/${orderID}`, token: svc.adminToken, organizationId: svc.organizationId })
    t.equal(byOrder.statusCode, 404, `${path} with an orderID is 404`)
  }
})

t.test('errors in a legacy GET export\'s parameters name the query fields', async (t) => {
  const { svc } = await setup(t)
  for (const [query, field] of [
    ['/export/installments?after=2026-02-01T00:00:00Z&before=2026-01-01T00:00:00Z', 'query.after'],
    ['/export/payments?filters=%7B%22minAmount%22%3A%22ten%22%7D', 'query.filters.minAmount'],
    ['/export/receivables?after=2026-01-01%2000:00:00Z', 'query.after'],
    ['/export/receivables?after=yesterday', 'query.after'],
    ['/export/csv-a', 'query.typeFile'],
    ['/export/csv-a?typeFile=loans', 'query.typeFile'],
    ['/export/receivables?page=2', 'query.page'],
  ] as const) {
    const refused = await svc.call({ method: 'GET', url: `/v1${query}`, token: svc.adminToken, organizationId: svc.organizationId })
    const fields: string[] = (refused.json().data.errors ?? []).map((e: { field: string }) => e.field)
    t.same([refused.statusCode, [...new Set(fields)]], [400, [field]], `${query}: the schema's errors too`)
  }
})

t.test('a legacy GET export whose data set fails at once answers the error in the envelope; one failing later cuts the transfer short', async (t) => {
  const failsMidway = defineDataSet({
    type: 'receivables', description: 'fails after 300 rows', columns: fixtureColumns,
    async *rows(_body, context) {
      for (let i = 0; i < 300; i++) yield fixtureRow(i, context.organizationId)
      throw new Error('the read store went away')
    },
  })
  const svc = await createTestApp(t, {
    clock: new ManualClock(BEFORE),
    beforeStart: (runtime) => {
      runtime.exports.dataSets.register(failsMidway)
      runtime.exports.dataSets.register(brokenDataSet('installments'))
    },
  })
  const get = (path: string) => svc.call({ method: 'GET', url: `/v1${path}`, token: svc.adminToken, organizationId: svc.organizationId })
  const atOnce = await get('/export/installments')
  t.match([atOnce.statusCode, atOnce.headers['content-type'], atOnce.json()], [500, /application\/json/, { status: 'error', message: 'Internal server error' }])
  await t.rejects(get('/export/receivables'), 'no complete answer: the transfer ends without its last chunk')
})

t.test('HEAD on a legacy GET export answers its headers without running the export', async (t) => {
  let opened = 0
  const svc = await createTestApp(t, {
    clock: new ManualClock(BEFORE),
    beforeStart: (runtime) => {
      const counted = fixtureDataSet('receivables', 50)
      runtime.exports.dataSets.register({ ...counted, open: (body, context) => { opened += 1; return counted.open(body, context) } })
    },
  })
  const call = (method: 'GET' | 'HEAD') => svc.call({ method, url: '/v1/export/receivables', token: svc.adminToken, organizationId: svc.organizationId })
  const head = await call('HEAD')
  t.equal(head.statusCode, 200)
  t.equal(head.rawPayload.length, 0)
  t.equal(opened, 0, 'the data set was not opened')
  const get = await call('GET')
  t.equal(opened, 1)
  t.equal(head.headers['content-type'], get.headers['content-type'])
  t.equal(head.headers['deprecation'], get.headers['deprecation'])
  t.equal(head.headers['content-disposition'], get.headers['content-disposition'])
})

t.test('the legacy reports routes behave as their canonical twins', async (t) => {
  const { svc } = await setup(t)
  const body = { columns: ['credits.id', 'credits.principal'] }
  const created = await svc.call({ method: 'POST', url: '/v1/reports/export', token: svc.adminToken, organizationId: svc.organizationId, payload: body })
  t.equal(created.statusCode, 202)
  t.equal(created.headers['location'], `/v1/exports/${created.json().data.orderID}`)
  t.equal(created.headers['sunset'], 'Wed, 01 Jul 2026 00:00:00 GMT')
  t.equal((await jobSettled(svc.runtime, created.json().data.orderID)).exportType, 'reports')
  const estimate = await svc.call({ method: 'POST', url: '/v1/reports/export/estimate', token: svc.adminToken, organizationId: svc.organizationId, payload: body })
  const canonical = await postExport(svc, { type: 'reports', ...body }, { url: '/v1/exports?dryRun=true' })
  t.equal(estimate.statusCode, 200)
  t.same(estimate.json(), canonical.json())
  t.equal(estimate.headers['link'], '</v1/exports?dryRun=true>; rel="successor-version"')
  const sources = await svc.call({ method: 'GET', url: '/v1/reports/export/available-sources', token: svc.adminToken, organizationId: svc.organizationId })
  t.same(sources.json(), (await svc.call({ method: 'GET', url: '/v1/exports/sources?type=reports', token: svc.adminToken, organizationId: svc.organizationId })).json())
  const form = await svc.call({
    method: 'POST', url: '/v1/reports/export', token: svc.adminToken, organizationId: svc.organizationId,
    headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'columns=credits.id',
  })
  t.equal(form.statusCode, 400)
  t.equal(form.json().data.code, 'BIND_ERROR')
})

t.test('a legacy call whose body does not parse is still a legacy call: headers, counted, and retired after the sunset', async (t) => {
  const { svc, clock } = await setup(t)
  const unparsable = (token: string) => svc.call({
    method: 'POST', url: '/v1/reports/export/estimate', token, organizationId: svc.organizationId,
    headers: { 'content-type': 'application/json' }, payload: '{"columns":',
  })
  const before = await unparsable(svc.adminToken)
  t.equal(before.statusCode, 400)
  t.equal(before.json().data.code, 'BIND_ERROR')
  t.equal(before.headers['deprecation'], 'true')
  t.equal(before.headers['sunset'], 'Wed, 01 Jul 2026 00:00:00 GMT')
  t.equal(before.headers['link'], '</v1/exports?dryRun=true>; rel="successor-version"')
  clock.set('2026-07-01T00:00:00.000Z')
  const token = await adminNow(svc)
  const after = await unparsable(token)
  t.equal(after.statusCode, 404)
  t.equal(after.json().data.code, 'LEGACY_ROUTE_RETIRED')
  const usage = await svc.call({ method: 'GET', url: '/v1/exports/legacy-usage', token })
  t.same(usage.json().data.map(({ route, calls, callsAfterSunset }: Record<string, unknown>) => ({ route, calls, callsAfterSunset })), [
    { route: 'POST /reports/export/estimate', calls: 2, callsAfterSunset: 1 },
  ])
})

t.test('from their sunset on, legacy routes answer 404; the reports routes retire a month earlier', async (t) => {
  const { svc, clock } = await setup(t)
  clock.set('2026-06-30T23:59:59.000Z')
  let token = await adminNow(svc)
  t.equal((await call(svc, 'GET /reports/export/available-sources', token)).statusCode, 200, 'the day before')
  clock.set('2026-07-01T00:00:00.000Z')
  token = await adminNow(svc)
  for (const route of legacyRoutes.filter(isReportsRoute)) {
    const response = await call(svc, route, token, route.startsWith('POST') ? { columns: ['credits.id'] } : undefined)
    t.equal(response.statusCode, 404, route)
    t.match(response.json(), { status: 'fail', data: { code: 'LEGACY_ROUTE_RETIRED', sunset: '2026-07-01T00:00:00.000Z' } })
  }
  t.equal((await call(svc, 'GET /export/receivables', token)).statusCode, 200, 'the other routes still answer in July')
  clock.set('2026-08-01T00:00:00.000Z')
  token = await adminNow(svc)
  for (const route of legacyRoutes) {
    const response = await call(svc, route, token, route.startsWith('POST') ? { columns: ['credits.id'] } : undefined)
    t.equal(response.statusCode, 404, route)
    t.equal(response.json().data.code, 'LEGACY_ROUTE_RETIRED')
  }
  const response = await call(svc, 'GET /export/receivables', token)
  t.match(response.json().data, { successor: '/v1/exports', sunset: '2026-08-01T00:00:00.000Z' })
  t.equal((await postExport(svc, { type: 'receivables' }, { token })).statusCode, 202, 'the canonical routes go on')
})

t.test('operators move the sunsets with EXPORTS_LEGACY_SUNSET and EXPORTS_LEGACY_REPORTS_SUNSET', async (t) => {
  const config = loadConfig({ EXPORTS_LEGACY_SUNSET: '2026-06-01', EXPORTS_LEGACY_REPORTS_SUNSET: '2026-12-31T18:00:00Z' }, {})
  t.equal(config.exportsLegacySunset.toISOString(), '2026-06-01T00:00:00.000Z')
  t.throws(() => loadConfig({ EXPORTS_LEGACY_SUNSET: 'next summer' }), /EXPORTS_LEGACY_SUNSET must be a date \(2026-08-01, midnight UTC\) or a timestamp with its offset/)
  const { svc } = await setup(t, { exportsLegacySunset: config.exportsLegacySunset, exportsLegacyReportsSunset: config.exportsLegacyReportsSunset })
  t.equal((await call(svc, 'GET /export/receivables', svc.adminToken)).statusCode, 404, 'retired since June 1st')
  const reports = await call(svc, 'GET /reports/export/available-sources', svc.adminToken)
  t.equal(reports.statusCode, 200)
  t.equal(reports.headers['sunset'], 'Thu, 31 Dec 2026 18:00:00 GMT')
  const doc = (await svc.call({ method: 'GET', url: '/v1/openapi.json' })).json()
  t.equal(doc.paths['/v1/export/receivables'].get['x-sunset'], '2026-06-01')
})

t.test('every legacy call is counted per organization and route, before and after the sunset, across restarts', async (t) => {
  const dataDir = tempDir()
  const { svc, clock } = await setup(t, {}, dataDir)
  await call(svc, 'GET /export/receivables', svc.adminToken)
  await call(svc, 'GET /export/receivables', svc.adminToken)
  await call(svc, 'GET /reports/export/available-sources', svc.adminToken)
  clock.set('2026-08-02T00:00:00.000Z')
  const token = await adminNow(svc)
  t.equal((await call(svc, 'GET /export/receivables', token)).statusCode, 404)
  await svc.close()

  const { svc: restarted } = await setup(t, {}, dataDir)
  clock.set('2026-08-02T00:00:00.000Z')
  const usage = await restarted.call({ method: 'GET', url: '/v1/exports/legacy-usage', token: await adminNow(restarted) })
  t.equal(usage.statusCode, 200)
  t.same(usage.json().data.map(({ route, calls, callsAfterSunset, organizationId }: Record<string, unknown>) => ({ route, calls, callsAfterSunset, organizationId })), [
    { route: 'GET /export/receivables', calls: 3, callsAfterSunset: 1, organizationId: restarted.organizationId },
    { route: 'GET /reports/export/available-sources', calls: 1, callsAfterSunset: 0, organizationId: restarted.organizationId },
  ])
  const member = await memberToken(restarted, restarted.organizationId, ['ReadExport', 'AdministerOrganization'])
  t.equal((await restarted.call({ method: 'GET', url: '/v1/exports/legacy-usage', token: member })).statusCode, 403, 'administrators only')
})

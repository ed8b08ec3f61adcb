import t from 'tap'
import { exportTypes, type ExportType } from '../../src/exports/catalogue.js'
import { ManualClock } from '../../src/shared/clock.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import {
  brokenDataSet, createOrganization, fixtureDataSet, jobEvent, jobSettled, memberToken, postExport,
} from '../helpers/exports.js'

const START = '2026-03-10T09:00:00.000Z'

const setup = async (t: Parameters<typeof createTestApp>[0], size = 30, without: ExportType[] = []) => {
  const clock = new ManualClock(START)
  const svc = await createTestApp(t, {
    clock,
    config: { exportsProgressEveryRows: 10 },
    beforeStart: (runtime) => {
      runtime.exports.dataSets.register(fixtureDataSet('receivables', size))
      runtime.exports.dataSets.register(fixtureDataSet('payments', size, { countable: false }))
      runtime.exports.dataSets.register(fixtureDataSet('debtors', size))
      runtime.exports.dataSets.register(brokenDataSet('installments'))
      for (const type of without) runtime.exports.dataSets.remove(type)
    },
  })
  return { svc, clock }
}

const get = (svc: TestApp, url: string, token = svc.adminToken, organizationId = svc.organizationId) =>
  svc.call({ method: 'GET', url, token, organizationId })

t.test('a job is queued, run, and its file downloaded by orderID', async (t) => {
  const { svc } = await setup(t)
  const created = await postExport(svc, { type: 'receivables', after: '2026-01-05T00:00:00Z', before: '2026-01-25T00:00:00Z' })
  t.equal(created.statusCode, 202)
  const orderID: string = created.json().data.orderID
  t.equal(created.headers['location'], `/v1/exports/${orderID}`)
  t.same(created.json(), { status: 'success', data: { orderID } })

  const doc = await jobSettled(svc.runtime, orderID)
  t.equal(doc.status, 'done')
  const job = await get(svc, `/v1/exports/${orderID}`)
  t.equal(job.statusCode, 200)
  t.match(job.json().data, {
    orderID, type: 'receivables', status: 'done', attempts: 1, progress: { rows: 20, totalRows: 20, percent: 100 },
    parameters: { after: '2026-01-05T00:00:00Z', before: '2026-01-25T00:00:00Z' }, requestedAt: START, completedAt: START,
    expiresAt: '2026-03-17T09:00:00.000Z', file: { fileName: 'receivables-2026-03-10.csv', contentType: 'text/csv; charset=utf-8', rowCount: 20 },
  })
  t.notOk('error' in job.json().data, 'no error on a done job')
  t.notOk('expiredAt' in job.json().data)

  const file = await get(svc, `/v1/exports/${orderID}/file`)
  t.equal(file.statusCode, 200)
  t.equal(file.headers['content-type'], 'text/csv; charset=utf-8')
  t.equal(file.headers['content-disposition'], 'attachment; filename="receivables-2026-03-10.csv"')
  const lines = file.body.split('\r\n')
  t.equal(lines[0], 'id,amount,due_date,note,created_at,paid')
  t.match(lines[1], /^[0-9a-f]{8}-4,1004\.50,2026-01-05,/)
  t.equal(file.rawPayload.length, job.json().data.file.size)

  const history = []
  for await (const event of svc.runtime.history(`export-${orderID}`)) history.push(event.type)
  t.same(history, ['ExportRequested', 'ExportStarted', 'ExportProgressed', 'ExportProgressed', 'ExportProgressed', 'ExportCompleted'],
    'progress events: the count ahead, then every EXPORTS_PROGRESS_EVERY_ROWS rows')
})

t.test('the job list is paginated, filtered and newest first', async (t) => {
  const { svc, clock } = await setup(t, 3)
  const ids: string[] = []
  for (const type of ['receivables', 'payments', 'receivables']) {
    const created = await postExport(svc, { type })
    ids.push(created.json().data.orderID)
    await jobSettled(svc.runtime, created.json().data.orderID)
    clock.advance(60_000)
  }
  const all = await get(svc, '/v1/exports?limit=2')
  t.equal(all.statusCode, 200)
  t.same(all.json().data.map((j: { orderID: string }) => j.orderID), [ids[2], ids[1]])
  t.same(all.json().pagination, { current_page: 1, total_pages: 2, total_items: 3, items_per_page: 2 })
  const payments = await get(svc, '/v1/exports?type=payments')
  t.same(payments.json().data.map((j: { orderID: string }) => j.orderID), [ids[1]])
  t.equal(payments.json().data[0].progress.percent, 100)
  const window = await get(svc, `/v1/exports?requestedFrom=2026-03-10T09:00:30Z&requestedTo=2026-03-10T09:01:30Z&status=done`)
  t.same(window.json().data.map((j: { orderID: string }) => j.orderID), [ids[1]])
  for (const bad of ['status=lost', 'type=nope', 'limit=0', 'limit=101', 'requestedFrom=yesterday', 'extra=1']) {
    t.equal((await get(svc, `/v1/exports?${bad}`)).statusCode, 400, bad)
  }
})

t.test('jobs requested in the same millisecond are listed newest first too, page after page', async (t) => {
  const { svc } = await setup(t, 3)
  const ids: string[] = []
  for (let i = 0; i < 5; i++) ids.push((await postExport(svc, { type: 'receivables' })).json().data.orderID)
  for (const id of ids) await jobSettled(svc.runtime, id)
  const pages = [await get(svc, '/v1/exports?limit=2'), await get(svc, '/v1/exports?limit=2&page=2'), await get(svc, '/v1/exports?limit=2&page=3')]
  t.same(pages.flatMap((page) => page.json().data.map((j: { orderID: string; requestedAt: string }) => j.orderID)), [...ids].reverse())
  t.same(new Set(pages.flatMap((page) => page.json().data.map((j: { requestedAt: string }) => j.requestedAt))), new Set([START]), 'one requestedAt for all five')
})

t.test('a body of the wrong shape answers 400 BIND_ERROR', async (t) => {
  const { svc } = await setup(t)
  const post = (payload: string | undefined, contentType?: string, query = '') => svc.call({
    method: 'POST', url: `/v1/exports${query}`, token: svc.adminToken, organizationId: svc.organizationId,
    ...(contentType === undefined ? {} : { headers: { 'content-type': contentType } }), ...(payload === undefined ? {} : { payload }),
  })
  const cases: Array<[string, Awaited<ReturnType<typeof post>>]> = [
    ['query-style parameters, no body', await post(undefined, undefined, '?type=receivables&after=2026-01-01T00:00:00Z')],
    ['a form body', await post('type=receivables', 'application/x-www-form-urlencoded')],
    ['a text body', await post('{"type":"receivables"}', 'text/plain')],
    ['malformed JSON', await post('{"type":', 'application/json')],
    ['an empty JSON body', await post('', 'application/json')],
    ['JSON nested 65 levels deep', await post(`{"type":"receivables","filters":${'['.repeat(64)}${']'.repeat(64)}}`, 'application/json')],
    ['an unknown type', await postExport(svc, { type: 'everything' })],
    ['a field of the wrong type', await postExport(svc, { type: 'receivables', after: 20260101 })],
    ['a field of another type', await postExport(svc, { type: 'receivables', typeFile: 'credits' })],
    ['csv-a without typeFile', await postExport(svc, { type: 'csv-a' })],
    ['payments with a malformed filter', await postExport(svc, { type: 'payments', filters: { minAmount: 'ten' } })],
    ['reports without columns', await postExport(svc, { type: 'reports' })],
    ['a period end in the year 10000 in UTC', await postExport(svc, { type: 'receivables', after: '2026-01-01T00:00:00Z', before: '9999-12-31T23:30:00-01:00' })],
    ['a period that ends before it starts', await postExport(svc, { type: 'receivables', after: '2026-02-01T00:00:00Z', before: '2026-01-01T00:00:00Z' })],
    ['a period that ends as it starts, in another offset', await postExport(svc, { type: 'installments', after: '2026-02-01T00:00:00Z', before: '2026-01-31T19:00:00-05:00' })],
    ['a dry run of an empty period', await postExport(svc, { type: 'reports', columns: ['credits.state'], after: '2026-02-01T00:00:00Z', before: '2026-01-01T00:00:00Z' }, { url: '/v1/exports?dryRun=true' })],
  ]
  for (const [name, response] of cases) {
    t.equal(response.statusCode, 400, name)
    t.equal(response.json().status, 'fail', name)
    t.equal(response.json().data.code, 'BIND_ERROR', name)
  }
  t.same(cases[7]?.[1].json().data.errors, [{ field: 'body.after', message: 'must be string' }], 'the bad field is named')
  t.same(cases[5]?.[1].json().data.errors, [{ field: 'body', message: 'the JSON body nests deeper than 64 levels' }])
  t.same(cases[12]?.[1].json().data.errors, [{ field: 'body.before', message: 'must match format "date-time"' }], 'a time past 9999 in UTC would sort below every real time')
  t.same(cases[14]?.[1].json().data.errors, [{ field: 'body.after', message: 'must be earlier than body.before (2026-01-31T19:00:00-05:00): the period [after, before) would be empty' }])
  t.same(await svc.runtime.queries.exportJobs.list({ organizationId: svc.organizationId, types: ['receivables', 'payments', 'csv-a', 'reports'], offset: 0, limit: 10 }),
    { items: [], total: 0 }, 'no job was created')
})

t.test('an unknown or missing export type is one error on body.type, naming the types', async (t) => {
  const { svc } = await setup(t)
  const types = exportTypes.join(', ')
  for (const [body, errors] of [
    [{ type: 'everything' }, [{ field: 'body.type', message: `must be one of ${types}` }]],
    [{ type: 7, after: '2026-01-01T00:00:00Z' }, [{ field: 'body.type', message: `must be one of ${types}` }]],
    [{ after: '2026-01-01T00:00:00Z' }, [{ field: 'body.type', message: 'is required' }]],
  ] as const) {
    const response = await postExport(svc, body)
    t.equal(response.statusCode, 400, JSON.stringify(body))
    t.same([response.json().data.code, response.json().data.errors], ['BIND_ERROR', errors], JSON.stringify(body))
  }
  t.same(await svc.runtime.queries.exportJobs.list({ organizationId: svc.organizationId, types: [...exportTypes], offset: 0, limit: 10 }), { items: [], total: 0 })
})

t.test('a type without a data set in this version answers 501 EXPORT_TYPE_UNAVAILABLE', async (t) => {
  const { svc } = await setup(t, 30, ['ledger-a'])
  const response = await postExport(svc, { type: 'ledger-a' })
  t.equal(response.statusCode, 501)
  t.match(response.json(), { status: 'fail', data: { code: 'EXPORT_TYPE_UNAVAILABLE', type: 'ledger-a' } })
  t.ok(response.json().data.availableTypes.includes('receivables'))
})

t.test('a failing data set fails its job with the reason; its file is not ready', async (t) => {
  const { svc } = await setup(t)
  const orderID = (await postExport(svc, { type: 'installments' })).json().data.orderID
  await jobSettled(svc.runtime, orderID)
  const job = await get(svc, `/v1/exports/${orderID}`)
  t.match(job.json().data, { status: 'failed', error: 'column amount: decimals must be decimal strings, never floats' })
  const file = await get(svc, `/v1/exports/${orderID}/file`)
  t.equal(file.statusCode, 409)
  t.match(file.json().data, { code: 'EXPORT_NOT_READY', status: 'failed' })
})

t.test('permissions follow the type: ReadExport plus the domain permission', async (t) => {
  const { svc } = await setup(t)
  const exportOnly = await memberToken(svc, svc.organizationId, ['ReadExport'])
  const receivables = await memberToken(svc, svc.organizationId, ['ReadExport', 'ReadReceivables'])
  const orders = await memberToken(svc, svc.organizationId, ['ReadExport', 'ReadOrder'])
  const debtors = await memberToken(svc, svc.organizationId, ['ReadExport', 'ReadChildEntity'])
  const reportsOnly = await memberToken(svc, svc.organizationId, ['ExportReports'])

  const refused = await postExport(svc, { type: 'receivables' }, { token: exportOnly })
  t.equal(refused.statusCode, 403)
  t.match(refused.json().data, { code: 'FORBIDDEN', permission: 'ReadReceivables' })
  t.equal((await postExport(svc, { type: 'receivables' }, { token: orders })).statusCode, 403)
  t.equal((await postExport(svc, { type: 'payments' }, { token: orders })).statusCode, 202)
  t.equal((await postExport(svc, { type: 'debtors' }, { token: debtors })).statusCode, 202)
  t.equal((await postExport(svc, { type: 'receivables' }, { token: reportsOnly })).statusCode, 403, 'ExportReports is not ReadExport')
  const mine = await postExport(svc, { type: 'receivables' }, { token: receivables })
  t.equal(mine.statusCode, 202)
  const orderID = mine.json().data.orderID
  await jobSettled(svc.runtime, orderID)

  t.equal((await get(svc, `/v1/exports/${orderID}`, orders)).statusCode, 403, 'a job of a type the caller may not export')
  t.equal((await get(svc, `/v1/exports/${orderID}/file`, orders)).statusCode, 403)
  t.equal((await get(svc, `/v1/exports/${orderID}/file`, receivables)).statusCode, 200)
  const listed = await get(svc, '/v1/exports', orders)
  t.same(listed.json().data.map((j: { type: string }) => j.type), ['payments'], 'the list shows only types the caller may export')
  t.equal((await get(svc, '/v1/exports?type=receivables', orders)).statusCode, 403)
  t.equal((await get(svc, '/v1/exports', await memberToken(svc, svc.organizationId, ['ReadCredit']))).statusCode, 403)
})

t.test('jobs and files of another organization are 404', async (t) => {
  const { svc } = await setup(t)
  const other = await createOrganization(svc, 'Other lender')
  const outsider = await memberToken(svc, other, ['ReadExport', 'ReadReceivables'])
  const orderID = (await postExport(svc, { type: 'receivables' })).json().data.orderID
  const doc = await jobSettled(svc.runtime, orderID)
  t.equal((await get(svc, `/v1/exports/${orderID}`, outsider, other)).statusCode, 404)
  t.equal((await get(svc, `/v1/exports/${orderID}/file`, outsider, other)).statusCode, 404)
  t.same((await get(svc, '/v1/exports', outsider, other)).json().data, [])
  t.equal((await get(svc, `/v1/exports/${orderID}`, outsider)).statusCode, 403, 'naming the other organization is refused')
  t.equal((await get(svc, `/v1/exports/${doc.fileId ?? ''}/file`)).statusCode, 404, 'a file identifier is not an orderID')
  t.equal((await get(svc, `/v1/exports/${doc.fileId ?? ''}`)).statusCode, 404)
})

t.test('after the retention period the file answers 410 and its content is deleted', async (t) => {
  const { svc, clock } = await setup(t)
  const orderID = (await postExport(svc, { type: 'receivables' })).json().data.orderID
  const doc = await jobSettled(svc.runtime, orderID)
  clock.set('2026-03-17T08:59:59.000Z')
  // Tokens live an hour on the moved clock: get one valid now.
  const token = await svc.clientToken(svc.config.adminClientId ?? '', svc.config.adminClientSecret ?? '')
  t.equal((await get(svc, `/v1/exports/${orderID}/file`, token)).statusCode, 200, 'still served just before the end of the 7 days')
  clock.set('2026-03-17T09:00:00.000Z')
  const gone = await get(svc, `/v1/exports/${orderID}/file`, token)
  t.equal(gone.statusCode, 410)
  t.same(gone.json(), { status: 'fail', data: {
    code: 'EXPORT_EXPIRED', message: `the file of export ${orderID} expired at 2026-03-17T09:00:00.000Z; create the export again`,
    expiredAt: '2026-03-17T09:00:00.000Z',
  } })
  t.equal((await get(svc, `/v1/exports/${orderID}`, token)).json().data.expiredAt, '2026-03-17T09:00:00.000Z')

  clock.set('2026-03-17T09:10:00.000Z')
  const deleted = jobEvent(svc.runtime, orderID, 'ExportFileDeleted')
  await svc.runtime.scheduler.runNow('exportExpiry')
  await deleted
  t.equal(await svc.runtime.files.stat(doc.fileId ?? ''), null, 'the content is gone')
  const job = await get(svc, `/v1/exports/${orderID}`, token)
  t.match(job.json().data, { status: 'done', expiredAt: '2026-03-17T09:00:00.000Z' }, 'the moment the retention ended')
  t.equal((await get(svc, `/v1/exports/${orderID}/file`, token)).statusCode, 410)
})

t.test('retention is configurable', async (t) => {
  const clock = new ManualClock(START)
  const svc = await createTestApp(t, {
    clock, config: { exportsRetentionDays: 1 }, beforeStart: (runtime) => runtime.exports.dataSets.register(fixtureDataSet('receivables', 1)),
  })
  const orderID = (await postExport(svc, { type: 'receivables' })).json().data.orderID
  await jobSettled(svc.runtime, orderID)
  t.equal((await get(svc, `/v1/exports/${orderID}`)).json().data.expiresAt, '2026-03-11T09:00:00.000Z')
})

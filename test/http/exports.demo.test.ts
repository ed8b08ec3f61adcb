import t from 'tap'
import { loadDemo, type DemoState } from '../../src/demo/index.js'
import { exportTypeInfo, exportTypes } from '../../src/exports/catalogue.js'
import { blobKinds } from '../../src/exports/blobs.js'
import { exportBlobJobName } from '../../src/processes/exportJobs.js'
import type { Runtime } from '../../src/runtime.js'
import { ManualClock } from '../../src/shared/clock.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { exportFile } from '../helpers/exportFiles.js'
import { jobSettled, postExport } from '../helpers/exports.js'

/** The product's data sets through the HTTP routes and the export runner, over the demo, with the process managers running. */

const LOADED = '2026-03-10T12:00:00.000Z'
const NOW = '2026-03-10T13:00:00.000Z'

let svc: TestApp
let demo: DemoState
let clock: ManualClock

/** Resolves once the check holds, re-checking on every event the live hub publishes. */
const until = async (runtime: Runtime, check: () => Promise<boolean>): Promise<void> => {
  let subscription: { unsubscribe(): void } | undefined
  const reached = new Promise<void>((resolve) => {
    subscription = runtime.hub.events$.subscribe(() => void check().then((ok) => ok && resolve()))
  })
  try {
    if (!(await check())) await reached
  } finally {
    subscription?.unsubscribe()
  }
}

t.before(async () => {
  clock = new ManualClock(LOADED)
  svc = await createTestApp(t, { clock })
  demo = await loadDemo(svc.runtime)
  // The payment flow hands the demo's sandbox order to its provider: wait for it, so both sides of a comparison see the same orders.
  const sandboxOrder = async () => {
    for await (const order of svc.runtime.queries.paymentOrders.stream(demo.organizationId, { provider: 'sandbox' })) return order.status === 'processing'
    return false
  }
  await until(svc.runtime, sandboxOrder)
  clock.set(NOW)
})

const call = (url: string, token = svc.adminToken) => svc.call({ method: 'GET', url, token, organizationId: demo.organizationId })
const post = (body: object, url?: string) => postExport(svc, body, { organizationId: demo.organizationId, ...(url === undefined ? {} : { url }) })

/** A body for each legacy export route and the query string that says the same. */
const legacyCases = (): Array<{ type: string; body: object; query: string }> => {
  const filters = { status: ['completed'], debtorId: demo.ids['profile.ana'] }
  const special: Record<string, { body: object; query: string }> = {
    'payments': { body: { filters }, query: `?filters=${encodeURIComponent(JSON.stringify(filters))}` },
    'csv-a': { body: { typeFile: 'installments', after: '2025-12-01T00:00:00Z' }, query: '?typeFile=installments&after=2025-12-01T00:00:00Z' },
    'receivables-cutoff': { body: { before: '2026-02-01T00:00:00Z' }, query: '?before=2026-02-01T00:00:00Z' },
    'installments-cutoff': { body: {}, query: '' },
    'debtors': { body: { after: '2026-03-01T00:00:00Z' }, query: '?after=2026-03-01T00:00:00Z' },
  }
  const period = { body: { after: '2025-11-01T00:00:00Z', before: '2026-03-10T00:00:00Z' }, query: '?after=2025-11-01T00:00:00Z&before=2026-03-10T00:00:00Z' }
  return exportTypes.filter((type) => exportTypeInfo[type].legacyPath !== null).map((type) => ({ type, ...(special[type] ?? period) }))
}

t.test('every legacy export route answers, inline, the very bytes and headers of its canonical job\'s file', async (t) => {
  const cases = legacyCases()
  t.equal(cases.length, 18)
  for (const { type, body, query } of cases) {
    const created = await post({ type, ...body })
    t.equal(created.statusCode, 202, type)
    const job = await jobSettled(svc.runtime, created.json().data.orderID)
    t.equal(job.status, 'done', `${type}: ${job.error ?? ''}`)
    const canonical = await call(`/v1/exports/${job._id}/file`)
    const legacy = await call(`/v1${exportTypeInfo[type as keyof typeof exportTypeInfo].legacyPath ?? ''}${query}`)
    t.equal(legacy.statusCode, 200, type)
    t.ok(legacy.rawPayload.equals(canonical.rawPayload), `${type}: identical bytes`)
    t.ok(canonical.body.split('\r\n').length > 2, `${type}: a header and rows`)
    t.equal(legacy.headers['content-type'], canonical.headers['content-type'], `${type}: Content-Type`)
    t.equal(legacy.headers['content-disposition'], canonical.headers['content-disposition'], `${type}: Content-Disposition`)
    t.equal(job.rowCount, canonical.body.split('\r\n').length - 2, `${type}: the job counted its rows`)
    if (job.totalRows !== null) t.equal(job.totalRows, job.rowCount, `${type}: the count ahead was right`)
  }
})

t.test('reports over HTTP: sources, dry runs that count what the job writes, and columns that do not combine', async (t) => {
  const sources = (await call('/v1/exports/sources?type=reports')).json().data.sources
  t.same(sources.map((s: { name: string }) => s.name), ['creditLines', 'credits', 'debtors', 'installments', 'payments'])
  t.match(sources.find((s: { name: string }) => s.name === 'credits').columns, [{ name: 'id', type: 'string' }, { name: 'state', type: 'string' }])
  const body = { type: 'reports', format: 'consolidated', columns: ['payments.id', 'payments.amount', 'credits.state', 'debtors.name'], filters: { 'payments.status': ['completed', 'pending'] } }
  const estimate = await post(body, '/v1/exports?dryRun=true')
  t.same(estimate.json(), { itemCount: 7, overflowed: false, softWarn: false }, 'six completed orders and one pending (the sandbox one is processing)')
  const job = await jobSettled(svc.runtime, (await post(body)).json().data.orderID)
  t.match(job, { status: 'done', rowCount: 7 })
  const file = await call(`/v1/exports/${job._id}/file`)
  t.equal(file.body, (await exportFile(svc.runtime, demo.organizationId, body, job.requestedAt)).text, 'the file is the data set\'s')
  const mixed = await post({ type: 'reports', columns: ['payments.id', 'installments.id'] })
  t.equal(mixed.statusCode, 400)
  t.match(mixed.json().data, { code: 'BIND_ERROR', errors: [{ field: 'body.columns', message: /installments and payments/ }] })
  const unrelated = await post({ type: 'reports', columns: ['debtors.name'], filters: { 'creditLines.currency': 'COP' } }, '/v1/exports?dryRun=true')
  t.equal(unrelated.statusCode, 400, 'debtors and credit lines relate only through credits')
})

t.test('blobs: 404 until made; then the portfolio at the end of the day and of the month, and the day\'s logs', async (t) => {
  for (const kind of blobKinds) t.equal((await call(`/v1/exports/blobs/${kind}`)).statusCode, 404, `${kind} before any is made`)
  const send = await svc.call({ method: 'POST', url: '/v1/webhook-test', token: svc.adminToken, organizationId: demo.organizationId, payload: { url: 'http://127.0.0.1:9/erp?api_key=KEY-123#top', requestBody: '{}' } })
  t.equal(send.statusCode, 200, 'a test send (refused: a private address) is logged')
  clock.set('2026-03-11T00:30:00.000Z')
  const token = await svc.clientToken(svc.config.adminClientId ?? '', svc.config.adminClientSecret ?? '')
  for (const kind of blobKinds) await svc.runtime.scheduler.runNow(exportBlobJobName(kind))

  const daily = await call('/v1/exports/blobs/daily', token)
  t.equal(daily.headers['content-disposition'], 'attachment; filename="daily-2026-03-10.csv"')
  const dailyRows = daily.body.trim().split('\r\n')
  t.equal(dailyRows[0], (await exportFile(svc.runtime, demo.organizationId, { type: 'receivables-cutoff' })).header.join(','), 'the receivables-cutoff columns')
  t.equal(dailyRows.length, 3, 'the two credits owed at midnight')
  t.ok(dailyRows.slice(1).every((row) => row.startsWith('2026-03-10,')))
  t.match(dailyRows.find((row) => row.includes(demo.ids['credit.ana-desembolsado'] ?? '-')), /,2026-02-05,33,B,/, 'arrears counted to the day the file covers: due 2026-02-05, 33 days late on 2026-03-10')

  const monthly = await call('/v1/exports/blobs/monthly', token)
  t.equal(monthly.headers['content-disposition'], 'attachment; filename="monthly-2026-02.csv"')
  const monthlyRows = monthly.body.trim().split('\r\n')
  t.match(monthlyRows[0], /^month,credit_id,.*,opening_balance,.*,closing_balance,.*,state_at_close,balance,overdue_total,days_past_due,risk_category$/)
  t.equal(monthlyRows.length, 4, 'the three credits owed something in February')
  t.match(monthlyRows.find((row) => row.includes(demo.ids['credit.caribe-pagado'] ?? '-')), /^2026-02,.*,13849800\.11,0\.00,13849800\.11,207747\.00,0\.00,0\.00,0\.00,1,.*,Pagado,0\.00,/)

  const logs = await call('/v1/exports/blobs/logs', token)
  const logRows = logs.body.trim().split('\r\n')
  t.equal(logRows[0], 'log,id,at,action,subject_id,related_id,actor_id,outcome,http_method,url,http_status,duration_ms,error_code,error_message,reason,notification_status')
  t.match(logRows[1], /^webhook_send,[0-9a-f-]{36},2026-03-10T13:00:00\.000Z,webhook\.test,,,,failed,POST,http:\/\/127\.0\.0\.1:9\/erp\?…,,\d*,DESTINATION_REFUSED,/)
  t.notMatch(logs.body, /KEY-123|#top/, 'the URL\'s query and fragment stay in the send log, behind ReadWebhook + ReadCredit')
  t.match(logRows[2], /^signature_audit,[0-9a-f-]{36},2026-03-10T12:00:00\.000Z,signature\.signature-file-deleted,.*,pending_file_upload,,,,,,,given,\w+$/)
  t.notMatch(logs.body, /does not match/, 'the reason\'s text stays in the signature\'s audit, behind ReadDocument')
  t.equal(logRows.length, 3)

  for (const kind of blobKinds) {
    const legacy = await call(`/v1/export/${kind}`, token)
    t.ok(legacy.rawPayload.equals((await call(`/v1/exports/blobs/${kind}`, token)).rawPayload), `legacy /export/${kind} serves the same file`)
  }
})

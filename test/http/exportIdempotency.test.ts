import t from 'tap'
import { keyedExportId } from '../../src/commands/export.js'
import { ManualClock } from '../../src/shared/clock.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { blockingDataSet, createOrganization, fixtureDataSet, jobSettled, memberToken, reportsDataSet } from '../helpers/exports.js'
import { streamEventTypes } from '../helpers/streams.js'
import { refusesMalformedKeys } from '../helpers/idempotency.js'

const report = { type: 'reports', format: 'consolidated', columns: ['credits.id', 'credits.principal'] }
const receivables = { type: 'receivables', after: '2026-01-05T00:00:00Z', before: '2026-01-25T00:00:00Z' }

const setup = async (t: Parameters<typeof createTestApp>[0], options: { blockingReports?: boolean; config?: object } = {}) => {
  const clock = new ManualClock('2026-03-10T09:00:00.000Z')
  return createTestApp(t, {
    clock,
    config: { exportsReportsMaxConcurrent: 1, exportsReportsMaxPerHour: 100, ...options.config },
    beforeStart: (runtime) => {
      runtime.exports.dataSets.register(fixtureDataSet('receivables', 30))
      runtime.exports.dataSets.register(fixtureDataSet('payments', 30, { countable: false }))
      runtime.exports.dataSets.register(options.blockingReports === true ? blockingDataSet('reports') : reportsDataSet(3))
    },
  })
}

const exportsOf = (svc: TestApp, organizationId = svc.organizationId, token = svc.adminToken) => ({
  post: (key: string | undefined, payload: object, query = '') => svc.call({
    method: 'POST', url: `/v1/exports${query}`, token, organizationId, payload, ...(key === undefined ? {} : { headers: { 'idempotency-key': key } }),
  }),
  count: async (): Promise<number> => (await svc.call({ method: 'GET', url: '/v1/exports', token, organizationId })).json().data.length,
})

t.test('an export requested with an Idempotency-Key: 202 first, 200 with the same job when sent again, whatever it has become; 409 for another request', async (t) => {
  const svc = await setup(t)
  const api = exportsOf(svc)
  const first = await api.post('month-end', receivables)
  t.equal(first.statusCode, 202)
  const orderID: string = first.json().data.orderID
  t.equal(orderID, keyedExportId(svc.organizationId, 'month-end'), 'the id derives from the organization and the Key')
  t.equal(first.headers['location'], `/v1/exports/${orderID}`)

  const again = await api.post('month-end', { before: '2026-01-24T19:00:00-05:00', after: '2026-01-05T00:00:00.000Z', type: 'receivables' })
  t.equal(again.statusCode, 200, 'the same fields in another order, the same instants written otherwise: the same request')
  t.same(again.json(), { status: 'success', data: { orderID } })
  t.equal(again.headers['location'], `/v1/exports/${orderID}`)

  t.equal((await jobSettled(svc.runtime, orderID)).status, 'done')
  const afterRun = await api.post('month-end', receivables)
  t.equal(afterRun.statusCode, 200, 'the job done since: still the same job, not a second run')
  t.equal(afterRun.json().data.orderID, orderID)

  for (const [what, body] of [
    ['another period', { ...receivables, before: '2026-01-26T00:00:00Z' }],
    ['no period', { type: 'receivables' }],
    ['another type', report],
  ] as const) {
    const reused = await api.post('month-end', body)
    t.equal(reused.statusCode, 409, what)
    t.same(reused.json().data, {
      code: 'IDEMPOTENCY_KEY_REUSED', message: 'this Idempotency-Key was already used for a different export request', key: 'month-end', orderID,
    })
  }
  t.same(await streamEventTypes(svc, 'export', orderID), ['ExportRequested', 'ExportStarted', 'ExportProgressed', 'ExportCompleted'], 'one job, run once')
  t.equal(await api.count(), 1)

  const reader = await memberToken(svc, svc.organizationId, ['ReadExport'])
  t.equal((await exportsOf(svc, svc.organizationId, reader).post('month-end', receivables)).statusCode, 403, 'a caller who may not export the type learns nothing of the Key')

  const boardPack = await api.post('board-pack', { type: 'reports', columns: ['credits.id'] })
  t.equal(boardPack.statusCode, 202)
  const receivablesReader = await memberToken(svc, svc.organizationId, ['ReadExport', 'ReadReceivables'])
  const unnamed = await exportsOf(svc, svc.organizationId, receivablesReader).post('board-pack', receivables)
  t.same(unnamed.json().data, {
    code: 'IDEMPOTENCY_KEY_REUSED', message: 'this Idempotency-Key was already used for a different export request', key: 'board-pack',
  }, 'the job is not named to a caller who may not read a reports job')
})

t.test('a payments request written otherwise on its retry (choices in another order, amounts respelt) is the same request', async (t) => {
  const svc = await setup(t)
  const api = exportsOf(svc)
  const first = await api.post('payments-q1', { type: 'payments', filters: { status: ['pending', 'failed'], minAmount: '100', maxAmount: '2500.5' } })
  t.equal(first.statusCode, 202)
  const again = await api.post('payments-q1', { type: 'payments', filters: { maxAmount: '2500.50', status: ['failed', 'pending'], minAmount: '100.00' } })
  t.equal(again.statusCode, 200)
  t.equal(again.json().data.orderID, first.json().data.orderID)
  t.equal((await api.post('payments-q1', { type: 'payments', filters: { status: ['pending'], minAmount: '100', maxAmount: '2500.5' } })).statusCode, 409, 'fewer choices')
})

t.test('a reports request sent again is answered, not counted against the cap; concurrent duplicates make one job', async (t) => {
  const svc = await setup(t, { blockingReports: true })
  const api = exportsOf(svc)
  const racing = await Promise.all(Array.from({ length: 6 }, () => api.post('nightly', report)))
  t.same(racing.map((r) => r.statusCode).sort(), [200, 200, 200, 200, 200, 202], 'one job, and no 429 for its duplicates at a cap of one')
  t.same([...new Set(racing.map((r) => r.json().data.orderID))], [keyedExportId(svc.organizationId, 'nightly')])
  t.equal((await api.post('nightly', report)).statusCode, 200, 'the job still running: its retry is answered')
  const another = await api.post('other', report)
  t.equal(another.statusCode, 429, 'another report is over the cap')
  t.equal(another.json().data.code, 'EXPORT_RATE_LIMITED')
  t.equal((await api.post('other', report)).statusCode, 429, 'a refused request leaves its Key free: refused again by the cap, not by the Key')
  t.equal(await api.count(), 1)
})

t.test('the legacy POST /reports/export takes the Key as POST /v1/exports does, one Key space for both', async (t) => {
  const svc = await setup(t)
  const legacy = (key: string, payload: object) => svc.call({
    method: 'POST', url: '/v1/reports/export', token: svc.adminToken, organizationId: svc.organizationId, payload, headers: { 'idempotency-key': key },
  })
  const { type: _type, ...legacyReport } = report
  const first = await legacy('legacy-1', legacyReport)
  t.equal(first.statusCode, 202)
  const orderID: string = first.json().data.orderID
  t.equal(orderID, keyedExportId(svc.organizationId, 'legacy-1'))
  const again = await legacy('legacy-1', legacyReport)
  t.equal(again.statusCode, 200)
  t.same(again.json(), { status: 'success', data: { orderID } })
  t.equal(again.headers['location'], `/v1/exports/${orderID}`)
  t.equal((await exportsOf(svc).post('legacy-1', report)).statusCode, 200, 'the same request through the new route')
  t.equal((await legacy('legacy-1', { ...legacyReport, columns: ['credits.id'] })).statusCode, 409)
  t.equal(await exportsOf(svc).count(), 1)
})

t.test('Keys are per organization; without one every request makes a job; refused requests and dry runs leave the Key free', async (t) => {
  const svc = await setup(t)
  const api = exportsOf(svc)
  t.equal((await api.post('k1', receivables)).statusCode, 202)
  const other = await createOrganization(svc, 'Otra S.A.')
  const theirs = await exportsOf(svc, other).post('k1', receivables)
  t.equal(theirs.statusCode, 202)
  t.equal(theirs.json().data.orderID, keyedExportId(other, 'k1'))

  const plain = await Promise.all([api.post(undefined, receivables), api.post(undefined, receivables)])
  t.same(plain.map((r) => r.statusCode), [202, 202])
  t.not(plain[0]?.json().data.orderID, plain[1]?.json().data.orderID)

  await refusesMalformedKeys(t, (key) => api.post(key, receivables))
  const bad = await api.post('k2', { ...receivables, after: '2026-02-01T00:00:00Z' })
  t.equal(bad.statusCode, 400, 'a period ending before it starts')
  t.equal(bad.json().data.code, 'BIND_ERROR')
  const dryRun = await api.post('k3', report, '?dryRun=true')
  t.equal(dryRun.statusCode, 200)
  t.same(Object.keys(dryRun.json()).sort(), ['itemCount', 'overflowed', 'softWarn'], 'an estimate, no job')
  t.equal((await api.post('k2', receivables)).statusCode, 202, 'the Key of a refused request makes the job')
  t.equal((await api.post('k3', receivables)).statusCode, 202, 'the Key of a dry run makes the job')
  t.equal(await api.count(), 5)
})

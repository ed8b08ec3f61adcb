import t from 'tap'
import { blobPeriod } from '../../src/exports/blobs.js'
import { exportBlobJobName } from '../../src/processes/exportJobs.js'
import { ManualClock } from '../../src/shared/clock.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { createOrganization, fixtureBlobProducer, memberToken } from '../helpers/exports.js'

const get = (svc: TestApp, url: string, token: string, organizationId = svc.organizationId) => svc.call({ method: 'GET', url, token, organizationId })

t.test('blob periods: the previous UTC day, or the previous UTC month', async (t) => {
  t.same(blobPeriod('daily', new Date('2026-03-01T00:05:00Z')), { label: '2026-02-28', start: '2026-02-28T00:00:00.000Z', end: '2026-03-01T00:00:00.000Z' })
  t.same(blobPeriod('monthly', new Date('2026-01-01T00:25:00Z')), { label: '2025-12', start: '2025-12-01T00:00:00.000Z', end: '2026-01-01T00:00:00.000Z' })
})

t.test('a blob answers 404 until its job has produced it, then streams the latest file of the organization', async (t) => {
  const clock = new ManualClock('2026-03-10T00:05:00.000Z')
  const svc = await createTestApp(t, { clock, beforeStart: (runtime) => runtime.exports.blobs.register(fixtureBlobProducer('daily')) })
  const other = await createOrganization(svc, 'Other lender')
  const reader = await memberToken(svc, svc.organizationId, ['ReadExport', 'ReadReceivables'])
  const noReceivables = await memberToken(svc, svc.organizationId, ['ReadExport'])
  t.equal((await get(svc, '/v1/exports/blobs/daily', noReceivables)).statusCode, 403, 'blobs need ReadReceivables')

  const none = await get(svc, '/v1/exports/blobs/daily', reader)
  t.equal(none.statusCode, 404)
  t.match(none.json().data, { code: 'NOT_FOUND', kind: 'daily' })
  t.equal((await get(svc, '/v1/exports/blobs/monthly', reader)).statusCode, 404, 'a kind without a producer is never built')

  await svc.runtime.scheduler.runNow(exportBlobJobName('daily'))
  const first = await get(svc, '/v1/exports/blobs/daily', reader)
  t.equal(first.statusCode, 200)
  t.equal(first.headers['content-type'], 'text/csv; charset=utf-8')
  t.equal(first.headers['content-disposition'], 'attachment; filename="daily-2026-03-09.csv"')
  t.equal(first.body, `organization,period\r\n${svc.organizationId},2026-03-09\r\n`)
  const legacy = await get(svc, '/v1/export/daily', reader)
  t.ok(legacy.rawPayload.equals(first.rawPayload), 'the legacy route serves the same file')
  t.equal(legacy.headers['deprecation'], 'true')

  const theirs = await get(svc, '/v1/exports/blobs/daily', svc.adminToken, other)
  t.equal(theirs.body, `organization,period\r\n${other},2026-03-09\r\n`, 'each organization has its own file')

  const replaced = (await svc.runtime.queries.exportBlobs.current(svc.organizationId, 'daily'))?.file.fileId ?? ''
  await svc.runtime.scheduler.runNow(exportBlobJobName('daily'))
  t.equal((await svc.runtime.queries.exportBlobs.current(svc.organizationId, 'daily'))?.file.fileId, replaced, 'produced once per period')
  clock.set('2026-03-11T00:05:00.000Z')
  await svc.runtime.scheduler.runNow(exportBlobJobName('daily'))
  const token = await svc.clientToken(svc.config.adminClientId ?? '', svc.config.adminClientSecret ?? '')
  t.match((await get(svc, '/v1/exports/blobs/daily', token)).body, /2026-03-10\r\n$/, 'the next day replaces it')

  t.equal((await get(svc, '/v1/exports/blobs/weekly', token)).statusCode, 400)
})

t.test('the blob jobs skip a deactivated organization and produce its file again once it is activated', async (t) => {
  const clock = new ManualClock('2026-03-10T00:05:00.000Z')
  const svc = await createTestApp(t, { clock, beforeStart: (runtime) => runtime.exports.blobs.register(fixtureBlobProducer('daily')) })
  const paused = await createOrganization(svc, 'Paused lender')
  const change = (action: 'deactivate' | 'activate') => svc.call({
    method: 'POST', url: `/v1/organizations/${paused}/${action}`, token: svc.adminToken, ...(action === 'deactivate' ? { payload: { reason: 'audit' } } : {}),
  })
  t.equal((await change('deactivate')).statusCode, 200)
  await svc.runtime.scheduler.runNow(exportBlobJobName('daily'))
  t.equal(await svc.runtime.queries.exportBlobs.current(paused, 'daily'), null, 'nothing made for the inactive organization')
  t.not(await svc.runtime.queries.exportBlobs.current(svc.organizationId, 'daily'), null, 'the active one got its file')

  t.equal((await change('activate')).statusCode, 200)
  clock.set('2026-03-11T00:05:00.000Z')
  await svc.runtime.scheduler.runNow(exportBlobJobName('daily'))
  const token = await svc.clientToken(svc.config.adminClientId ?? '', svc.config.adminClientSecret ?? '')
  t.match((await get(svc, '/v1/exports/blobs/daily', token, paused)).body, /2026-03-10\r\n$/, 'the next period after activation')
})

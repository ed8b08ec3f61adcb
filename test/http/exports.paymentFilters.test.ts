import t from 'tap'
import { ManualClock } from '../../src/shared/clock.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { fixtureDataSet, postExport } from '../helpers/exports.js'

const START = '2026-03-10T09:00:00.000Z'

const setup = async (t: Parameters<typeof createTestApp>[0]) => createTestApp(t, {
  clock: new ManualClock(START),
  beforeStart: (runtime) => runtime.exports.dataSets.register(fixtureDataSet('payments', 5, { countable: false })),
})

const jobCount = async (svc: TestApp) => (await svc.runtime.queries.exportJobs.list({ organizationId: svc.organizationId, types: ['payments'], offset: 0, limit: 10 })).total

const legacyGet = (svc: TestApp, filters: object) => svc.call({
  method: 'GET', url: `/v1/export/payments?filters=${encodeURIComponent(JSON.stringify(filters))}`, token: svc.adminToken, organizationId: svc.organizationId,
})

t.test('a payments export whose minAmount is above its maxAmount is refused on minAmount, as an empty period is, and creates no job', async (t) => {
  const svc = await setup(t)
  for (const [minAmount, maxAmount] of [['100', '1'], ['10', '9'], ['100', '99.9999'], ['0.0001', '0']]) {
    const head = await svc.runtime.eventStore.headPosition()
    const refused = await postExport(svc, { type: 'payments', filters: { minAmount, maxAmount } })
    t.equal(refused.statusCode, 400, `${minAmount} > ${maxAmount}`)
    t.same(refused.json().data, {
      code: 'BIND_ERROR',
      message: `body.filters.minAmount: must not be greater than body.filters.maxAmount (${maxAmount}): no amount would match`,
      errors: [{ field: 'body.filters.minAmount', message: `must not be greater than body.filters.maxAmount (${maxAmount}): no amount would match` }],
    }, `${minAmount} > ${maxAmount}, compared as amounts`)
    t.equal(await svc.runtime.eventStore.headPosition(), head, `${minAmount} > ${maxAmount}: nothing appended`)
  }
  const both = await postExport(svc, { type: 'payments', after: '2026-02-01T00:00:00Z', before: '2026-01-01T00:00:00Z', filters: { minAmount: '2', maxAmount: '1' } })
  t.same(both.json().data.errors.map((e: { field: string }) => e.field), ['body.after', 'body.filters.minAmount'], 'each empty range is named')
  t.equal(await jobCount(svc), 0, 'no job was created')

  for (const [minAmount, maxAmount] of [['100', '100.0000'], ['007.50', '7.5'], ['0', '999999999999999.9999']]) {
    const accepted = await postExport(svc, { type: 'payments', filters: { minAmount, maxAmount } })
    t.equal(accepted.statusCode, 202, `${minAmount} ≤ ${maxAmount}: both bounds are inclusive`)
  }
  t.equal((await postExport(svc, { type: 'payments', filters: { minAmount: '5' } })).statusCode, 202, 'one bound alone')
})

t.test('payments amount filters are written as every amount a request carries: no sign, at most 15 integer digits and 4 decimals', async (t) => {
  const svc = await setup(t)
  const bad = ['-0', '-1', '-1000000', '1'.repeat(16), '1.00001', '+1', '1e5', '1.', '.5', ' 1', '1,5', '0x10', '', '１２']
  for (const field of ['minAmount', 'maxAmount']) {
    for (const value of bad) {
      const head = await svc.runtime.eventStore.headPosition()
      const refused = await postExport(svc, { type: 'payments', filters: { [field]: value } })
      t.equal(refused.statusCode, 400, `${field}=${JSON.stringify(value)}`)
      t.equal(refused.json().data.code, 'BIND_ERROR')
      t.same(refused.json().data.errors.map((e: { field: string }) => e.field), [`body.filters.${field}`], `${field}=${JSON.stringify(value)} is named`)
      t.equal(await svc.runtime.eventStore.headPosition(), head, `${field}=${JSON.stringify(value)}: nothing appended`)
    }
    t.equal((await postExport(svc, { type: 'payments', filters: { [field]: 5 } })).statusCode, 400, `${field} as a JSON number`)
  }
  t.equal(await jobCount(svc), 0, 'no job was created')
  for (const value of ['0', '1', '0.5', '1500000.00', '999999999999999.9999', '0001.2500']) {
    t.equal((await postExport(svc, { type: 'payments', filters: { minAmount: value } })).statusCode, 202, `minAmount=${value}`)
  }
  const doc = (await svc.call({ method: 'GET', url: '/v1/openapi.json' })).json()
  const filters = doc.paths['/v1/exports'].post.requestBody.content['application/json'].schema.oneOf
    .find((branch: { title?: string }) => branch.title === 'payments').properties.filters.properties
  t.match(filters.minAmount, { type: 'string', pattern: '^[0-9]{1,15}(\\.[0-9]{1,4})?$' }, 'the OpenAPI document shows the money pattern')
  t.match(filters.maxAmount, { type: 'string', pattern: '^[0-9]{1,15}(\\.[0-9]{1,4})?$' })
})

t.test('a legacy GET payments export takes the same amount rule, naming the query\'s fields', async (t) => {
  const svc = await setup(t)
  const reversed = await legacyGet(svc, { minAmount: '100', maxAmount: '1' })
  t.equal(reversed.statusCode, 400)
  t.same(reversed.json().data.errors, [{ field: 'query.filters.minAmount', message: 'must not be greater than query.filters.maxAmount (1): no amount would match' }])
  for (const [field, value] of [['minAmount', '-1'], ['maxAmount', '1.00001'], ['maxAmount', '1'.repeat(16)], ['minAmount', '-0']]) {
    const refused = await legacyGet(svc, { [field as string]: value })
    t.equal(refused.statusCode, 400, `${field}=${value}`)
    t.same([refused.json().data.code, refused.json().data.errors.map((e: { field: string }) => e.field)], ['BIND_ERROR', [`query.filters.${field}`]], `${field}=${value}`)
  }
  const accepted = await legacyGet(svc, { minAmount: '1', maxAmount: '1' })
  t.equal(accepted.statusCode, 200, accepted.body)
  t.equal(await jobCount(svc), 0, 'a legacy GET export runs inline, with no job')
})

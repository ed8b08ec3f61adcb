import t from 'tap'
import { keyedCreditLineId } from '../../src/commands/creditLine.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { archiveWebhook, createOrganization, createWebhook, lineBody } from '../helpers/lending.js'
import { streamEventTypes } from '../helpers/streams.js'
import { oneCreatedOthersReturned, refusesMalformedKeys } from '../helpers/idempotency.js'

const linesOf = (svc: TestApp, organizationId = svc.organizationId) => ({
  post: (key: string | undefined, payload: object) => svc.call({
    method: 'POST', url: '/v1/credit-lines', token: svc.adminToken, organizationId, payload, ...(key === undefined ? {} : { headers: { 'idempotency-key': key } }),
  }),
  count: async (): Promise<number> => (await svc.call({ method: 'GET', url: '/v1/credit-lines', token: svc.adminToken, organizationId })).json().data.length,
})

t.test('a credit line created with an Idempotency-Key: 201 first, 200 with the line as it is now when sent again, 409 for another request', async (t) => {
  const svc = await createTestApp(t)
  const api = linesOf(svc)
  const webhook = await createWebhook(svc.runtime, svc.organizationId)
  const body = lineBody({ onOrderWebhooks: [webhook] })
  const first = await api.post('consumo-2026', body)
  t.equal(first.statusCode, 201)
  const line = first.json().data.creditLine
  t.equal(line.ID, keyedCreditLineId(svc.organizationId, 'consumo-2026'), 'the id derives from the organization and the Key')

  const again = await api.post('consumo-2026', body)
  t.equal(again.statusCode, 200)
  t.same(again.json(), first.json(), 'the same answer, the same line')
  const spelledOtherwise = await api.post('consumo-2026', {
    ...lineBody({ onOrderWebhooks: [webhook, webhook] }), principalMin: '500000', principalMax: '20000000.0', rate: '12.00', active: true,
  })
  t.equal(spelledOtherwise.statusCode, 200, 'amounts by value, a webhook named twice, a default spelled out: the same request')
  const second = await createWebhook(svc.runtime, svc.organizationId)
  const twoLinks = await api.post('two-links', lineBody({ onOrderWebhooks: [webhook, second] }))
  t.equal(twoLinks.statusCode, 201)
  t.equal((await api.post('two-links', lineBody({ onOrderWebhooks: [second, webhook] }))).statusCode, 200, 'links in another order: the same request')

  const patched = await svc.call({
    method: 'PATCH', url: `/v1/credit-lines/${line.ID}`, token: svc.adminToken, organizationId: svc.organizationId, payload: { name: 'Consumo 2026' },
  })
  t.equal(patched.statusCode, 200)
  await archiveWebhook(svc.runtime, svc.organizationId, webhook)
  const afterChange = await api.post('consumo-2026', body)
  t.equal(afterChange.statusCode, 200, 'its webhook archived since: the retry still gets the line, not a 400 for the link')
  t.equal(afterChange.json().data.creditLine.name, 'Consumo 2026', 'the line as it is now, not as the request made it')

  for (const [what, changed] of [
    ['another rate', lineBody({ onOrderWebhooks: [webhook], rate: '13' })],
    ['another maximum', lineBody({ onOrderWebhooks: [webhook], principalMax: '30000000.00' })],
    ['no webhook', lineBody()],
    ['created inactive', lineBody({ onOrderWebhooks: [webhook], active: false })],
  ] as const) {
    const reused = await api.post('consumo-2026', changed)
    t.equal(reused.statusCode, 409, what)
    t.same(reused.json().data, {
      code: 'IDEMPOTENCY_KEY_REUSED', message: 'this Idempotency-Key was already used for a different credit line creation request',
      key: 'consumo-2026', creditLineId: line.ID,
    })
  }
  t.same(await streamEventTypes(svc, 'creditLine', line.ID), ['CreditLineCreated', 'CreditLineUpdated'], 'one creation, and the change')
  t.equal(await api.count(), 2)
})

t.test('concurrent creations with one Key make one line; another organization\'s same Key is its own; no Key, a new line each time', async (t) => {
  const svc = await createTestApp(t)
  const api = linesOf(svc)
  const racing = await Promise.all(Array.from({ length: 6 }, () => api.post('race', lineBody())))
  oneCreatedOthersReturned(t, racing)
  t.same([...new Set(racing.map((r) => r.json().data.creditLine.ID))], [keyedCreditLineId(svc.organizationId, 'race')])
  t.same(await streamEventTypes(svc, 'creditLine', keyedCreditLineId(svc.organizationId, 'race')), ['CreditLineCreated'])

  const other = await createOrganization(svc, 'Otra S.A.')
  const theirs = await linesOf(svc, other).post('race', lineBody())
  t.equal(theirs.statusCode, 201)
  t.equal(theirs.json().data.creditLine.ID, keyedCreditLineId(other, 'race'))

  const plain = await Promise.all([api.post(undefined, lineBody()), api.post(undefined, lineBody())])
  t.same(plain.map((r) => r.statusCode), [201, 201])
  t.not(plain[0]?.json().data.creditLine.ID, plain[1]?.json().data.creditLine.ID)
  t.equal(await api.count(), 3)

  await refusesMalformedKeys(t, (key) => api.post(key, lineBody()))
  const refused = await api.post('bad-first', lineBody({ principalMin: '30000000.00' }))
  t.equal(refused.statusCode, 400, 'a minimum above the maximum')
  t.equal((await api.post('bad-first', lineBody())).statusCode, 201, 'a refused creation leaves its Key free')
  const foreignWebhook = await createWebhook(svc.runtime, other)
  t.equal((await api.post('bad-link', lineBody({ onDeliveredWebhooks: [foreignWebhook] }))).statusCode, 400, 'another organization\'s webhook')
  t.equal((await api.post('bad-link', lineBody())).statusCode, 201, 'a refused link leaves its Key free')
  const invalidAfterUse = await api.post('race', lineBody({ timeMin: 48 }))
  t.equal(invalidAfterUse.statusCode, 400, 'an invalid request is refused as invalid, whatever its Key names')
  const foreignConfiguration = await api.post('race', lineBody({ entityConfigID: '00000000-0000-4000-8000-000000000001' }))
  t.equal(foreignConfiguration.statusCode, 400, 'a configuration not the organization\'s is refused as invalid, whatever its Key names')
  t.same(foreignConfiguration.json().data.errors.map((e: { field: string }) => e.field), ['body.entityConfigID'])
})

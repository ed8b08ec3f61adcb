import t from 'tap'
import { keyedTaxId } from '../../src/commands/tax.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { createOrganization } from '../helpers/organizations.js'
import { streamEventTypes } from '../helpers/streams.js'
import { oneCreatedOthersReturned, refusesMalformedKeys } from '../helpers/idempotency.js'

const vat = { name: 'IVA', description: 'Impuesto al valor agregado', percentage: 19, type: 'VAT', applies_to: ['FEE', 'PAYMENT'], minimum_amount: 0 }

const taxesOf = (svc: TestApp, organizationId = svc.organizationId) => ({
  post: (key: string | undefined, payload: object) => svc.call({
    method: 'POST', url: '/v1/taxes', token: svc.adminToken, organizationId, payload, ...(key === undefined ? {} : { headers: { 'idempotency-key': key } }),
  }),
  count: async (): Promise<number> => (await svc.call({ method: 'GET', url: '/v1/taxes', token: svc.adminToken, organizationId })).json().data.length,
})

const eventTypes = (svc: TestApp, taxId: string) => streamEventTypes(svc, 'tax', taxId)

t.test('a tax created with an Idempotency-Key: 201 first, 200 with the tax as it is now when sent again, 409 for another request', async (t) => {
  const svc = await createTestApp(t)
  const api = taxesOf(svc)
  const first = await api.post('iva-2026', vat)
  t.equal(first.statusCode, 201)
  const tax = first.json().data
  t.equal(tax.id, keyedTaxId(svc.organizationId, 'iva-2026'), 'the id derives from the organization and the Key')

  const again = await api.post('iva-2026', vat)
  t.equal(again.statusCode, 200)
  t.same(again.json(), first.json(), 'the same answer, the same tax')
  const spelledOtherwise = await api.post('iva-2026', {
    name: 'IVA', description: 'Impuesto al valor agregado', percentage: 19.0, type: 'VAT', applies_to: ['PAYMENT', 'FEE'],
  })
  t.equal(spelledOtherwise.statusCode, 200, 'applies_to in another order, the default minimum left out: the same request')

  const deactivated = await svc.call({ method: 'PATCH', url: `/v1/taxes/${tax.id}`, token: svc.adminToken, organizationId: svc.organizationId, payload: { is_active: false } })
  t.equal(deactivated.statusCode, 200)
  const afterChange = await api.post('iva-2026', vat)
  t.equal(afterChange.statusCode, 200)
  t.equal(afterChange.json().data.is_active, false, 'the tax as it is now, not as the request made it')

  for (const [what, body] of [
    ['another percentage', { ...vat, percentage: 19.5 }],
    ['another base', { ...vat, applies_to: ['FEE'] }],
    ['created inactive', { ...vat, is_active: false }],
    ['another name', { ...vat, name: 'IVA 2026' }],
  ] as const) {
    const reused = await api.post('iva-2026', body)
    t.equal(reused.statusCode, 409, what)
    t.same(reused.json().data, {
      code: 'IDEMPOTENCY_KEY_REUSED', message: 'this Idempotency-Key was already used for a different tax creation request', key: 'iva-2026', taxId: tax.id,
    })
  }
  t.same(await eventTypes(svc, tax.id), ['TaxCreated', 'TaxDeactivated'], 'one creation, and the change')
  t.equal(await api.count(), 1)
})

t.test('concurrent creations with one Key make one tax; another organization\'s same Key is its own; no Key, a new tax each time', async (t) => {
  const svc = await createTestApp(t)
  const api = taxesOf(svc)
  const racing = await Promise.all(Array.from({ length: 6 }, () => api.post('ica-race', { ...vat, name: 'ICA', type: 'OTHER' })))
  oneCreatedOthersReturned(t, racing)
  t.same([...new Set(racing.map((r) => r.json().data.id))], [keyedTaxId(svc.organizationId, 'ica-race')])
  t.same(await eventTypes(svc, keyedTaxId(svc.organizationId, 'ica-race')), ['TaxCreated'])

  const other = (await createOrganization(svc, 'Otra S.A.')).id
  const theirs = await taxesOf(svc, other).post('ica-race', { ...vat, name: 'ICA', type: 'OTHER' })
  t.equal(theirs.statusCode, 201)
  t.equal(theirs.json().data.id, keyedTaxId(other, 'ica-race'))

  const plain = await Promise.all([api.post(undefined, vat), api.post(undefined, vat)])
  t.same(plain.map((r) => r.statusCode), [201, 201])
  t.not(plain[0]?.json().data.id, plain[1]?.json().data.id)
  t.equal(await api.count(), 3)

  await refusesMalformedKeys(t, (key) => api.post(key, vat))
  const refused = await api.post('bad-first', { ...vat, percentage: 19.12345 })
  t.equal(refused.statusCode, 400, 'five decimals')
  t.equal((await api.post('bad-first', vat)).statusCode, 201, 'a refused creation leaves its Key free')
})

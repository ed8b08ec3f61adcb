import t, { type Test } from 'tap'
import type { TaxApplied } from '../../src/events/tax.js'
import { newId } from '../../src/shared/ids.js'
import { createTestApp } from '../helpers/app.js'
import { createOrganization, memberToken } from '../helpers/organizations.js'

const vat = { name: 'IVA', description: 'Impuesto al valor agregado', percentage: 19, type: 'VAT', applies_to: ['FEE', 'PAYMENT'], minimum_amount: 0 }

const setup = async (t: Test) => {
  const svc = await createTestApp(t)
  const call = (options: { method: 'GET' | 'POST' | 'PATCH'; url: string; payload?: object; token?: string; organizationId?: string }) =>
    svc.call({ token: svc.adminToken, organizationId: svc.organizationId, ...options })
  const create = async (body: object, organizationId = svc.organizationId) => {
    const response = await call({ method: 'POST', url: '/v1/taxes', payload: body, organizationId })
    if (response.statusCode !== 201) throw new Error(response.body)
    const tax: { id: string } = response.json().data
    return tax.id
  }
  return { svc, call, create }
}

t.test('a tax is created with its own field names and listed exactly as the interface gives it', async (t) => {
  const { call } = await setup(t)
  const created = await call({ method: 'POST', url: '/v1/taxes', payload: vat })
  t.equal(created.statusCode, 201)
  const tax = created.json().data
  t.same(Object.keys(tax).sort(), ['applies_to', 'created_at', 'description', 'id', 'is_active', 'minimum_amount', 'name', 'percentage', 'type', 'updated_at', 'usage_count'])
  t.match(tax, { ...vat, is_active: true, usage_count: 0 })
  const list = await call({ method: 'GET', url: '/v1/taxes' })
  t.equal(list.statusCode, 200)
  t.same(list.json(), { status: 'success', data: [tax] })
  t.same((await call({ method: 'GET', url: `/v1/taxes/${tax.id}` })).json().data, tax)
})

t.test('percentages may be fractional and are kept exactly; defaults fill the rest', async (t) => {
  const { call } = await setup(t)
  for (const percentage of [0, 0.1, 0.414, 2.5, 100]) {
    const response = await call({ method: 'POST', url: '/v1/taxes', payload: { name: `p${percentage}`, percentage, type: 'OTHER', applies_to: ['CREDIT'] } })
    t.equal(response.statusCode, 201, `${percentage} accepted`)
    t.match(response.json().data, { percentage, description: '', is_active: true, minimum_amount: 0 })
  }
  const inactive = await call({ method: 'POST', url: '/v1/taxes', payload: { ...vat, is_active: false, minimum_amount: 1000000.5 } })
  t.match(inactive.json().data, { is_active: false, minimum_amount: 1000000.5 })
})

t.test('invalid taxes are refused field by field', async (t) => {
  const { call } = await setup(t)
  const refuse = async (payload: object, field: string) => {
    const response = await call({ method: 'POST', url: '/v1/taxes', payload })
    t.equal(response.statusCode, 400, JSON.stringify(payload))
    t.ok(response.json().data.errors.some((e: { field: string }) => e.field === field), `${field} named`)
  }
  await refuse({ ...vat, type: 'SALES' }, 'body.type')
  await refuse({ ...vat, applies_to: ['LOAN'] }, 'body.applies_to.0')
  await refuse({ ...vat, applies_to: [] }, 'body.applies_to')
  await refuse({ ...vat, applies_to: ['FEE', 'FEE'] }, 'body.applies_to')
  await refuse({ ...vat, percentage: -0.01 }, 'body.percentage')
  await refuse({ ...vat, percentage: 100.01 }, 'body.percentage')
  await refuse({ ...vat, percentage: 1.23456 }, 'body.percentage')
  await refuse({ ...vat, minimum_amount: -1 }, 'body.minimum_amount')
  await refuse({ ...vat, name: '' }, 'body.name')
  await refuse({ ...vat, rate: 3 }, 'body.rate')
  const { name: _name, ...nameless } = vat
  await refuse(nameless, 'body.name')
})

t.test('the list filters by is_active and type, and refuses bad values', async (t) => {
  const { call, create } = await setup(t)
  await create(vat)
  await create({ name: 'Retención', percentage: 2.5, type: 'RETENTION', applies_to: ['PAYMENT'], minimum_amount: 1000000 })
  const ica = await create({ name: 'ICA', percentage: 0.414, type: 'OTHER', applies_to: ['PAYMENT'] })
  await call({ method: 'POST', url: `/v1/taxes/${ica}/deactivate` })
  const names = async (query: string) => (await call({ method: 'GET', url: `/v1/taxes${query}` })).json().data.map((x: { name: string }) => x.name)
  t.same(await names(''), ['IVA', 'Retención', 'ICA'], 'active and inactive, oldest first')
  t.same(await names('?is_active=true'), ['IVA', 'Retención'])
  t.same(await names('?is_active=false'), ['ICA'])
  t.same(await names('?type=VAT'), ['IVA'])
  t.same(await names('?type=RETENTION'), ['Retención'])
  t.same(await names('?type=INCOME'), [])
  t.same(await names('?type=OTHER&is_active=true'), [])
  t.same(await names('?type=OTHER&is_active=false'), ['ICA'])
  for (const bad of ['?type=vat', '?type=SALES', '?is_active=maybe', '?page=1']) {
    t.equal((await call({ method: 'GET', url: `/v1/taxes${bad}` })).statusCode, 400, `${bad} refused`)
  }
})

t.test('update, activate and deactivate', async (t) => {
  const { call, create } = await setup(t)
  const id = await create(vat)
  const patched = await call({ method: 'PATCH', url: `/v1/taxes/${id}`, payload: { percentage: 5, applies_to: ['PAYMENT'] } })
  t.equal(patched.statusCode, 200)
  t.match(patched.json().data, { percentage: 5, applies_to: ['PAYMENT'], name: 'IVA', type: 'VAT' })
  t.equal((await call({ method: 'PATCH', url: `/v1/taxes/${id}`, payload: {} })).statusCode, 400, 'an empty change is refused')
  t.equal((await call({ method: 'PATCH', url: `/v1/taxes/${id}`, payload: { percentage: 101 } })).statusCode, 400)
  t.equal((await call({ method: 'PATCH', url: `/v1/taxes/${id}`, payload: { is_active: false } })).json().data.is_active, false)
  t.equal((await call({ method: 'POST', url: `/v1/taxes/${id}/deactivate` })).json().data.is_active, false, 'deactivating twice is harmless')
  const activated = await call({ method: 'POST', url: `/v1/taxes/${id}/activate` })
  t.equal(activated.statusCode, 200)
  t.equal(activated.json().data.is_active, true)
  t.equal((await call({ method: 'PATCH', url: `/v1/taxes/${newId()}`, payload: { name: 'x' } })).statusCode, 404)
})

t.test('usage_count counts applications of the tax', async (t) => {
  const { svc, call, create } = await setup(t)
  const id = await create(vat)
  const applied = (subjectId: string): TaxApplied => ({ type: 'TaxApplied', data: {
    taxId: id, organizationId: svc.organizationId, name: 'IVA', type: 'VAT', appliesTo: 'PAYMENT', subjectId, base: '1000.00', percentage: '19', amount: '190.00', currency: 'COP',
    appliedAt: svc.runtime.clock.now().toISOString(),
  } })
  const context = { organizationId: svc.organizationId, actorId: null, correlationId: newId() }
  const first = await svc.runtime.commands.appendRaw(`order-${newId()}`, [applied('o1')], 'no_stream', context)
  const second = await svc.runtime.commands.appendRaw(`order-${newId()}`, [applied('o2')], 'no_stream', context)
  await svc.runtime.settle(Math.max(first.position, second.position))
  t.equal((await call({ method: 'GET', url: `/v1/taxes/${id}` })).json().data.usage_count, 2)
})

t.test('taxes are the organization\'s own: another one\'s is a 404 and never listed', async (t) => {
  const { svc, call, create } = await setup(t)
  const other = await createOrganization(svc, 'Other lender')
  const foreign = await create(vat, other.id)
  t.same((await call({ method: 'GET', url: '/v1/taxes' })).json().data, [])
  t.equal((await call({ method: 'GET', url: `/v1/taxes/${foreign}` })).statusCode, 404)
  t.equal((await call({ method: 'PATCH', url: `/v1/taxes/${foreign}`, payload: { name: 'x' } })).statusCode, 404)
  t.equal((await call({ method: 'POST', url: `/v1/taxes/${foreign}/deactivate` })).statusCode, 404)
  t.equal((await call({ method: 'GET', url: '/v1/taxes', organizationId: other.id })).json().data.length, 1)
  const noHeader = await svc.call({ method: 'GET', url: '/v1/taxes', token: svc.adminToken })
  t.equal(noHeader.statusCode, 400)
})

t.test('reading needs ReadTax, writing WriteTax', async (t) => {
  const { svc, call, create } = await setup(t)
  const id = await create(vat)
  const analyst = await memberToken(svc, svc.organizationId, 'analyst')
  t.equal((await call({ method: 'GET', url: '/v1/taxes', token: analyst })).statusCode, 200)
  t.equal((await call({ method: 'POST', url: '/v1/taxes', token: analyst, payload: vat })).statusCode, 403)
  t.equal((await call({ method: 'POST', url: `/v1/taxes/${id}/deactivate`, token: analyst })).statusCode, 403)
  const nobody = await memberToken(svc, svc.organizationId, [])
  t.equal((await call({ method: 'GET', url: '/v1/taxes', token: nobody })).statusCode, 403)
})

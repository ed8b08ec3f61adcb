import t from 'tap'
import { createTestApp } from '../helpers/app.js'
import { archiveWebhook, createOrganization, createWebhook, lending, lineBody, memberToken } from '../helpers/lending.js'
import { defaultConfigOf } from '../helpers/organizations.js'

t.test('a credit line is created with defaults, read back at once, and changed by PATCH', async (t) => {
  const svc = await createTestApp(t)
  const l = await lending(svc)
  const created = await l.call('POST', '/v1/credit-lines', lineBody())
  t.equal(created.statusCode, 201)
  const line = created.json().data.creditLine
  const organization = (await svc.call({ method: 'GET', url: `/v1/organizations/${svc.organizationId}`, token: svc.adminToken })).json().data.organization
  t.match(line, {
    name: 'Crédito de consumo', principalMin: '500000.00', timeDefault: 12, rate: '12', rateType: 'FIXED_NOMINAL', currency: 'COP',
    entityConfigID: organization.defaultConfigId, jurisdiction: { code: 'CO', name: 'Colombia' }, provider: 'manual', active: true,
    availableDays: 0, requireDistinctApprover: false, onOrderWebhooks: [], disbursementMethods: [['bank_transfer']],
  })
  const read = await l.call('GET', `/v1/credit-lines/${line.ID}`)
  t.same(read.json().data.creditLine, line, 'read-your-writes: the GET right after the POST shows it')
  const patched = await l.call('PATCH', `/v1/credit-lines/${line.ID}`, { rate: '14.5', provider: 'sandbox', timeMax: 48 })
  t.equal(patched.statusCode, 200)
  t.match(patched.json().data.creditLine, { rate: '14.5', provider: 'sandbox', timeMax: 48, name: 'Crédito de consumo' })
  const listed = await l.call('GET', '/v1/credit-lines')
  t.same(listed.json().data.map((c: { ID: string }) => c.ID), [line.ID])
})

t.test('bounds and formats are checked field by field, and a bad PATCH changes nothing', async (t) => {
  const svc = await createTestApp(t)
  const l = await lending(svc)
  const fieldsOf = async (body: Record<string, unknown>) => {
    const response = await l.call('POST', '/v1/credit-lines', lineBody(body))
    t.equal(response.statusCode, 400)
    return response.json().data.errors.map((e: { field: string }) => e.field)
  }
  t.same(await fieldsOf({ principalDefault: '100.00' }), ['body.principalDefault'])
  t.same(await fieldsOf({ timeMin: 40 }), ['body.timeDefault'])
  t.same(await fieldsOf({ rate: '-2' }), ['body.rate'])
  t.same(await fieldsOf({ rate: 12 }), ['body.rate'], 'a number is not a decimal string')
  t.same(await fieldsOf({ currency: 'ZZZ' }), ['body.currency'])
  t.same(await fieldsOf({ rateType: 'VARIABLE' }), ['body.rateType'])
  t.same(await fieldsOf({ principalMin: '500000.005' }), ['body.principalMin'])
  const id = await l.createLine()
  const bad = await l.call('PATCH', `/v1/credit-lines/${id}`, { principalMax: '1.00' })
  t.equal(bad.statusCode, 400)
  t.equal((await l.call('GET', `/v1/credit-lines/${id}`)).json().data.creditLine.principalMax, '20000000.00')
})

t.test('linked webhooks must exist in the organization and be active; one archived later stays linked', async (t) => {
  const svc = await createTestApp(t)
  const l = await lending(svc)
  const other = await createOrganization(svc, 'Otra S.A.')
  const mine = await createWebhook(svc.runtime, svc.organizationId)
  const archived = await createWebhook(svc.runtime, svc.organizationId, true)
  const foreign = await createWebhook(svc.runtime, other)
  const refused = await l.call('POST', '/v1/credit-lines', lineBody({ onOrderWebhooks: [mine, archived], onDeliveredWebhooks: [foreign] }))
  t.equal(refused.statusCode, 400)
  t.same(refused.json().data.errors.map((e: { field: string }) => e.field), ['body.onOrderWebhooks.1', 'body.onDeliveredWebhooks.0'])
  const afterDuplicate = await l.call('POST', '/v1/credit-lines', lineBody({ onOrderWebhooks: [mine, mine, archived] }))
  t.same(afterDuplicate.json().data.errors.map((e: { field: string }) => e.field), ['body.onOrderWebhooks.2'], 'the position in the body, duplicates counted')
  const created = await l.call('POST', '/v1/credit-lines', lineBody({ onOrderWebhooks: [mine, mine], onDeliveredWebhooks: [mine] }))
  t.equal(created.statusCode, 201)
  const line = created.json().data.creditLine
  t.same(line.onOrderWebhooks, [mine], 'duplicates are dropped')
  await archiveWebhook(svc.runtime, svc.organizationId, mine)
  const patched = await l.call('PATCH', `/v1/credit-lines/${line.ID}`, { onOrderWebhooks: [mine], onDeliveredWebhooks: [mine], name: 'Renombrada' })
  t.equal(patched.statusCode, 200, 'an already linked webhook is not checked again')
  const relink = await l.call('PATCH', `/v1/credit-lines/${line.ID}`, { onDeliveredWebhooks: [mine, archived] })
  t.equal(relink.statusCode, 400, 'a newly linked archived webhook is refused')
  const relinkAfterDuplicate = await l.call('PATCH', `/v1/credit-lines/${line.ID}`, { onDeliveredWebhooks: [archived, archived, foreign] })
  t.same(relinkAfterDuplicate.json().data.errors.map((e: { field: string }) => e.field),
    ['body.onDeliveredWebhooks.0', 'body.onDeliveredWebhooks.1', 'body.onDeliveredWebhooks.2'], 'each bad position of a PATCH, duplicates included')
})

t.test('the three product shapes: public without a token, custom for the organization, ProductDTO by id', async (t) => {
  const svc = await createTestApp(t)
  const l = await lending(svc)
  const other = await createOrganization(svc, 'Banco Andino')
  const otherLending = await lending(svc, other)
  const cop = await l.createLine()
  const usd = await l.createLine({ name: 'Dólares', currency: 'USD', jurisdictionCode: 'US', principalMin: '1000.00', principalDefault: '5000.00', principalMax: '9000.00' })
  const paused = await l.createLine({ name: 'Pausada', active: false })
  const theirs = await otherLending.createLine({ name: 'Andino' })

  const all = await svc.call({ method: 'GET', url: '/v1/products' })
  t.equal(all.statusCode, 200, 'no token needed')
  t.same(all.json().data.products.map((p: { ID: string }) => p.ID).sort(), [cop, usd, theirs].sort(), 'active lines of every organization')
  t.same(Object.keys(all.json().data.products[0]).sort(), ['ID', 'currency', 'description', 'jurisdictionCode', 'name', 'principalMax', 'principalMin',
    'rate', 'rateType', 'timeMax', 'timeMin'].sort(), 'the light shape')
  const filtered = await svc.call({ method: 'GET', url: '/v1/products?currency=USD&jurisdiction=US' })
  t.same(filtered.json().data.products.map((p: { ID: string }) => p.ID), [usd])
  const paged = await svc.call({ method: 'GET', url: '/v1/products?limit=2&page=2' })
  t.same(paged.json().pagination, { current_page: 2, total_pages: 2, total_items: 3, items_per_page: 2 })

  const custom = await l.call('GET', '/v1/custom-products')
  t.same(custom.json().data.products.map((p: { ID: string }) => p.ID).sort(), [cop, usd].sort(), 'only the organization\'s active lines')
  t.match(custom.json().data.products[0], { principalDefault: /\d/, timeDefault: 12, provider: 'manual', gatewayMethods: [] })
  const inactive = await l.call('GET', '/v1/custom-products?active=false')
  t.same(inactive.json().data.products.map((p: { ID: string }) => p.ID), [paused])
  t.equal((await svc.call({ method: 'GET', url: '/v1/custom-products' })).statusCode, 401)

  const product = await l.call('GET', `/v1/products/${cop}`)
  t.equal(product.statusCode, 200)
  const dto = product.json()
  t.same(Object.keys(dto), ['data'])
  t.same(Object.keys(dto.data.product).sort(), ['ID', 'active', 'availableDays', 'benefits', 'conditions', 'createdAt', 'currency', 'description',
    'disbursementMethods', 'entityConfigID', 'gatewayMethods', 'jurisdiction', 'jurisdictionCode', 'name', 'principalDefault', 'principalMax',
    'principalMin', 'rate', 'rateType', 'timeDefault', 'timeMax', 'timeMin', 'updatedAt'].sort())
  t.match(dto.data.product, { gatewayMethods: [['credit_card', 'pse'], ['cash']], conditions: [['Mayor de edad']], jurisdiction: { code: 'CO', name: 'Colombia' } })

  t.equal((await svc.call({ method: 'GET', url: `/v1/products/${cop}` })).statusCode, 200, 'an active product is public, like the marketplace')
  const insider = await memberToken(svc, svc.organizationId, 'analyst')
  t.equal((await svc.call({ method: 'GET', url: `/v1/products/${paused}`, token: insider })).statusCode, 404, 'an inactive one is not a product, even for its organization')
  t.equal((await svc.call({ method: 'GET', url: `/v1/credit-lines/${paused}`, token: insider, organizationId: svc.organizationId })).statusCode, 200, 'which still reads it as a credit line')

  const openapi = (await svc.call({ method: 'GET', url: '/v1/openapi.json' })).json()
  const description = openapi.paths['/v1/products/{productid}'].get.description
  t.match(description, /GET \/products \(public\).*GET \/custom-products.*ProductDTO/s, 'the shapes are documented side by side')
  t.match(openapi.paths['/v1/products'].get.responses['200'].content['application/json'].schema.properties.data.properties.products.items.properties.timeMin.description, /months/)
  t.same(openapi.paths['/v1/products'].get.security, [])
})

t.test('a line takes only its own organization\'s configuration: another organization\'s is refused as an unknown one is', async (t) => {
  const svc = await createTestApp(t)
  const l = await lending(svc)
  const foreignConfig = await defaultConfigOf(svc, await createOrganization(svc, 'Otra S.A.'))
  const refusalOf = async (method: 'POST' | 'PATCH', url: string, entityConfigID: string) => {
    const response = await l.call(method, url, method === 'POST' ? lineBody({ entityConfigID }) : { entityConfigID })
    t.equal(response.statusCode, 400, `${method} with ${entityConfigID}`)
    t.equal(response.json().data.code, 'VALIDATION_ERROR')
    return response.json().data.errors
  }
  const unknown = '00000000-0000-4000-8000-000000000000'
  t.same(await refusalOf('POST', '/v1/credit-lines', foreignConfig),
    [{ field: 'body.entityConfigID', message: `configuration ${foreignConfig} does not exist in this organization` }])
  t.same(await refusalOf('POST', '/v1/credit-lines', unknown),
    [{ field: 'body.entityConfigID', message: `configuration ${unknown} does not exist in this organization` }])
  const own = await defaultConfigOf(svc, svc.organizationId)
  const created = await l.call('POST', '/v1/credit-lines', lineBody({ entityConfigID: own }))
  t.equal(created.statusCode, 201, 'its own default configuration is taken')
  const url = `/v1/credit-lines/${created.json().data.creditLine.ID}`
  t.same((await refusalOf('PATCH', url, foreignConfig)).map((e: { field: string }) => e.field), ['body.entityConfigID'])
  t.same((await refusalOf('PATCH', url, unknown)).map((e: { field: string }) => e.field), ['body.entityConfigID'])
  t.equal((await l.call('GET', url)).json().data.creditLine.entityConfigID, own, 'a refused PATCH changes nothing')
  t.equal((await l.call('PATCH', url, { entityConfigID: own })).statusCode, 200)
  t.equal((await l.call('GET', '/v1/credit-lines')).json().pagination.total_items, 1, 'no line was created by the refused requests')
})

t.test('tenant isolation and permissions', async (t) => {
  const svc = await createTestApp(t)
  const l = await lending(svc)
  const other = await createOrganization(svc, 'Otra S.A.')
  const line = await l.createLine()
  const outsider = await memberToken(svc, other)
  const foreign = await svc.call({ method: 'GET', url: `/v1/credit-lines/${line}`, token: outsider, organizationId: other })
  t.equal(foreign.statusCode, 404, 'another organization\'s line is not found')
  const patch = await svc.call({ method: 'PATCH', url: `/v1/credit-lines/${line}`, token: outsider, organizationId: other, payload: { name: 'x' } })
  t.equal(patch.statusCode, 404)
  const analyst = await memberToken(svc, svc.organizationId, 'analyst')
  t.equal((await l.call('GET', `/v1/credit-lines/${line}`, undefined, analyst)).statusCode, 200)
  const write = await l.call('POST', '/v1/credit-lines', lineBody(), analyst)
  t.equal(write.statusCode, 403)
  t.equal(write.json().data.permission, 'WriteCreditLine')
})

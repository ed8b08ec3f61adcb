import t from 'tap'
import { streamName } from '../../src/events/streams.js'
import { schemaVersionOf } from '../../src/events/upcasters.js'
import { newId } from '../../src/shared/ids.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { createOrganization, lending } from '../helpers/lending.js'

const headersFor = (organizationId: string) => ({ 'organization-id': organizationId, 'config-organization-id': organizationId })
const listIds = async (svc: TestApp, organizationId: string, url: string): Promise<string[]> => {
  const response = await svc.call({ method: 'GET', url, token: svc.adminToken, headers: headersFor(organizationId) })
  t.equal(response.statusCode, 200)
  return response.json().data.map((line: { ID: string }) => line.ID)
}

t.test('a PATCH naming a field that is not the configuration\'s is a 400 naming it, and records nothing', async (t) => {
  const svc = await createTestApp(t)
  const l = await lending(svc)
  const other = await createOrganization(svc, 'Otra S.A.')
  const id = await l.createLine()
  const before = (await l.call('GET', `/v1/credit-lines/${id}`)).json().data.creditLine
  const head = await svc.runtime.eventStore.headPosition()

  for (const [body, field] of [
    [{ organizationId: other }, 'body.organizationId'],
    [{ _id: newId() }, 'body._id'],
    [{ organizationActive: false, name: 'Nueva' }, 'body.organizationActive'],
    [{ createdAt: '1999-01-01T00:00:00.000Z' }, 'body.createdAt'],
    [{ princpalMax: '99' }, 'body.princpalMax'],
    [{ jurisdiction: { code: 'CO', name: 'Colombia', organizationId: other } }, 'body.jurisdiction.organizationId'],
  ] as const) {
    const response = await l.call('PATCH', `/v1/credit-lines/${id}`, body)
    t.equal(response.statusCode, 400, JSON.stringify(body))
    t.match(response.json(), { status: 'fail', data: { code: 'VALIDATION_ERROR', errors: [{ field }] } })
  }
  const empty = await l.call('PATCH', `/v1/credit-lines/${id}`, {})
  t.equal(empty.statusCode, 400, 'an empty PATCH names no field')
  t.equal(await svc.runtime.eventStore.headPosition(), head, 'nothing appended')
  t.same((await l.call('GET', `/v1/credit-lines/${id}`)).json().data.creditLine, before, 'the line unchanged, still its organization\'s')
  t.same(await listIds(svc, other, '/v1/credit-lines'), [], 'the other organization lists nothing')

  const created = await l.call('POST', '/v1/credit-lines', { ...before, ID: undefined, createdAt: undefined, updatedAt: undefined, organizationId: undefined,
    jurisdiction: { code: 'CO', name: 'Colombia', extra: 1 } })
  t.equal(created.statusCode, 400, 'a jurisdiction takes its code and name only, on creation too')
})

t.test('an update recorded with fields outside the configuration (as before the body refused them) moves nothing, live or replayed', async (t) => {
  const svc = await createTestApp(t)
  const l = await lending(svc)
  const other = await createOrganization(svc, 'Otra S.A.')
  const id = await l.createLine()
  const at = svc.runtime.clock.now().toISOString()
  const { position: revision } = await svc.runtime.eventStore.append(streamName('creditLine', id), [{
    id: newId(), type: 'CreditLineUpdated',
    data: {
      creditLineId: id, organizationId: svc.organizationId, updatedAt: at,
      changes: { organizationId: other, _id: 'zzz', organizationActive: false, princpalMax: '99', name: 'Renombrada',
        jurisdiction: { code: 'CO', name: 'Colombia', organizationId: other } },
    },
    metadata: { organizationId: svc.organizationId, actorId: 'test', correlationId: newId(), causationId: null, occurredAt: at, schemaVersion: schemaVersionOf('CreditLineUpdated') },
  }], 'any')
  await svc.runtime.settle(revision)

  const expectations = async (label: string) => {
    const line = (await l.call('GET', `/v1/credit-lines/${id}`)).json().data.creditLine
    t.match(line, { ID: id, organizationId: svc.organizationId, name: 'Renombrada', jurisdiction: { code: 'CO', name: 'Colombia' } }, `${label}: the name changed, nothing else`)
    t.notOk('princpalMax' in line, `${label}: no stray field`)
    t.same(await listIds(svc, svc.organizationId, '/v1/credit-lines'), [id], `${label}: still listed by its organization`)
    t.same(await listIds(svc, other, '/v1/credit-lines'), [], `${label}: not by the other`)
    const products = (await svc.call({ method: 'GET', url: '/v1/products' })).json().data.products.map((product: { ID: string }) => product.ID)
    t.ok(products.includes(id), `${label}: in the public products, its organization still active`)
  }
  await expectations('live')
  await svc.runtime.projections.rebuild(['creditLines'])
  await expectations('rebuilt')

  const patched = await l.call('PATCH', `/v1/credit-lines/${id}`, { description: 'cambiada' })
  t.equal(patched.statusCode, 200, 'the decider\'s state kept to the configuration too: a later change validates and records')
  t.match(patched.json().data.creditLine, { organizationId: svc.organizationId, description: 'cambiada' })
})

t.test('every JSON body the API takes refuses fields it does not name, at every depth (the OpenAPI document)', async (t) => {
  const svc = await createTestApp(t)
  const openapi = (await svc.call({ method: 'GET', url: '/v1/openapi.json' })).json()
  const open: string[] = []
  const walk = (schema: unknown, path: string): void => {
    if (typeof schema !== 'object' || schema === null) return
    const node = schema as Record<string, unknown>
    if (node['type'] === 'object' && typeof node['properties'] === 'object' && node['additionalProperties'] !== false) open.push(path)
    for (const [key, value] of Object.entries(node)) {
      if (key === 'properties' && typeof value === 'object' && value !== null) {
        for (const [name, property] of Object.entries(value)) walk(property, `${path}.${name}`)
      } else if (Array.isArray(value)) value.forEach((item, index) => walk(item, `${path}[${index}]`))
      else if (key === 'items' || key === 'not') walk(value, `${path}[]`)
    }
  }
  let bodies = 0
  for (const [route, operations] of Object.entries(openapi.paths as Record<string, Record<string, { requestBody?: { content?: Record<string, { schema: unknown }> } }>>)) {
    for (const [method, operation] of Object.entries(operations)) {
      const schema = operation.requestBody?.content?.['application/json']?.schema
      if (schema === undefined) continue
      bodies++
      walk(schema, `${method.toUpperCase()} ${route} body`)
    }
  }
  t.ok(bodies > 30, `${bodies} JSON bodies read`)
  t.same(open, [], 'no object schema of a body leaves other fields open')
})

import t from 'tap'
import { keyedScoringModelId } from '../../src/commands/scoringConfiguration.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { createOrganization, defaultConfigOf } from '../helpers/organizations.js'
import { consumerModel } from '../helpers/scoring.js'
import { oneCreatedOthersReturned, refusesMalformedKeys } from '../helpers/idempotency.js'

const modelsOf = async (svc: TestApp, organizationId = svc.organizationId) => {
  const configId = await defaultConfigOf(svc, organizationId)
  const url = `/v1/organization/${organizationId}/config/${configId}/scoring-model`
  const headers = { 'config-organization-id': organizationId, 'organization-id': organizationId }
  return {
    post: (key: string | undefined, payload: object) =>
      svc.call({ method: 'POST', url, token: svc.adminToken, payload, headers: { ...headers, ...(key === undefined ? {} : { 'idempotency-key': key }) } }),
    patch: (id: string, payload: object) => svc.call({ method: 'PATCH', url: `${url}/${id}`, token: svc.adminToken, payload, headers }),
    count: async (): Promise<number> => (await svc.call({ method: 'GET', url, token: svc.adminToken, headers })).json().pagination.total_items,
  }
}

t.test('a scoring model created with an Idempotency-Key: 201 first, 200 with the model as it is now when sent again, 409 for another request', async (t) => {
  const svc = await createTestApp(t)
  const api = await modelsOf(svc)
  const first = await api.post('consumer-v1', consumerModel)
  t.equal(first.statusCode, 201)
  const model = first.json().data
  t.equal(model.ID, keyedScoringModelId(svc.organizationId, 'consumer-v1'), 'the id derives from the organization and the Key')
  const again = await api.post('consumer-v1', consumerModel)
  t.equal(again.statusCode, 200)
  t.same(again.json().data, model, 'the same model')
  t.equal(again.headers.location, first.headers.location, 'and where to find it')
  const reordered = Object.fromEntries(Object.entries(consumerModel).reverse())
  t.equal((await api.post('consumer-v1', reordered)).statusCode, 200, 'the body\'s keys in another order: the same request')

  t.equal((await api.patch(model.ID, { isActive: false })).statusCode, 200)
  const afterChange = await api.post('consumer-v1', consumerModel)
  t.equal(afterChange.statusCode, 200)
  t.equal(afterChange.json().data.isActive, false, 'the model as it is now')

  for (const [what, body] of [
    ['another version label', { ...consumerModel, version: '1.1' }],
    ['another name', { ...consumerModel, name: 'Consumer 2' }],
    ['not the default', { ...consumerModel, isDefault: false }],
    ['a validFrom given', { ...consumerModel, validFrom: '2026-01-01T00:00:00Z' }],
  ] as const) {
    const reused = await api.post('consumer-v1', body)
    t.equal(reused.statusCode, 409, what)
    t.match(reused.json().data, { code: 'IDEMPOTENCY_KEY_REUSED', key: 'consumer-v1', modelId: model.ID }, what)
  }
  t.equal(await api.count(), 1)
})

t.test('concurrent creations with one Key make one model; another organization\'s same Key is its own; no Key, a new model each time', async (t) => {
  const svc = await createTestApp(t)
  const api = await modelsOf(svc)
  const racing = await Promise.all(Array.from({ length: 6 }, () => api.post('race', consumerModel)))
  oneCreatedOthersReturned(t, racing)
  t.same([...new Set(racing.map((r) => r.json().data.ID))], [keyedScoringModelId(svc.organizationId, 'race')])

  const other = await createOrganization(svc, 'Otra S.A.')
  const theirs = await (await modelsOf(svc, other.id)).post('race', consumerModel)
  t.equal(theirs.statusCode, 201)
  t.equal(theirs.json().data.ID, keyedScoringModelId(other.id, 'race'))

  const plain = await Promise.all([api.post(undefined, consumerModel), api.post(undefined, consumerModel)])
  t.same(plain.map((r) => r.statusCode), [201, 201])
  t.not(plain[0]?.json().data.ID, plain[1]?.json().data.ID)
  t.equal(await api.count(), 3)

  await refusesMalformedKeys(t, (key) => api.post(key, consumerModel))
  t.equal((await api.post('bad-first', { ...consumerModel, thresholds: { approve: 10, review: 50, reject: 30 } })).statusCode, 400, 'thresholds out of order')
  t.equal((await api.post('bad-first', consumerModel)).statusCode, 201, 'a refused creation leaves its Key free')
})

import t from 'tap'
import { builtInRoleTemplateId } from '../../src/commands/identity.js'
import { userAggregate } from '../../src/commands/user.js'
import { ManualClock } from '../../src/shared/clock.js'
import { createTestApp, requestToken, type TestApp } from '../helpers/app.js'

// Guarded routes remember what they derived from a token they verified before; these pin down that nothing a
// request must refuse is let through by that memory.

const codeOf = (response: { json(): unknown }): unknown => (response.json() as { data: { code?: string } }).data.code

const expOf = (token: string): number => {
  const claims: { exp: number } = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString())
  return claims.exp
}

const userToken = async (svc: TestApp, username: string) => {
  const created = await svc.call({
    method: 'POST', url: `/v1/organization/${svc.organizationId}/users`, token: svc.adminToken,
    payload: { username, password: 'long enough password', roleTemplateId: builtInRoleTemplateId(svc.organizationId, 'analyst') },
  })
  const userId: string = created.json().data.user.id
  const login = await requestToken(svc.app, {
    grant_type: 'password', username, password: 'long enough password', client_id: svc.config.adminClientId ?? '', client_secret: svc.config.adminClientSecret ?? '',
  })
  const body: { access_token: string } = login.json()
  return { userId, token: body.access_token }
}

t.test('a token used a moment ago is accepted up to its exp and refused as expired one millisecond after', async (t) => {
  const clock = new ManualClock(new Date())
  const svc = await createTestApp(t, { clock })
  const get = () => svc.call({ method: 'GET', url: '/v1/taxes', token: svc.adminToken, organizationId: svc.organizationId })
  t.equal((await get()).statusCode, 200)
  clock.set(new Date(expOf(svc.adminToken) * 1000))
  t.equal((await get()).statusCode, 200, 'at exp itself, as the verifier has it')
  clock.advance(1)
  const late = await get()
  t.equal(late.statusCode, 401)
  t.equal(codeOf(late), 'TOKEN_EXPIRED')
  clock.set(new Date(expOf(svc.adminToken) * 1000))
  t.equal((await get()).statusCode, 200, 'a clock set back finds the token valid again, as a fresh verification would')
})

t.test('a deactivated user\'s token, accepted before, is refused on the next request', async (t) => {
  const svc = await createTestApp(t)
  const { userId, token } = await userToken(svc, 'gloria')
  t.equal((await svc.call({ method: 'GET', url: '/v1/me', token })).statusCode, 200)
  await svc.runtime.execute(userAggregate, userId, { type: 'DeactivateUser' }, { organizationId: svc.organizationId, actorId: 'test', correlationId: 'c', causationId: null })
  const refused = await svc.call({ method: 'GET', url: '/v1/me', token })
  t.equal(refused.statusCode, 401)
  t.equal(codeOf(refused), 'INVALID_TOKEN')
})

t.test('a role template\'s permissions, changed, apply to the next request of a token accepted before', async (t) => {
  const svc = await createTestApp(t)
  const templates = `/v1/organization/${svc.organizationId}/role-template`
  const template = await svc.call({ method: 'POST', url: templates, token: svc.adminToken, payload: { name: 'Tax desk', permissions: ['ReadTax'] } })
  const templateId: string = template.json().data.id
  const client = await svc.call({
    method: 'POST', url: '/v1/oauth/clients', token: svc.adminToken,
    payload: { name: 'tax desk app', scopes: [], organizationId: svc.organizationId, roleTemplateId: templateId },
  })
  const { client_id: clientId, client_secret: secret }: { client_id: string; client_secret: string } = client.json().data.client
  const token = await svc.clientToken(clientId, secret)
  const taxes = () => svc.call({ method: 'GET', url: '/v1/taxes', token, organizationId: svc.organizationId })
  t.equal((await taxes()).statusCode, 200)
  await svc.call({ method: 'PUT', url: `${templates}/${templateId}`, token: svc.adminToken, payload: { permissions: ['ReadCredit'] } })
  const forbidden = await taxes()
  t.equal(forbidden.statusCode, 403)
  t.equal(codeOf(forbidden), 'FORBIDDEN')
  await svc.call({ method: 'PUT', url: `${templates}/${templateId}`, token: svc.adminToken, payload: { permissions: ['ReadCredit', 'ReadTax'] } })
  t.equal((await taxes()).statusCode, 200)
})

t.test('a changed tax shows in the list at once, though the list\'s answer is kept between requests', async (t) => {
  const svc = await createTestApp(t)
  const call = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) =>
    svc.call({ method, url, token: svc.adminToken, organizationId: svc.organizationId, ...(payload === undefined ? {} : { payload }) })
  const created = await call('POST', '/v1/taxes', { name: 'IVA', type: 'VAT', percentage: 19, applies_to: ['PAYMENT'] })
  const id: string = created.json().data.id
  const names = async (query = '') => (await call('GET', `/v1/taxes${query}`)).json().data.map((tax: { name: string; percentage: number }) => `${tax.name} ${tax.percentage}`)
  t.same(await names(), ['IVA 19'])
  t.same(await names(), ['IVA 19'])
  await call('PATCH', `/v1/taxes/${id}`, { percentage: 16 })
  t.same(await names(), ['IVA 16'])
  await call('POST', '/v1/taxes', { name: 'ICA', type: 'OTHER', percentage: 0.966, applies_to: ['PAYMENT'] })
  t.same(await names(), ['IVA 16', 'ICA 0.966'])
  await call('POST', `/v1/taxes/${id}/deactivate`)
  t.same(await names('?is_active=true'), ['ICA 0.966'])
  t.same(await names('?is_active=false'), ['IVA 16'])
  t.same(await names(), ['IVA 16', 'ICA 0.966'])
})

t.test('on a read store that answers only with promises (SQLite), guarded routes admit, refuse a deactivated user and an unknown organization alike', async (t) => {
  const svc = await createTestApp(t, { config: { readStore: 'sqlite' } })
  t.equal(svc.runtime.queries.principals.client(svc.config.adminClientId ?? '') instanceof Promise, true, 'the lookups of this store are promises')
  t.equal((await svc.call({ method: 'GET', url: '/v1/taxes', token: svc.adminToken, organizationId: svc.organizationId })).statusCode, 200)
  const { userId, token } = await userToken(svc, 'ramona')
  t.equal((await svc.call({ method: 'GET', url: '/v1/taxes', token, organizationId: svc.organizationId })).statusCode, 200)
  const foreign = await svc.call({ method: 'GET', url: '/v1/taxes', token, organizationId: '5b0c6a55-3f0e-4c47-9d38-3a2b8f0f9a11' })
  t.equal(foreign.statusCode, 403)
  t.equal(codeOf(foreign), 'ORGANIZATION_FORBIDDEN')
  await svc.runtime.execute(userAggregate, userId, { type: 'DeactivateUser' }, { organizationId: svc.organizationId, actorId: 'test', correlationId: 'c', causationId: null })
  const refused = await svc.call({ method: 'GET', url: '/v1/taxes', token, organizationId: svc.organizationId })
  t.equal(refused.statusCode, 401)
  t.equal(codeOf(refused), 'INVALID_TOKEN')
})

t.test('on the memory read store, the lookups of every guarded request answer without a promise', async (t) => {
  const svc = await createTestApp(t, { config: { readStore: 'memory' } })
  const { queries } = svc.runtime
  t.notOk(queries.principals.client(svc.config.adminClientId ?? '') instanceof Promise)
  t.notOk(queries.organizations.get(svc.organizationId) instanceof Promise)
  t.notOk(queries.taxes.list({ organizationId: svc.organizationId }) instanceof Promise)
})

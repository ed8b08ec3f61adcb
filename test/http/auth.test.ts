import t from 'tap'
import { createSigner } from 'fast-jwt'
import { builtInRoleTemplateId } from '../../src/commands/identity.js'
import { generateSigningKeyPem, signingKeyFromPem } from '../../src/identity/keys.js'
import { ManualClock } from '../../src/shared/clock.js'
import { createTestApp, requestToken, type TestApp } from '../helpers/app.js'

interface Fail { status: string; data: { code: string; message: string; permission?: string; errors?: Array<{ field: string }> } }

const claimsOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString())

const newOrganization = async (svc: TestApp, name: string) => {
  const response = await svc.call({ method: 'POST', url: '/v1/organizations', token: svc.adminToken, payload: { name } })
  const body: { data: { organization: { id: string } } } = response.json()
  return body.data.organization.id
}

/** A client of `organizationId` with the analyst role (read-only permissions) and a few scopes. */
const analystClient = async (svc: TestApp, organizationId: string, scopes = ['users:read']) => {
  const response = await svc.call({
    method: 'POST', url: '/v1/oauth/clients', token: svc.adminToken,
    payload: { name: 'analyst app', scopes, organizationId, roleTemplateId: builtInRoleTemplateId(organizationId, 'analyst') },
  })
  const body: { data: { client: { client_id: string; client_secret: string } } } = response.json()
  return svc.clientToken(body.data.client.client_id, body.data.client.client_secret)
}

t.test('a protected route without a token answers 401 with a Bearer challenge', async (t) => {
  const svc = await createTestApp(t)
  const response = await svc.call({ method: 'GET', url: '/v1/organizations' })
  t.equal(response.statusCode, 401)
  t.equal(response.json<Fail>().data.code, 'UNAUTHORIZED')
  t.match(response.headers['www-authenticate'], /^Bearer realm="credit-service"/)
  const garbage = await svc.call({ method: 'GET', url: '/v1/organizations', token: 'not.a.jwt' })
  t.equal(garbage.json<Fail>().data.code, 'INVALID_TOKEN')
})

t.test('an expired token is refused', async (t) => {
  const clock = new ManualClock(new Date())
  const svc = await createTestApp(t, { clock })
  t.equal((await svc.call({ method: 'GET', url: '/v1/organizations', token: svc.adminToken })).statusCode, 200)
  clock.advance(3601 * 1000)
  const response = await svc.call({ method: 'GET', url: '/v1/organizations', token: svc.adminToken })
  t.equal(response.statusCode, 401)
  t.equal(response.json<Fail>().data.code, 'TOKEN_EXPIRED')
  t.match(response.headers['www-authenticate'], /error="invalid_token"/)
})

t.test('a token signed with another key is refused', async (t) => {
  const svc = await createTestApp(t)
  const foreign = signingKeyFromPem(generateSigningKeyPem())
  const sign = createSigner({ key: foreign.privateKeyPem, algorithm: 'ES256', kid: svc.runtime.signingKey.kid, header: { alg: 'ES256', typ: 'at+jwt' } })
  const forged = sign(claimsOf(svc.adminToken))
  const response = await svc.call({ method: 'GET', url: '/v1/organizations', token: forged })
  t.equal(response.statusCode, 401)
  t.equal(response.json<Fail>().data.code, 'INVALID_TOKEN')
})

t.test('an unsigned token (alg none) is refused', async (t) => {
  const svc = await createTestApp(t)
  const sign = createSigner({ algorithm: 'none', header: { alg: 'none', typ: 'at+jwt' } })
  const unsigned = sign(claimsOf(svc.adminToken))
  const response = await svc.call({ method: 'GET', url: '/v1/organizations', token: unsigned })
  t.equal(response.statusCode, 401)
  t.equal(response.json<Fail>().data.code, 'INVALID_TOKEN')
})

t.test('an mfa_token or any non-access token is refused as a Bearer token', async (t) => {
  const svc = await createTestApp(t)
  const sign = createSigner({ key: svc.runtime.signingKey.privateKeyPem, algorithm: 'ES256', header: { alg: 'ES256', typ: 'mfa+jwt' } })
  const response = await svc.call({ method: 'GET', url: '/v1/organizations', token: sign(claimsOf(svc.adminToken)) })
  t.equal(response.json<Fail>().data.code, 'INVALID_TOKEN')
})

t.test('a revoked client\'s tokens stop working at once', async (t) => {
  const svc = await createTestApp(t)
  const token = await analystClient(svc, svc.organizationId)
  const clientId: string = claimsOf(token).client_id
  t.equal((await svc.call({ method: 'GET', url: '/v1/me', token })).statusCode, 200)
  const { oauthClientAggregate } = await import('../../src/commands/oauthClient.js')
  const { clientStreamId } = await import('../../src/commands/identity.js')
  await svc.runtime.execute(oauthClientAggregate, clientStreamId(clientId), { type: 'RevokeClient' }, { organizationId: null, actorId: 'test', correlationId: 'c' })
  t.equal((await svc.call({ method: 'GET', url: '/v1/me', token })).json<Fail>().data.code, 'INVALID_TOKEN')
  const again = await requestToken(svc.app, { grant_type: 'client_credentials', client_id: clientId, client_secret: 'whatever' })
  t.equal(again.statusCode, 401)
})

t.test('a missing scope answers 403 INSUFFICIENT_SCOPE', async (t) => {
  const svc = await createTestApp(t)
  const token = await analystClient(svc, svc.organizationId, ['users:read'])
  const response = await svc.call({ method: 'POST', url: '/v1/organizations', token, payload: { name: 'Nope' } })
  t.equal(response.statusCode, 403)
  t.equal(response.json<Fail>().data.code, 'INSUFFICIENT_SCOPE')
  t.match(response.headers['www-authenticate'], /insufficient_scope/)
})

t.test('a missing permission answers 403 FORBIDDEN naming the permission', async (t) => {
  const svc = await createTestApp(t)
  const token = await analystClient(svc, svc.organizationId)
  const response = await svc.call({
    method: 'POST', url: `/v1/organization/${svc.organizationId}/role-template`, token,
    payload: { name: 'x', permissions: ['ReadCredit'] },
  })
  t.equal(response.statusCode, 403)
  t.same(response.json(), { status: 'fail', data: { code: 'FORBIDDEN', message: 'permission WriteRoleTemplate is required', permission: 'WriteRoleTemplate' } })
})

t.test('the organization header is required, must be a uuid, and must name an organization of the caller', async (t) => {
  const svc = await createTestApp(t)
  const token = await analystClient(svc, svc.organizationId)
  const missing = await svc.call({ method: 'GET', url: '/v1/me/permissions', token })
  t.equal(missing.statusCode, 400)
  t.equal(missing.json<Fail>().data.code, 'VALIDATION_ERROR')
  t.same(missing.json<Fail>().data.errors?.map((e) => e.field), ['headers.organization-id'])
  const malformed = await svc.call({ method: 'GET', url: '/v1/me/permissions', token, organizationId: 'abc' })
  t.equal(malformed.statusCode, 400)
  const other = await newOrganization(svc, 'Other Bank')
  const foreign = await svc.call({ method: 'GET', url: '/v1/me/permissions', token, organizationId: other })
  t.equal(foreign.statusCode, 403)
  t.equal(foreign.json<Fail>().data.code, 'ORGANIZATION_FORBIDDEN')
  const own = await svc.call({ method: 'GET', url: '/v1/me/permissions', token, organizationId: svc.organizationId })
  t.equal(own.statusCode, 200)
  t.ok(own.json().data.permissions.includes('ReadProfile'))
  t.equal(own.json().data.isAdministrator, false)
})

t.test('another organization\'s resource answers 404, never its data', async (t) => {
  const svc = await createTestApp(t)
  const other = await newOrganization(svc, 'Other Bank')
  const foreignTemplate = builtInRoleTemplateId(other, 'analyst')
  const viaOwn = await svc.call({ method: 'GET', url: `/v1/organization/${svc.organizationId}/role-template/${foreignTemplate}`, token: svc.adminToken })
  t.equal(viaOwn.statusCode, 404)
  t.equal(viaOwn.json<Fail>().data.code, 'NOT_FOUND')
  t.notMatch(viaOwn.body, /Analyst/, 'nothing of the resource leaks')
  const token = await analystClient(svc, svc.organizationId)
  const viaForeign = await svc.call({ method: 'GET', url: `/v1/organization/${other}/role-template/${foreignTemplate}`, token })
  t.equal(viaForeign.statusCode, 403, 'a non-member cannot act in the other organization at all')
})

import t from 'tap'
import { builtInRoleTemplateId } from '../../src/commands/identity.js'
import { principalsProjection } from '../../src/projections/principals.js'
import { ManualClock } from '../../src/shared/clock.js'
import { createTestApp, requestToken, type TestApp } from '../helpers/app.js'

interface TokenBody { access_token: string; refresh_token?: string }
interface OAuthErrorBody { error: string; error_description: string }
interface Credentials { client_id: string; client_secret: string }

const PASSWORD = 'correct horse battery'

const admin = (svc: TestApp): Credentials => ({ client_id: svc.config.adminClientId ?? '', client_secret: svc.config.adminClientSecret ?? '' })
const basic = ({ client_id, client_secret }: Credentials) =>
  `Basic ${Buffer.from(`${encodeURIComponent(client_id)}:${encodeURIComponent(client_secret)}`).toString('base64')}`

const revoke = (svc: TestApp, fields: Record<string, string>, headers: Record<string, string> = {}) => svc.app.inject({
  method: 'POST', url: '/v1/oauth/revoke',
  headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
  payload: new URLSearchParams(fields).toString(),
})

const protectedCall = (svc: TestApp, token: string) => svc.call({ method: 'GET', url: '/v1/me', token })
const refresh = (svc: TestApp, refreshToken: string, client: Credentials = admin(svc)) =>
  requestToken(svc.app, { grant_type: 'refresh_token', refresh_token: refreshToken, ...client })

const addUser = async (svc: TestApp, username: string) => {
  const response = await svc.call({
    method: 'POST', url: `/v1/organization/${svc.organizationId}/users`, token: svc.adminToken,
    payload: { username, password: PASSWORD, roleTemplateId: builtInRoleTemplateId(svc.organizationId, 'analyst') },
  })
  if (response.statusCode !== 201) throw new Error(response.body)
}

const signIn = async (svc: TestApp, username: string, client: Credentials = admin(svc)): Promise<Required<TokenBody>> => {
  const response = await requestToken(svc.app, { grant_type: 'password', username, password: PASSWORD, ...client })
  if (response.statusCode !== 200) throw new Error(response.body)
  const body: TokenBody = response.json()
  return { access_token: body.access_token, refresh_token: body.refresh_token ?? '' }
}

const newClient = async (svc: TestApp, name: string): Promise<Credentials> => {
  const created = await svc.call({
    method: 'POST', url: '/v1/oauth/clients', token: svc.adminToken,
    payload: { name, scopes: [], organizationId: svc.organizationId, roleTemplateId: builtInRoleTemplateId(svc.organizationId, 'analyst') },
  })
  if (created.statusCode !== 201) throw new Error(created.body)
  return created.json<{ data: { client: Credentials } }>().data.client
}

const claimsOf = (token: string): { sid: string } => JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString())

const familyEvents = async (svc: TestApp, accessToken: string) => {
  const { sid } = claimsOf(accessToken)
  const events: Array<{ type: string; data: unknown }> = []
  for await (const event of svc.runtime.eventStore.readStream(`refreshTokenFamily-${sid}`)) events.push({ type: event.type, data: event.data })
  return events
}

t.test('revoking a refresh token ends its sign-in: the refresh token and every access token of the sign-in are refused at once', async (t) => {
  const svc = await createTestApp(t)
  await addUser(svc, 'ana')
  const first = await signIn(svc, 'ana')
  const second: TokenBody = (await refresh(svc, first.refresh_token)).json()
  const other = await signIn(svc, 'ana')

  const revoked = await revoke(svc, { token: second.refresh_token ?? '', token_type_hint: 'refresh_token', ...admin(svc) })
  t.equal(revoked.statusCode, 200, revoked.body)
  t.equal(revoked.body, '', 'an empty body')
  t.equal(revoked.headers['cache-control'], 'no-store')

  const refused = await refresh(svc, second.refresh_token ?? '')
  t.equal(refused.statusCode, 400)
  t.equal(refused.json<OAuthErrorBody>().error, 'invalid_grant', 'the refresh grant refuses the revoked token')
  for (const [which, token] of [['first', first.access_token], ['refreshed', second.access_token]] as const) {
    const call = await protectedCall(svc, token)
    t.equal(call.statusCode, 401, `the ${which} access token of the sign-in is refused`)
    t.equal(call.json().data.code, 'INVALID_TOKEN')
  }
  const revokedEvents = (await familyEvents(svc, first.access_token)).filter((event) => event.type === 'RefreshTokenFamilyRevoked')
  t.match(revokedEvents, [{ data: { reason: 'revoked' } }], 'recorded as a revocation, not a reuse')
  t.equal((await protectedCall(svc, other.access_token)).statusCode, 200, 'another sign-in of the same user is untouched')
  t.equal((await refresh(svc, other.refresh_token)).statusCode, 200)
})

t.test('revoking a user\'s access token ends its sign-in, the refresh token included', async (t) => {
  const svc = await createTestApp(t)
  await addUser(svc, 'bea')
  const session = await signIn(svc, 'bea')
  const revoked = await revoke(svc, { token: session.access_token, token_type_hint: 'access_token' }, { authorization: basic(admin(svc)) })
  t.equal(revoked.statusCode, 200, revoked.body)
  t.equal(revoked.body, '')
  const call = await protectedCall(svc, session.access_token)
  t.equal(call.statusCode, 401, 'the access token is refused')
  t.equal(call.json().data.code, 'INVALID_TOKEN')
  t.equal((await refresh(svc, session.refresh_token)).json<OAuthErrorBody>().error, 'invalid_grant', 'so is the refresh token of its sign-in')

  const hinted = await signIn(svc, 'bea')
  t.equal((await revoke(svc, { token: hinted.refresh_token, token_type_hint: 'access_token', ...admin(svc) })).statusCode, 200, 'a wrong hint')
  t.equal((await protectedCall(svc, hinted.access_token)).statusCode, 401, 'does not keep the token from being found and revoked')
  const unknown = await signIn(svc, 'bea')
  t.equal((await revoke(svc, { token: unknown.access_token, token_type_hint: 'id_token', ...admin(svc) })).statusCode, 200, 'nor does an unknown one')
  t.equal((await protectedCall(svc, unknown.access_token)).statusCode, 401)
})

t.test('the answer waits until the read models show the revocation', async (t) => {
  const svc = await createTestApp(t)
  await addUser(svc, 'gala')
  const session = await signIn(svc, 'gala')
  // A slow read model, so that an answer sent before the revocation is read would be seen; the delay is not asserted on.
  const project = principalsProjection.project
  let projected = false
  principalsProjection.project = async (store, event, position) => {
    if (event.type !== 'RefreshTokenFamilyRevoked') return project(store, event, position)
    await new Promise((resolve) => setTimeout(resolve, 200))
    await project(store, event, position)
    projected = true
  }
  t.teardown(() => { principalsProjection.project = project })
  const revoked = await revoke(svc, { token: session.refresh_token, ...admin(svc) })
  t.equal(revoked.statusCode, 200)
  t.ok(projected, 'the revocation was read before the answer was sent')
  t.equal((await protectedCall(svc, session.access_token)).statusCode, 401)
})

t.test('a token issued to another client is refused with unauthorized_client and keeps working', async (t) => {
  const svc = await createTestApp(t)
  await addUser(svc, 'carla')
  const session = await signIn(svc, 'carla')
  const stranger = await newClient(svc, 'stranger')
  for (const token of [session.refresh_token, session.access_token, svc.adminToken]) {
    const refused = await revoke(svc, { token, ...stranger })
    t.equal(refused.statusCode, 400)
    t.equal(refused.json<OAuthErrorBody>().error, 'unauthorized_client')
    t.equal(refused.headers['cache-control'], 'no-store')
  }
  t.equal((await protectedCall(svc, session.access_token)).statusCode, 200, 'the access token still works')
  t.equal((await protectedCall(svc, svc.adminToken)).statusCode, 200, 'so does the other client\'s own token')
  t.equal((await refresh(svc, session.refresh_token)).statusCode, 200, 'and the refresh token')
})

t.test('unknown, malformed and expired tokens answer 200 and revoke nothing', async (t) => {
  const clock = new ManualClock(new Date('2026-11-23T10:00:00.000Z'))
  const svc = await createTestApp(t, { clock })
  await addUser(svc, 'dora')
  const session = await signIn(svc, 'dora')
  const [header, payload] = session.access_token.split('.')
  const familyId = JSON.parse(Buffer.from(payload ?? '', 'base64url').toString()).sid
  const invalid = {
    garbage: 'not a token',
    'an unknown family': '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.c2VjcmV0',
    'the sign-in\'s family with a wrong secret': `${familyId}.d3Jvbmc`,
    'a forged signature': `${header}.${payload}.${Buffer.from('forged').toString('base64url')}`,
    'a JWT naming the sign-in that this service did not sign': `${header}.${Buffer.from(JSON.stringify({ iss: 'https://elsewhere', sub: 'x', client_id: admin(svc).client_id, sid: familyId })).toString('base64url')}.x`,
  }
  for (const [name, token] of Object.entries(invalid)) {
    const answer = await revoke(svc, { token, ...admin(svc) })
    t.equal(answer.statusCode, 200, name)
    t.equal(answer.body, '', name)
  }
  t.equal((await protectedCall(svc, session.access_token)).statusCode, 200, 'the sign-in was not revoked')

  clock.advance(3601 * 1000)
  t.equal((await protectedCall(svc, session.access_token)).json().data.code, 'TOKEN_EXPIRED')
  const expired = await revoke(svc, { token: session.access_token, ...admin(svc) })
  t.equal(expired.statusCode, 200, 'an expired access token is already invalid')
  const after = await refresh(svc, session.refresh_token)
  t.equal(after.statusCode, 200, 'and revokes nothing: its refresh token still works', { body: after.body })
})

t.test('a client\'s own access token belongs to no sign-in: 400 unsupported_token_type', async (t) => {
  const svc = await createTestApp(t)
  const refused = await revoke(svc, { token: svc.adminToken, token_type_hint: 'access_token', ...admin(svc) })
  t.equal(refused.statusCode, 400)
  t.equal(refused.json<OAuthErrorBody>().error, 'unsupported_token_type')
  t.equal((await protectedCall(svc, svc.adminToken)).statusCode, 200, 'the token keeps working')
})

t.test('wrong client credentials answer 401 invalid_client and revoke nothing', async (t) => {
  const svc = await createTestApp(t)
  await addUser(svc, 'elsa')
  const session = await signIn(svc, 'elsa')
  const attempts: Array<[string, Record<string, string>, Record<string, string>]> = [
    ['a wrong secret', { client_id: admin(svc).client_id, client_secret: 'wrong' }, {}],
    ['a wrong secret by HTTP Basic', {}, { authorization: basic({ client_id: admin(svc).client_id, client_secret: 'wrong' }) }],
    ['no client authentication', {}, {}],
    ['malformed HTTP Basic', {}, { authorization: 'Basic !!!' }],
  ]
  for (const [name, fields, headers] of attempts) {
    const refused = await revoke(svc, { token: session.refresh_token, ...fields }, headers)
    t.equal(refused.statusCode, 401, name)
    t.equal(refused.json<OAuthErrorBody>().error, 'invalid_client', name)
    t.match(refused.headers['www-authenticate'], /^Basic realm=/, name)
  }
  t.equal((await protectedCall(svc, session.access_token)).statusCode, 200, 'the sign-in is untouched')
})

t.test('revoking twice answers 200 both times, whichever token of the sign-in is presented', async (t) => {
  const svc = await createTestApp(t)
  await addUser(svc, 'fina')
  const session = await signIn(svc, 'fina')
  t.equal((await revoke(svc, { token: session.refresh_token, ...admin(svc) })).statusCode, 200)
  t.equal((await revoke(svc, { token: session.refresh_token, ...admin(svc) })).statusCode, 200, 'the same token again')
  t.equal((await revoke(svc, { token: session.access_token, ...admin(svc) })).statusCode, 200, 'its access token after the sign-in ended')
  const revocations = (await familyEvents(svc, session.access_token)).filter((event) => event.type === 'RefreshTokenFamilyRevoked')
  t.equal(revocations.length, 1, 'revoked once')

  const raced = await signIn(svc, 'fina')
  const answers = await Promise.all([raced.refresh_token, raced.access_token].map((token) => revoke(svc, { token, ...admin(svc) })))
  t.same(answers.map((answer) => answer.statusCode), [200, 200], 'two revocations at once')
  t.equal((await protectedCall(svc, raced.access_token)).statusCode, 401, 'and the sign-in is refused once both are answered')
})

t.test('the request is a form with a token; anything else is invalid_request', async (t) => {
  const svc = await createTestApp(t)
  const json = await svc.app.inject({ method: 'POST', url: '/v1/oauth/revoke', payload: { token: svc.adminToken, ...admin(svc) } })
  t.equal(json.statusCode, 400)
  t.equal(json.json<OAuthErrorBody>().error, 'invalid_request', 'a JSON body is not a form')
  const missing = await revoke(svc, { ...admin(svc) })
  t.equal(missing.statusCode, 400)
  t.equal(missing.json<OAuthErrorBody>().error, 'invalid_request', 'token is required')
  const hint = await revoke(svc, { token: 'x', token_type_hint: 'id_token', ...admin(svc) })
  t.equal(hint.statusCode, 200, 'a hint other than refresh_token or access_token is ignored (RFC 7009 section 2.2)')

  const meta = await svc.app.inject({ method: 'GET', url: '/v1/.well-known/oauth-authorization-server' })
  t.match(meta.json(), { revocation_endpoint: /\/v1\/oauth\/revoke$/, revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'] })
  const openapi = (await svc.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json()
  t.match(openapi.paths['/v1/oauth/revoke'].post, { tags: ['OAuth 2.0'], security: [] }, 'documented beside the token endpoint')
})

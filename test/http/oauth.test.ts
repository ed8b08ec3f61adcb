import t from 'tap'
import { builtInRoleTemplateId } from '../../src/commands/identity.js'
import { totpCode } from '../../src/identity/totp.js'
import { MFA_GRANT } from '../../src/identity/tokens.js'
import { ManualClock } from '../../src/shared/clock.js'
import { createTestApp, requestToken, type TestApp } from '../helpers/app.js'

interface TokenBody { access_token: string; token_type: string; expires_in: number; scope: string; refresh_token?: string }
interface OAuthErrorBody { error: string; error_description: string; mfa_token?: string }

const addUser = async (svc: TestApp, username: string, totp = false) => {
  const response = await svc.call({
    method: 'POST', url: `/v1/organization/${svc.organizationId}/users`, token: svc.adminToken,
    payload: { username, password: 'correct horse battery', roleTemplateId: builtInRoleTemplateId(svc.organizationId, 'analyst'), totp },
  })
  if (response.statusCode !== 201) throw new Error(response.body)
  const body: { data: { user: { id: string }; totp?: { secret: string; uri: string } } } = response.json()
  return body.data
}

const admin = (svc: TestApp) => ({ client_id: svc.config.adminClientId ?? '', client_secret: svc.config.adminClientSecret ?? '' })
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`

const protectedCall = (svc: TestApp, token: string) => svc.call({ method: 'GET', url: '/v1/organizations', token })

t.test('client_credentials with form credentials and with HTTP Basic', async (t) => {
  const svc = await createTestApp(t)
  const form = await requestToken(svc.app, { grant_type: 'client_credentials', ...admin(svc) })
  t.equal(form.statusCode, 200)
  t.equal(form.headers['cache-control'], 'no-store')
  const body: TokenBody = form.json()
  t.equal(body.token_type, 'Bearer')
  t.equal(body.expires_in, 3600)
  t.equal(body.scope, '*')
  t.notOk(body.refresh_token, 'no refresh token for client credentials (RFC 6749 4.4.3)')
  t.equal((await protectedCall(svc, body.access_token)).statusCode, 200, 'accepted by a protected route')

  const viaBasic = await svc.app.inject({
    method: 'POST', url: '/v1/oauth/token',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(admin(svc).client_id, admin(svc).client_secret) },
    payload: 'grant_type=client_credentials&scope=users%3Aread',
  })
  t.equal(viaBasic.statusCode, 200)
  t.equal(viaBasic.json<TokenBody>().scope, 'users:read', 'a narrower scope can be asked for')
  const claims = JSON.parse(Buffer.from(viaBasic.json<TokenBody>().access_token.split('.')[1] ?? '', 'base64url').toString())
  t.has(claims, { sub: admin(svc).client_id, client_id: admin(svc).client_id, scope: 'users:read' })
  for (const claim of ['iat', 'exp', 'jti', 'iss']) t.ok(claims[claim], `claim ${claim} present`)
  t.equal(claims.exp - claims.iat, 3600)
})

t.test('a form client_id beside HTTP Basic must name the Basic client', async (t) => {
  const svc = await createTestApp(t)
  const { client_id, client_secret } = admin(svc)
  const withBasic = (payload: string) => svc.app.inject({
    method: 'POST', url: '/v1/oauth/token',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(client_id, client_secret) },
    payload,
  })
  const same = await withBasic(`grant_type=client_credentials&client_id=${encodeURIComponent(client_id)}`)
  t.equal(same.statusCode, 200, same.body)
  t.equal(same.json<TokenBody>().scope, '*')
  const other = await withBasic('grant_type=client_credentials&client_id=another-client')
  t.equal(other.statusCode, 400)
  t.same(other.json(), { error: 'invalid_request', error_description: 'client_id does not name the client of the HTTP Basic credentials' })
  t.notOk(other.json<Partial<TokenBody>>().access_token, 'no token issued')
})

t.test('password grant, then refresh with rotation; a reused refresh token revokes the family', async (t) => {
  const svc = await createTestApp(t)
  await addUser(svc, 'ana')
  const login = await requestToken(svc.app, { grant_type: 'password', username: 'ana', password: 'correct horse battery', ...admin(svc) })
  t.equal(login.statusCode, 200, login.body)
  const first: TokenBody = login.json()
  t.ok(first.refresh_token)
  t.notMatch(first.scope, /\*/, 'a user never gets the administrator scope')
  t.equal((await protectedCall(svc, first.access_token)).statusCode, 200)

  const refreshed = await requestToken(svc.app, { grant_type: 'refresh_token', refresh_token: first.refresh_token ?? '', ...admin(svc) })
  t.equal(refreshed.statusCode, 200, refreshed.body)
  const second: TokenBody = refreshed.json()
  t.not(second.refresh_token, first.refresh_token, 'the refresh token rotates')
  t.equal((await protectedCall(svc, second.access_token)).statusCode, 200)

  const reuse = await requestToken(svc.app, { grant_type: 'refresh_token', refresh_token: first.refresh_token ?? '', ...admin(svc) })
  t.equal(reuse.statusCode, 400)
  t.equal(reuse.json<OAuthErrorBody>().error, 'invalid_grant')
  const afterReuse = await requestToken(svc.app, { grant_type: 'refresh_token', refresh_token: second.refresh_token ?? '', ...admin(svc) })
  t.equal(afterReuse.json<OAuthErrorBody>().error, 'invalid_grant', 'the newest token of the family is revoked too')
  for (const [which, token] of [['first', first.access_token], ['second', second.access_token]] as const) {
    const refused = await protectedCall(svc, token)
    t.equal(refused.statusCode, 401, `the ${which} access token of the sign-in is refused as soon as the reuse is answered`)
    t.equal(refused.json().data.code, 'INVALID_TOKEN')
  }

  const otherSignIn = await requestToken(svc.app, { grant_type: 'password', username: 'ana', password: 'correct horse battery', ...admin(svc) })
  t.equal((await protectedCall(svc, otherSignIn.json<TokenBody>().access_token)).statusCode, 200, 'another sign-in of the same user is untouched')
  t.equal((await protectedCall(svc, svc.adminToken)).statusCode, 200, 'client-credentials tokens belong to no sign-in')
})

t.test('a sign-in kept alive by refreshes ends at SIGN_IN_MAX_AGE: then the user signs in again', async (t) => {
  const clock = new ManualClock(new Date('2026-03-01T10:00:00Z'))
  const day = 86_400
  const svc = await createTestApp(t, { clock, config: { refreshTokenTtl: 30 * day, signInMaxAge: 40 * day, accessTokenTtl: 3600 } })
  await addUser(svc, 'ana')
  const login = await requestToken(svc.app, { grant_type: 'password', username: 'ana', password: 'correct horse battery', ...admin(svc) })
  let refreshToken = login.json<TokenBody>().refresh_token ?? ''
  const refresh = () => requestToken(svc.app, { grant_type: 'refresh_token', refresh_token: refreshToken, ...admin(svc) })
  clock.advance(29 * day * 1000)
  const kept = await refresh()
  t.equal(kept.statusCode, 200, 'day 29: rotated')
  refreshToken = kept.json<TokenBody>().refresh_token ?? ''
  clock.advance(11 * day * 1000)
  const ended = await refresh()
  t.equal(ended.statusCode, 400, 'day 40: its token is 11 days old, but the sign-in is at its end')
  t.same(ended.json(), { error: 'invalid_grant', error_description: 'the sign-in reached its longest life; sign in again' })
  const again = await requestToken(svc.app, { grant_type: 'password', username: 'ana', password: 'correct horse battery', ...admin(svc) })
  t.equal(again.statusCode, 200, 'a new sign-in starts its own life')
})

t.test('password grant failures', async (t) => {
  const svc = await createTestApp(t)
  await addUser(svc, 'bea')
  const wrong = await requestToken(svc.app, { grant_type: 'password', username: 'bea', password: 'nope', ...admin(svc) })
  t.equal(wrong.statusCode, 400)
  t.equal(wrong.json<OAuthErrorBody>().error, 'invalid_grant')
  const unknown = await requestToken(svc.app, { grant_type: 'password', username: 'nobody', password: 'x', ...admin(svc) })
  t.equal(unknown.json<OAuthErrorBody>().error, 'invalid_grant', 'an unknown user looks like a wrong password')
  const missing = await requestToken(svc.app, { grant_type: 'password', username: 'bea', ...admin(svc) })
  t.equal(missing.json<OAuthErrorBody>().error, 'invalid_request')
})

t.test('TOTP: the password grant asks for a code, the MFA grant exchanges it once', async (t) => {
  const clock = new ManualClock(new Date())
  const svc = await createTestApp(t, { clock })
  const { totp } = await addUser(svc, 'carla', true)
  t.match(totp?.uri, /^otpauth:\/\/totp\//, 'the otpauth URI is returned once at enrolment')
  const secret = totp?.secret ?? ''

  const first = await requestToken(svc.app, { grant_type: 'password', username: 'carla', password: 'correct horse battery', ...admin(svc) })
  t.equal(first.statusCode, 403)
  const challenge: OAuthErrorBody = first.json()
  t.equal(challenge.error, 'mfa_required')
  t.ok(challenge.mfa_token)

  const wrongCode = await requestToken(svc.app, { grant_type: MFA_GRANT, mfa_token: challenge.mfa_token ?? '', otp: '000000', ...admin(svc) })
  t.equal(wrongCode.json<OAuthErrorBody>().error, 'invalid_grant')
  // Six characters of more than six bytes: counted as wrong codes (four of the five before a lockout, with the one above).
  for (const otp of ['١٢٣٤٥٦', 'éééééé', '12345é']) {
    const odd = await requestToken(svc.app, { grant_type: MFA_GRANT, mfa_token: challenge.mfa_token ?? '', otp, ...admin(svc) })
    t.equal(odd.statusCode, 400, `${otp} is a wrong code`)
    t.equal(odd.json<OAuthErrorBody>().error_description, 'the one-time code is wrong')
  }

  const code = totpCode(secret, clock.now())
  const ok = await requestToken(svc.app, { grant_type: MFA_GRANT, mfa_token: challenge.mfa_token ?? '', otp: code, ...admin(svc) })
  t.equal(ok.statusCode, 200, ok.body)
  const tokens: TokenBody = ok.json()
  t.ok(tokens.refresh_token)
  t.equal((await protectedCall(svc, tokens.access_token)).statusCode, 200)

  const replay = await requestToken(svc.app, { grant_type: MFA_GRANT, mfa_token: challenge.mfa_token ?? '', otp: code, ...admin(svc) })
  t.equal(replay.json<OAuthErrorBody>().error, 'invalid_grant', 'a code works once')

  clock.advance(10 * 60 * 1000)
  const late = await requestToken(svc.app, { grant_type: MFA_GRANT, mfa_token: challenge.mfa_token ?? '', otp: totpCode(secret, clock.now()), ...admin(svc) })
  t.equal(late.json<OAuthErrorBody>().error, 'invalid_grant', 'the mfa_token expires')

  const notMfa = await requestToken(svc.app, { grant_type: MFA_GRANT, mfa_token: tokens.access_token, otp: totpCode(secret, clock.now()), ...admin(svc) })
  t.equal(notMfa.json<OAuthErrorBody>().error, 'invalid_grant', 'an access token is not an mfa_token')
})

t.test('an mfa_token opens one sign-in: after its code, a later code with it is refused, a new password step is not', async (t) => {
  const clock = new ManualClock(new Date())
  const svc = await createTestApp(t, { clock })
  const { totp } = await addUser(svc, 'carla', true)
  const secret = totp?.secret ?? ''
  const challenge = async () =>
    (await requestToken(svc.app, { grant_type: 'password', username: 'carla', password: 'correct horse battery', ...admin(svc) })).json<OAuthErrorBody>().mfa_token ?? ''
  const mfaToken = await challenge()
  const first = await requestToken(svc.app, { grant_type: MFA_GRANT, mfa_token: mfaToken, otp: totpCode(secret, clock.now()), ...admin(svc) })
  t.equal(first.statusCode, 200, first.body)

  clock.advance(60_000)
  const again = await requestToken(svc.app, { grant_type: MFA_GRANT, mfa_token: mfaToken, otp: totpCode(secret, clock.now()), ...admin(svc) })
  t.equal(again.statusCode, 400)
  t.same(again.json(), { error: 'invalid_grant', error_description: 'mfa_token was already used: sign in again' }, 'the next code does not reuse the token')

  const fresh = await requestToken(svc.app, { grant_type: MFA_GRANT, mfa_token: await challenge(), otp: totpCode(secret, clock.now()), ...admin(svc) })
  t.equal(fresh.statusCode, 200, 'the spent token counted no failure: a new password step signs in with that code')
})

t.test('token endpoint errors follow RFC 6749 section 5.2', async (t) => {
  const svc = await createTestApp(t)
  const json = await svc.app.inject({ method: 'POST', url: '/v1/oauth/token', payload: { grant_type: 'client_credentials', ...admin(svc) } })
  t.equal(json.statusCode, 400)
  t.equal(json.json<OAuthErrorBody>().error, 'invalid_request', 'a JSON body is not a form')

  const text = await svc.app.inject({ method: 'POST', url: '/v1/oauth/token', headers: { 'content-type': 'text/plain' }, payload: 'grant_type=x' })
  t.equal(text.json<OAuthErrorBody>().error, 'invalid_request', 'an unsupported content type')

  const noGrant = await requestToken(svc.app, { ...admin(svc) })
  t.equal(noGrant.json<OAuthErrorBody>().error, 'invalid_request')

  const unknownGrant = await requestToken(svc.app, { grant_type: 'implicit', ...admin(svc) })
  t.equal(unknownGrant.statusCode, 400)
  t.equal(unknownGrant.json<OAuthErrorBody>().error, 'unsupported_grant_type')

  const wrongSecret = await requestToken(svc.app, { grant_type: 'client_credentials', client_id: admin(svc).client_id, client_secret: 'wrong' })
  t.equal(wrongSecret.statusCode, 401)
  t.equal(wrongSecret.json<OAuthErrorBody>().error, 'invalid_client')
  t.match(wrongSecret.headers['www-authenticate'], /^Basic realm=/)

  const noClient = await requestToken(svc.app, { grant_type: 'client_credentials' })
  t.equal(noClient.statusCode, 401)

  const badScope = await requestToken(svc.app, { grant_type: 'client_credentials', scope: 'rockets:launch', ...admin(svc) })
  t.equal(badScope.json<OAuthErrorBody>().error, 'invalid_scope')

  const malformedBasic = await svc.app.inject({
    method: 'POST', url: '/v1/oauth/token',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: 'Basic !!!' },
    payload: 'grant_type=client_credentials',
  })
  t.equal(malformedBasic.json<OAuthErrorBody>().error, 'invalid_client')

  const unknownRefresh = await requestToken(svc.app, { grant_type: 'refresh_token', refresh_token: 'nope.nope', ...admin(svc) })
  t.equal(unknownRefresh.json<OAuthErrorBody>().error, 'invalid_grant')
})

t.test('a client limited to some scopes cannot ask for others', async (t) => {
  const svc = await createTestApp(t)
  const created = await svc.call({
    method: 'POST', url: '/v1/oauth/clients', token: svc.adminToken,
    payload: { name: 'reporting', scopes: ['users:read'], organizationId: svc.organizationId, roleTemplateId: builtInRoleTemplateId(svc.organizationId, 'analyst') },
  })
  t.equal(created.statusCode, 201, created.body)
  const client: { data: { client: { client_id: string; client_secret: string } } } = created.json()
  const { client_id, client_secret } = client.data.client
  t.equal((await requestToken(svc.app, { grant_type: 'client_credentials', client_id, client_secret })).json<TokenBody>().scope, 'users:read')
  const greedy = await requestToken(svc.app, { grant_type: 'client_credentials', scope: 'clients:write', client_id, client_secret })
  t.equal(greedy.json<OAuthErrorBody>().error, 'invalid_scope')
})

t.test('publishes the verification keys as a JWKS and the server metadata', async (t) => {
  const svc = await createTestApp(t)
  const jwks = await svc.app.inject({ method: 'GET', url: '/v1/.well-known/jwks.json' })
  t.equal(jwks.statusCode, 200)
  const { keys }: { keys: Array<Record<string, string>> } = jwks.json()
  t.equal(keys.length, 1)
  t.has(keys[0], { kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig', kid: svc.runtime.signingKey.kid })
  t.notOk(keys[0]?.['d'], 'no private part')
  const meta = await svc.app.inject({ method: 'GET', url: '/v1/.well-known/oauth-authorization-server' })
  t.match(meta.json(), { grant_types_supported: ['client_credentials', 'password', 'refresh_token', MFA_GRANT] })
  const atRoot = await svc.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' })
  t.equal(atRoot.statusCode, 200, 'where RFC 8414 puts it for an issuer without a path')
  t.same(atRoot.json(), meta.json())
  t.equal(new URL(atRoot.json<{ issuer: string }>().issuer).pathname, '/', 'the issuer has no path')
})

const changePassword = (svc: TestApp, token: string, payload: object) =>
  svc.call({ method: 'POST', url: '/v1/me/password', token, payload })
const signIn = async (svc: TestApp, username: string, password: string, scope?: string): Promise<TokenBody> => {
  const response = await requestToken(svc.app, { grant_type: 'password', username, password, ...admin(svc), ...(scope === undefined ? {} : { scope }) })
  if (response.statusCode !== 200) throw new Error(response.body)
  return response.json()
}
const claimsOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString())

t.test('a password change ends every token issued before it; the new password signs in', async (t) => {
  const svc = await createTestApp(t)
  await addUser(svc, 'dora')
  const old = 'correct horse battery'
  const first = await signIn(svc, 'dora', old)
  const second = await signIn(svc, 'dora', old)
  const rotated: TokenBody = (await requestToken(svc.app, { grant_type: 'refresh_token', refresh_token: first.refresh_token ?? '', ...admin(svc) })).json()
  t.equal(claimsOf(first.access_token).pwv, undefined, 'a user who never changed the password has version 0, left out of the token')

  const refusals: Array<[string, object, string]> = [
    ['a wrong current password', { currentPassword: 'wrong', newPassword: 'staple battery horse' }, 'body.currentPassword'],
    ['the same password again', { currentPassword: old, newPassword: old }, 'body.newPassword'],
    ['a short new password', { currentPassword: old, newPassword: 'short' }, 'body.newPassword'],
  ]
  for (const [name, payload, field] of refusals) {
    const refused = await changePassword(svc, first.access_token, payload)
    t.equal(refused.statusCode, 400, name)
    t.equal(refused.json().data.errors[0].field, field, name)
  }
  const client = await changePassword(svc, svc.adminToken, { currentPassword: old, newPassword: 'staple battery horse' })
  t.equal(client.statusCode, 403, 'a client token has no password')
  t.equal(client.json().data.code, 'FORBIDDEN')
  const narrow = await signIn(svc, 'dora', old, 'users:read')
  const unscoped = await changePassword(svc, narrow.access_token, { currentPassword: old, newPassword: 'staple battery horse' })
  t.equal(unscoped.statusCode, 403, 'the token needs scope passwords:write')
  t.equal(unscoped.json().data.code, 'INSUFFICIENT_SCOPE')
  t.equal((await protectedCall(svc, second.access_token)).statusCode, 200, 'nothing was changed by the refusals')

  const changed = await changePassword(svc, second.access_token, { currentPassword: old, newPassword: 'staple battery horse' })
  t.equal(changed.statusCode, 204, changed.body)
  for (const [which, token] of [['first', first.access_token], ['second', second.access_token], ['refreshed', rotated.access_token], ['narrow', narrow.access_token]]) {
    const refused = await protectedCall(svc, token ?? '')
    t.equal(refused.statusCode, 401, `the ${which} access token ends with the change`)
    t.equal(refused.json().data.code, 'INVALID_TOKEN')
  }
  for (const refreshToken of [rotated.refresh_token, second.refresh_token]) {
    const refresh = await requestToken(svc.app, { grant_type: 'refresh_token', refresh_token: refreshToken ?? '', ...admin(svc) })
    t.equal(refresh.json<OAuthErrorBody>().error, 'invalid_grant', 'so do the refresh tokens')
  }
  const oldPassword = await requestToken(svc.app, { grant_type: 'password', username: 'dora', password: old, ...admin(svc) })
  t.equal(oldPassword.json<OAuthErrorBody>().error, 'invalid_grant', 'the old password no longer signs in')

  const fresh = await signIn(svc, 'dora', 'staple battery horse')
  t.equal(claimsOf(fresh.access_token).pwv, 1)
  t.equal((await protectedCall(svc, fresh.access_token)).statusCode, 200)
  const refreshed = await requestToken(svc.app, { grant_type: 'refresh_token', refresh_token: fresh.refresh_token ?? '', ...admin(svc) })
  t.equal(refreshed.statusCode, 200, 'a sign-in after the change refreshes')
  t.equal((await protectedCall(svc, refreshed.json<TokenBody>().access_token)).statusCode, 200)
})

t.test('two changes racing from the same current password: one wins, the other changes nothing', async (t) => {
  const svc = await createTestApp(t)
  await addUser(svc, 'elsa')
  const old = 'correct horse battery'
  const token = (await signIn(svc, 'elsa', old)).access_token
  const answers = await Promise.all(['first new password', 'second new password'].map((newPassword) =>
    changePassword(svc, token, { currentPassword: old, newPassword })))
  const statuses = answers.map((answer) => answer.statusCode).sort()
  t.equal(statuses[0], 204, 'one change is made')
  // A user's attempts are checked one at a time, so the second finds the password already changed.
  t.ok(statuses[1] === 400 || statuses[1] === 401, `the other is refused (${statuses[1]}): its current password is no longer current, or its token already ended`)
  const signedIn = await Promise.all(['first new password', 'second new password'].map((password) =>
    requestToken(svc.app, { grant_type: 'password', username: 'elsa', password, ...admin(svc) })))
  t.same(signedIn.map((answer) => answer.statusCode).sort(), [200, 400], 'exactly one of the new passwords signs in')
})

t.test('an mfa_token issued before a password change cannot complete the sign-in', async (t) => {
  const clock = new ManualClock(new Date())
  const svc = await createTestApp(t, { clock })
  const { totp } = await addUser(svc, 'fina', true)
  const secret = totp?.secret ?? ''
  const challenge = async (password: string) =>
    (await requestToken(svc.app, { grant_type: 'password', username: 'fina', password, ...admin(svc) })).json<OAuthErrorBody>().mfa_token ?? ''
  const signedIn = await requestToken(svc.app, { grant_type: MFA_GRANT, mfa_token: await challenge('correct horse battery'), otp: totpCode(secret, clock.now()), ...admin(svc) })
  t.equal(signedIn.statusCode, 200, signedIn.body)
  const pending = await challenge('correct horse battery')
  const changed = await changePassword(svc, signedIn.json<TokenBody>().access_token, { currentPassword: 'correct horse battery', newPassword: 'staple battery horse' })
  t.equal(changed.statusCode, 204, changed.body)
  clock.advance(30_000)
  const late = await requestToken(svc.app, { grant_type: MFA_GRANT, mfa_token: pending, otp: totpCode(secret, clock.now()), ...admin(svc) })
  t.equal(late.json<OAuthErrorBody>().error, 'invalid_grant')
  t.match(late.json<OAuthErrorBody>().error_description, /password was changed/)
  clock.advance(30_000)
  const after = await requestToken(svc.app, { grant_type: MFA_GRANT, mfa_token: await challenge('staple battery horse'), otp: totpCode(secret, clock.now()), ...admin(svc) })
  t.equal(after.statusCode, 200, 'the new password with a code signs in')
})

const userEventTypes = async (svc: TestApp, userId: string): Promise<string[]> => {
  const types: string[] = []
  for await (const event of svc.runtime.eventStore.readStream(`user-${userId}`)) types.push(event.type)
  return types
}
const count = (types: string[], type: string) => types.filter((each) => each === type).length
const passwordGrant = (svc: TestApp, username: string, password: string) =>
  requestToken(svc.app, { grant_type: 'password', username, password, ...admin(svc) })

t.test('wrong passwords in a row lock the sign-in for the lockout time, the right password included; then it opens again', async (t) => {
  const clock = new ManualClock(new Date('2026-11-23T10:00:00.000Z'))
  const svc = await createTestApp(t, { clock, config: { signInMaxFailures: 5, signInLockoutSeconds: 900 } })
  const { user } = await addUser(svc, 'gala')
  const right = 'correct horse battery'
  for (let i = 0; i < 4; i++) t.equal((await passwordGrant(svc, 'gala', 'wrong')).json<OAuthErrorBody>().error_description, 'invalid username or password')
  t.equal((await passwordGrant(svc, 'gala', right)).statusCode, 200, 'four in a row do not lock, and a sign-in starts the count again')
  const session = await signIn(svc, 'gala', right)
  for (let i = 0; i < 5; i++) {
    const wrong = await passwordGrant(svc, 'gala', 'wrong')
    t.equal(wrong.json<OAuthErrorBody>().error_description, 'invalid username or password', `failure ${i + 1} is an ordinary refusal`)
  }
  for (const password of [right, 'wrong']) {
    const locked = await passwordGrant(svc, 'gala', password)
    t.equal(locked.statusCode, 400)
    t.equal(locked.json<OAuthErrorBody>().error, 'invalid_grant')
    t.equal(locked.json<OAuthErrorBody>().error_description,
      'too many wrong passwords or codes in a row; sign-in is locked until 2026-11-23T10:15:00.000Z', 'the same answer whatever the password')
    t.equal(locked.headers['retry-after'], '900')
  }
  const change = await changePassword(svc, session.access_token, { currentPassword: right, newPassword: 'staple battery horse' })
  t.equal(change.statusCode, 429, 'a password change is locked too')
  t.match(change.json(), { data: { code: 'SIGN_IN_LOCKED', lockedUntil: '2026-11-23T10:15:00.000Z', retryAfter: 900 } })
  t.equal(change.headers['retry-after'], '900')
  t.equal((await protectedCall(svc, session.access_token)).statusCode, 200, 'tokens already issued keep working')

  const types = await userEventTypes(svc, user.id)
  t.equal(count(types, 'UserSignInFailed'), 9, 'each wrong password was recorded, none while locked')
  t.equal(count(types, 'UserSignInLocked'), 1)
  t.equal(count(types, 'UserSignInFailuresCleared'), 1)

  clock.advance(899_000)
  t.equal((await passwordGrant(svc, 'gala', right)).headers['retry-after'], '1', 'still locked a second before the end')
  clock.advance(1_000)
  t.equal((await passwordGrant(svc, 'gala', right)).statusCode, 200, 'the right password signs in once the lock ends')
})

t.test('wrong one-time codes count too, and a right password before the code does not clear them', async (t) => {
  const clock = new ManualClock(new Date('2026-11-23T10:00:00.000Z'))
  const svc = await createTestApp(t, { clock, config: { signInMaxFailures: 5, signInLockoutSeconds: 600 } })
  const { user, totp } = await addUser(svc, 'hebe', true)
  const secret = totp?.secret ?? ''
  const challenge = async () => (await passwordGrant(svc, 'hebe', 'correct horse battery')).json<OAuthErrorBody>().mfa_token ?? ''
  const guess = (mfaToken: string) => requestToken(svc.app, { grant_type: MFA_GRANT, mfa_token: mfaToken, otp: '000000', ...admin(svc) })
  const first = await challenge()
  for (let i = 0; i < 3; i++) t.equal((await guess(first)).json<OAuthErrorBody>().error_description, 'the one-time code is wrong')
  const second = await challenge()
  t.ok(second, 'the right password still asks for the code')
  t.equal((await guess(second)).json<OAuthErrorBody>().error_description, 'the one-time code is wrong')
  t.equal((await guess(second)).json<OAuthErrorBody>().error_description, 'the one-time code is wrong', 'the fifth wrong code')
  const rightCode = await requestToken(svc.app, { grant_type: MFA_GRANT, mfa_token: second, otp: totpCode(secret, clock.now()), ...admin(svc) })
  t.equal(rightCode.statusCode, 400, 'the right code is refused while locked')
  t.match(rightCode.json<OAuthErrorBody>().error_description, /locked until 2026-11-23T10:10:00.000Z/)
  const again = await passwordGrant(svc, 'hebe', 'correct horse battery')
  t.equal(again.json<OAuthErrorBody>().error, 'invalid_grant', 'and the password gives no new mfa_token')
  t.equal(again.json<OAuthErrorBody>().mfa_token, undefined)
  const types = await userEventTypes(svc, user.id)
  t.equal(count(types, 'UserSignInFailed'), 5)
  t.equal(count(types, 'UserSignInFailuresCleared'), 0, 'the password alone cleared nothing')
  clock.advance(600_000)
  const after = await requestToken(svc.app, { grant_type: MFA_GRANT, mfa_token: await challenge(), otp: totpCode(secret, clock.now()), ...admin(svc) })
  t.equal(after.statusCode, 200, 'after the lock the password and code sign in')
})

t.test('wrong current passwords of a password change count toward the lock', async (t) => {
  const svc = await createTestApp(t, { config: { signInMaxFailures: 3, signInLockoutSeconds: 60 } })
  await addUser(svc, 'ines')
  const right = 'correct horse battery'
  const token = (await signIn(svc, 'ines', right)).access_token
  for (let i = 0; i < 3; i++) {
    const wrong = await changePassword(svc, token, { currentPassword: 'wrong', newPassword: 'staple battery horse' })
    t.equal(wrong.statusCode, 400, `wrong current password ${i + 1}`)
  }
  const locked = await changePassword(svc, token, { currentPassword: right, newPassword: 'staple battery horse' })
  t.equal(locked.statusCode, 429)
  t.equal(locked.json().data.code, 'SIGN_IN_LOCKED')
  t.match((await passwordGrant(svc, 'ines', right)).json<OAuthErrorBody>().error_description, /locked until/, 'and so is the sign-in')
})

t.test('wrong passwords sent all at once record the limit and no more; the lock holds for the right one', async (t) => {
  const svc = await createTestApp(t, { config: { signInMaxFailures: 5, signInLockoutSeconds: 900 } })
  const { user } = await addUser(svc, 'jana')
  const answers = await Promise.all(Array.from({ length: 20 }, () => passwordGrant(svc, 'jana', 'wrong')))
  t.ok(answers.every((answer) => answer.json<OAuthErrorBody>().error === 'invalid_grant'), 'every guess is refused')
  const types = await userEventTypes(svc, user.id)
  t.equal(count(types, 'UserSignInFailed'), 5, 'the stream holds five failures however many raced')
  t.equal(count(types, 'UserSignInLocked'), 1)
  t.match((await passwordGrant(svc, 'jana', 'correct horse battery')).json<OAuthErrorBody>().error_description, /locked until/)
  const unknown = await Promise.all(Array.from({ length: 6 }, () => passwordGrant(svc, 'nobody', 'wrong')))
  t.ok(unknown.every((answer) => answer.json<OAuthErrorBody>().error_description === 'invalid username or password'),
    'an unknown username is never locked, so a lock tells nothing about which names exist without guessing them')
})

t.test('a client of another organization cannot test a user\'s password: right and wrong answer alike, and nothing is counted', async (t) => {
  const svc = await createTestApp(t, { config: { signInMaxFailures: 2 } })
  const { user } = await addUser(svc, 'kira')
  const other = await svc.call({ method: 'POST', url: '/v1/organizations', token: svc.adminToken, payload: { name: 'Other' } })
  const otherId = other.json<{ data: { organization: { id: string } } }>().data.organization.id
  const created = await svc.call({
    method: 'POST', url: '/v1/oauth/clients', token: svc.adminToken,
    payload: { name: 'foreign app', scopes: [], organizationId: otherId, roleTemplateId: builtInRoleTemplateId(otherId, 'analyst') },
  })
  const foreign = created.json<{ data: { client: { client_id: string; client_secret: string } } }>().data.client
  const attempt = (password: string) => requestToken(svc.app, { grant_type: 'password', username: 'kira', password, ...foreign })
  const [right, wrong, unknown] = await Promise.all([attempt('correct horse battery'), attempt('wrong'),
    requestToken(svc.app, { grant_type: 'password', username: 'nobody', password: 'x', ...foreign })])
  t.same([right.statusCode, right.json()], [wrong.statusCode, wrong.json()], 'the right password answers as a wrong one')
  t.same(right.json(), unknown.json(), 'and as an unknown user')
  for (let i = 0; i < 3; i++) await attempt('wrong')
  t.equal(count(await userEventTypes(svc, user.id), 'UserSignInFailed'), 0, 'no failure was counted against the user')
  t.equal((await passwordGrant(svc, 'kira', 'correct horse battery')).statusCode, 200, 'the user is not locked out')
})

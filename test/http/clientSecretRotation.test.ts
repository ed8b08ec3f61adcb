import t from 'tap'
import { builtInRoleTemplateId } from '../../src/commands/identity.js'
import { createTestApp, requestToken, type TestApp } from '../helpers/app.js'

interface Credentials { client_id: string; client_secret: string }
interface TokenBody { access_token: string; refresh_token?: string }

const PASSWORD = 'correct horse battery'

const protectedCall = (svc: TestApp, token: string) => svc.call({ method: 'GET', url: '/v1/me', token })
const claimsOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString())

const rotate = async (svc: TestApp, clientId: string): Promise<Credentials> => {
  const rotated = await svc.call({ method: 'POST', url: `/v1/organization/${svc.organizationId}/clients/${clientId}/secret`, token: svc.adminToken })
  if (rotated.statusCode !== 200) throw new Error(rotated.body)
  return rotated.json<{ data: { client: Credentials } }>().data.client
}

t.test('a new client secret ends the client\'s own tokens issued before it; users\' tokens through the client keep working', async (t) => {
  const svc = await createTestApp(t)
  const org = svc.organizationId
  const created = await svc.call({
    method: 'POST', url: '/v1/oauth/clients', token: svc.adminToken,
    payload: { name: 'batch job', scopes: [], organizationId: org, roleTemplateId: builtInRoleTemplateId(org, 'analyst') },
  })
  t.equal(created.statusCode, 201, created.body)
  const original = created.json<{ data: { client: Credentials } }>().data.client
  const user = await svc.call({
    method: 'POST', url: `/v1/organization/${org}/users`, token: svc.adminToken,
    payload: { username: 'ana', password: PASSWORD, roleTemplateId: builtInRoleTemplateId(org, 'analyst') },
  })
  t.equal(user.statusCode, 201, user.body)

  const before = await svc.clientToken(original.client_id, original.client_secret)
  t.equal(claimsOf(before).csv, undefined, 'a client whose secret never changed has version 0, left out of the token')
  const signIn = await requestToken(svc.app, { grant_type: 'password', username: 'ana', password: PASSWORD, ...original })
  t.equal(signIn.statusCode, 200, signIn.body)
  const session: TokenBody = signIn.json()
  t.equal(claimsOf(session.access_token).csv, undefined, 'a user\'s token carries no secret version')

  const second = await rotate(svc, original.client_id)
  const refused = await protectedCall(svc, before)
  t.equal(refused.statusCode, 401, 'the client\'s token issued with the old secret is refused from the answer on')
  t.match(refused.json(), { data: { code: 'INVALID_TOKEN', message: 'the client secret was changed since this token was issued' } })
  t.equal((await protectedCall(svc, session.access_token)).statusCode, 200, 'the user\'s token issued through the client keeps working')
  t.equal((await protectedCall(svc, svc.adminToken)).statusCode, 200, 'another client\'s token is untouched')

  const oldSecretRefresh = await requestToken(svc.app, { grant_type: 'refresh_token', refresh_token: session.refresh_token ?? '', ...original })
  t.equal(oldSecretRefresh.statusCode, 401, 'refreshing the user\'s sign-in takes the new secret')
  const refreshed = await requestToken(svc.app, { grant_type: 'refresh_token', refresh_token: session.refresh_token ?? '', ...second })
  t.equal(refreshed.statusCode, 200, refreshed.body)

  const after = await svc.clientToken(second.client_id, second.client_secret)
  t.equal(claimsOf(after).csv, 1, 'a token of the new secret carries its version')
  t.equal((await protectedCall(svc, after)).statusCode, 200, 'and works')

  const third = await rotate(svc, original.client_id)
  t.equal((await protectedCall(svc, after)).statusCode, 401, 'the next rotation ends it in turn')
  const latest = await svc.clientToken(third.client_id, third.client_secret)
  t.equal(claimsOf(latest).csv, 2)
  t.equal((await protectedCall(svc, latest)).statusCode, 200)
})

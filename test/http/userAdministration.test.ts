import t from 'tap'
import { builtInRoleTemplateId } from '../../src/commands/identity.js'
import { ManualClock } from '../../src/shared/clock.js'
import { createTestApp, requestToken, type TestApp } from '../helpers/app.js'
import { addMember, createOrganization } from '../helpers/members.js'

const PASSWORD = 'correct horse battery'

interface UserView { id: string; username: string; roleTemplateId: string | null; active: boolean; signInLockedUntil: string | null }
interface ClientCredentials { client_id: string; client_secret: string }

const adminClient = (svc: TestApp) => ({ client_id: svc.config.adminClientId ?? '', client_secret: svc.config.adminClientSecret ?? '' })
const passwordGrant = (svc: TestApp, username: string, password: string, client?: ClientCredentials) =>
  requestToken(svc.app, { grant_type: 'password', username, password, ...(client ?? adminClient(svc)) })
const users = (organizationId: string) => `/v1/organization/${organizationId}/users`
const protectedCall = (svc: TestApp, token: string) => svc.call({ method: 'GET', url: '/v1/me', token })

const newClient = async (svc: TestApp, organizationId: string, name: string, scopes: string[] = []): Promise<ClientCredentials> => {
  const created = await svc.call({
    method: 'POST', url: '/v1/oauth/clients', token: svc.adminToken,
    payload: { name, scopes, organizationId, roleTemplateId: builtInRoleTemplateId(organizationId, 'administrator') },
  })
  if (created.statusCode !== 201) throw new Error(created.body)
  return created.json<{ data: { client: ClientCredentials } }>().data.client
}

t.test('an administrator lists and reads the organization\'s users; other organizations and non-managers see none', async (t) => {
  const svc = await createTestApp(t)
  const org = svc.organizationId
  const first = await addMember(svc, org, 'ana', 'analyst')
  const second = await addMember(svc, org, 'bruno', 'administrator')
  const other = await createOrganization(svc, 'Other')
  const outsider = await addMember(svc, other, 'carl', 'administrator')

  const page = await svc.call({ method: 'GET', url: `${users(org)}?limit=1`, token: svc.adminToken })
  t.equal(page.statusCode, 200, page.body)
  const body = page.json<{ data: UserView[]; pagination: { total_items: number; total_pages: number } }>()
  t.same(body.data.map((u) => u.username), ['bruno'], 'newest first')
  t.match(body.pagination, { total_items: 2, total_pages: 2 })
  const one = await svc.call({ method: 'GET', url: `${users(org)}/${first.userId}`, token: svc.adminToken })
  t.match(one.json(), { data: { user: {
    id: first.userId, username: 'ana', roleTemplateId: builtInRoleTemplateId(org, 'analyst'), active: true, totpEnrolled: false, signInLockedUntil: null,
  } } })
  t.notOk(JSON.stringify(one.json()).includes('passwordHash'), 'never the password hash')

  const foreign = await svc.call({ method: 'GET', url: `${users(org)}/${outsider.userId}`, token: svc.adminToken })
  t.equal(foreign.statusCode, 404, 'a user of another organization is not found under this one')
  const fromOutside = await svc.call({ method: 'GET', url: users(org), token: outsider.token })
  t.equal(fromOutside.statusCode, 403, 'a member of another organization may not list these users')
  const analyst = await svc.call({ method: 'GET', url: users(org), token: first.token })
  t.equal(analyst.statusCode, 403, 'a member without ManageMembers may not either')
  t.equal(analyst.json().data.permission, 'ManageMembers')
  t.equal((await svc.call({ method: 'GET', url: users(org), token: second.token })).statusCode, 200, 'an organization administrator may')
})

t.test('a deactivated user\'s tokens are refused at once and it cannot sign in; a caller cannot deactivate itself', async (t) => {
  const svc = await createTestApp(t)
  const org = svc.organizationId
  const leaving = await addMember(svc, org, 'dana', 'analyst')
  const manager = await addMember(svc, org, 'emil', 'administrator')
  t.equal((await protectedCall(svc, leaving.token)).statusCode, 200)

  const deactivated = await svc.call({ method: 'POST', url: `${users(org)}/${leaving.userId}/deactivate`, token: manager.token })
  t.equal(deactivated.statusCode, 200, deactivated.body)
  t.equal(deactivated.json<{ data: { user: UserView } }>().data.user.active, false)
  const refused = await protectedCall(svc, leaving.token)
  t.equal(refused.statusCode, 401, 'the earlier token is refused from the answer on')
  t.equal(refused.json().data.code, 'INVALID_TOKEN')
  t.equal((await passwordGrant(svc, 'dana', PASSWORD)).json<{ error: string }>().error, 'invalid_grant', 'no new sign-in')
  const again = await svc.call({ method: 'POST', url: `${users(org)}/${leaving.userId}/deactivate`, token: manager.token })
  t.equal(again.statusCode, 200, 'deactivating again changes nothing')

  const self = await svc.call({ method: 'POST', url: `${users(org)}/${manager.userId}/deactivate`, token: manager.token })
  t.equal(self.statusCode, 409)
  t.equal(self.json().data.code, 'CONFLICT')
  t.equal((await protectedCall(svc, manager.token)).statusCode, 200)
  const reset = await svc.call({ method: 'POST', url: `${users(org)}/${leaving.userId}/password`, token: svc.adminToken, payload: { newPassword: 'staple battery horse' } })
  t.equal(reset.statusCode, 409, 'a deactivated user\'s password is not reset')
  t.equal(reset.json().data.code, 'NOT_ACTIVE')
})

t.test('an administrator lifts a sign-in lock, and a password reset ends the user\'s tokens and lifts a lock too', async (t) => {
  const clock = new ManualClock(new Date('2026-11-23T10:00:00.000Z'))
  const svc = await createTestApp(t, { clock, config: { signInMaxFailures: 2, signInLockoutSeconds: 900 } })
  const org = svc.organizationId
  const user = await addMember(svc, org, 'fede', 'analyst')
  const lock = async () => {
    for (let i = 0; i < 2; i++) await passwordGrant(svc, 'fede', 'wrong')
    t.match((await passwordGrant(svc, 'fede', PASSWORD)).json<{ error_description: string }>().error_description, /locked until/)
  }
  const view = async () => (await svc.call({ method: 'GET', url: `${users(org)}/${user.userId}`, token: svc.adminToken })).json<{ data: { user: UserView } }>().data.user
  await lock()
  t.equal((await view()).signInLockedUntil, '2026-11-23T10:15:00.000Z', 'the administrator sees the lock')

  const unlocked = await svc.call({ method: 'POST', url: `${users(org)}/${user.userId}/unlock`, token: svc.adminToken })
  t.equal(unlocked.statusCode, 200, unlocked.body)
  t.equal(unlocked.json<{ data: { user: UserView } }>().data.user.signInLockedUntil, null)
  t.equal((await passwordGrant(svc, 'fede', PASSWORD)).statusCode, 200, 'the user signs in again')
  t.equal((await protectedCall(svc, user.token)).statusCode, 200, 'an unlock ends no token')

  await lock()
  await addMember(svc, org, 'gert', 'administrator')
  const scoped = (await passwordGrant(svc, 'gert', PASSWORD)).json<{ access_token: string }>()
  const withoutScope = await requestToken(svc.app, { grant_type: 'password', username: 'gert', password: PASSWORD, scope: 'users:read', ...adminClient(svc) })
  const unscoped = await svc.call({
    method: 'POST', url: `${users(org)}/${user.userId}/password`, token: withoutScope.json<{ access_token: string }>().access_token,
    payload: { newPassword: 'staple battery horse' },
  })
  t.equal(unscoped.statusCode, 403, 'a reset needs scope passwords:write')
  t.equal(unscoped.json().data.code, 'INSUFFICIENT_SCOPE')
  const reset = await svc.call({ method: 'POST', url: `${users(org)}/${user.userId}/password`, token: scoped.access_token, payload: { newPassword: 'staple battery horse' } })
  t.equal(reset.statusCode, 204, reset.body)
  t.equal((await protectedCall(svc, user.token)).statusCode, 401, 'the user\'s earlier tokens end')
  t.equal((await passwordGrant(svc, 'fede', PASSWORD)).json<{ error_description: string }>().error_description, 'invalid username or password',
    'the old password no longer signs in, and the lock is lifted')
  t.equal((await passwordGrant(svc, 'fede', 'staple battery horse')).statusCode, 200, 'the new one does')
  const foreign = await createOrganization(svc, 'Elsewhere')
  const stranger = await addMember(svc, foreign, 'hana', 'administrator')
  const across = await svc.call({ method: 'POST', url: `${users(foreign)}/${user.userId}/password`, token: stranger.token, payload: { newPassword: 'x'.repeat(12) } })
  t.equal(across.statusCode, 404, 'another organization\'s administrator cannot reach the user')
})

t.test('a revoked client gets no token, and every token issued through it ends, users\' included', async (t) => {
  const svc = await createTestApp(t)
  const org = svc.organizationId
  await addMember(svc, org, 'ivo', 'analyst')
  const app = await newClient(svc, org, 'mobile app')
  const clientToken = await svc.clientToken(app.client_id, app.client_secret)
  const userToken = (await passwordGrant(svc, 'ivo', PASSWORD, app)).json<{ access_token: string }>().access_token
  t.equal((await protectedCall(svc, userToken)).statusCode, 200)

  const listed = await svc.call({ method: 'GET', url: `/v1/organization/${org}/clients`, token: svc.adminToken })
  t.equal(listed.statusCode, 200, listed.body)
  t.ok(listed.json<{ data: Array<{ client_id: string }> }>().data.some((c) => c.client_id === app.client_id))
  t.notOk(listed.body.includes(app.client_secret), 'secrets are never listed')
  t.notOk(listed.body.includes('secretHash'))

  const revoked = await svc.call({ method: 'POST', url: `/v1/organization/${org}/clients/${app.client_id}/revoke`, token: svc.adminToken })
  t.equal(revoked.statusCode, 200, revoked.body)
  t.equal(revoked.json<{ data: { client: { revoked: boolean } } }>().data.client.revoked, true)
  t.equal((await protectedCall(svc, clientToken)).statusCode, 401, 'the client\'s token ends')
  t.equal((await protectedCall(svc, userToken)).statusCode, 401, 'so does a user\'s token issued through it')
  const grant = await requestToken(svc.app, { grant_type: 'client_credentials', ...app })
  t.equal(grant.statusCode, 401)
  t.equal(grant.json<{ error: string }>().error, 'invalid_client')
  const rotate = await svc.call({ method: 'POST', url: `/v1/organization/${org}/clients/${app.client_id}/secret`, token: svc.adminToken })
  t.equal(rotate.statusCode, 409, 'a revoked client gets no new secret')
})

t.test('a new client secret replaces the old one at once; a client cannot change itself, nor a non-platform administrator a * client', async (t) => {
  const svc = await createTestApp(t)
  const org = svc.organizationId
  const app = await newClient(svc, org, 'batch job', ['clients:write'])
  const rotated = await svc.call({ method: 'POST', url: `/v1/organization/${org}/clients/${app.client_id}/secret`, token: svc.adminToken })
  t.equal(rotated.statusCode, 200, rotated.body)
  const fresh = rotated.json<{ data: { client: ClientCredentials } }>().data.client
  t.equal(fresh.client_id, app.client_id)
  t.not(fresh.client_secret, app.client_secret)
  t.equal((await requestToken(svc.app, { grant_type: 'client_credentials', ...app })).statusCode, 401, 'the old secret is refused')
  t.equal((await requestToken(svc.app, { grant_type: 'client_credentials', ...fresh })).statusCode, 200, 'the new one works')

  const ownToken = await svc.clientToken(fresh.client_id, fresh.client_secret)
  const self = await svc.call({ method: 'POST', url: `/v1/organization/${org}/clients/${app.client_id}/revoke`, token: ownToken })
  t.equal(self.statusCode, 409, 'a client cannot revoke itself')
  await addMember(svc, org, 'jon', 'administrator')
  const portal = await newClient(svc, org, 'portal')
  const manager = (await passwordGrant(svc, 'jon', PASSWORD, portal)).json<{ access_token: string }>().access_token
  const platform = await svc.call({ method: 'POST', url: `/v1/organization/${org}/clients/${svc.config.adminClientId ?? ''}/revoke`, token: manager })
  t.equal(platform.statusCode, 403, 'only a platform administrator may revoke a client holding scope *')
  t.equal((await protectedCall(svc, svc.adminToken)).statusCode, 200)
  const other = await createOrganization(svc, 'Other')
  const across = await svc.call({ method: 'POST', url: `/v1/organization/${other}/clients/${app.client_id}/revoke`, token: svc.adminToken })
  t.equal(across.statusCode, 404, 'a client is changed only under its own organization')
})

t.test('a member acts only on users and clients whose permissions it holds itself; an administrator on any', async (t) => {
  const svc = await createTestApp(t)
  const org = svc.organizationId
  const manager = await addMember(svc, org, 'lena', ['ManageMembers'])
  const boss = await addMember(svc, org, 'max', 'administrator')
  const peer = await addMember(svc, org, 'nina', ['ManageMembers'])
  const powerful = await newClient(svc, org, 'admin app')
  for (const action of ['deactivate', 'unlock', 'password']) {
    const refused = await svc.call({
      method: 'POST', url: `${users(org)}/${boss.userId}/${action}`, token: manager.token,
      ...(action === 'password' ? { payload: { newPassword: 'staple battery horse' } } : {}),
    })
    t.equal(refused.statusCode, 403, `${action} of an administrator by a mere manager is refused`)
    t.equal(refused.json().data.code, 'FORBIDDEN')
    t.ok(refused.json().data.missing.includes('AdministerOrganization'))
  }
  t.equal((await protectedCall(svc, boss.token)).statusCode, 200, 'the administrator was left as it was')
  const rotate = await svc.call({ method: 'POST', url: `/v1/organization/${org}/clients/${powerful.client_id}/secret`, token: manager.token })
  t.equal(rotate.statusCode, 403, 'nor may it take an administrator client\'s role by giving it a new secret')
  const reset = await svc.call({ method: 'POST', url: `${users(org)}/${peer.userId}/password`, token: manager.token, payload: { newPassword: 'staple battery horse' } })
  t.equal(reset.statusCode, 204, 'a user holding no more than the caller is within reach')
  const byBoss = await svc.call({ method: 'POST', url: `${users(org)}/${manager.userId}/deactivate`, token: boss.token })
  t.equal(byBoss.statusCode, 200, 'an organization administrator acts on anyone')
})

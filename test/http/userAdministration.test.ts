import t from 'tap'
import { actOnMember, builtInRoleTemplateId, changeMemberRole, clientStreamId, revokeClient } from '../../src/commands/identity.js'
import type { MembershipDoc } from '../../src/projections/memberships.js'
import { ManualClock } from '../../src/shared/clock.js'
import { createTestApp, requestToken, type TestApp } from '../helpers/app.js'
import { addClient, addMember, createOrganization, roleTemplateWith } from '../helpers/members.js'
import { streamEventTypes } from '../helpers/streams.js'

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

t.test('a password that is only spaces or the username is refused wherever one is set, naming the field', async (t) => {
  const svc = await createTestApp(t)
  const org = svc.organizationId
  const create = (username: string, password: string) => svc.call({
    method: 'POST', url: users(org), token: svc.adminToken,
    payload: { username, password, roleTemplateId: builtInRoleTemplateId(org, 'analyst') },
  })
  for (const [password, message] of [['Mariana.Lopez', 'must not be the username'], [' mariana.lopez ', 'must not be the username'], [' '.repeat(8), 'must not be only spaces']]) {
    const refused = await create('mariana.lopez', password)
    t.equal(refused.statusCode, 400, JSON.stringify(password))
    t.same(refused.json().data.errors, [{ field: 'body.password', message }])
  }
  t.equal((await passwordGrant(svc, 'mariana.lopez', 'Mariana.Lopez')).statusCode, 400, 'no user was created')

  const member = await addMember(svc, org, 'mariana.lopez', 'analyst')
  const reset = await svc.call({ method: 'POST', url: `${users(org)}/${member.userId}/password`, token: svc.adminToken, payload: { newPassword: 'MARIANA.LOPEZ' } })
  t.equal(reset.statusCode, 400)
  t.same(reset.json().data.errors, [{ field: 'body.newPassword', message: 'must not be the username' }])
  const own = await svc.call({ method: 'POST', url: '/v1/me/password', token: member.token, payload: { currentPassword: PASSWORD, newPassword: 'mariana.lopez' } })
  t.equal(own.statusCode, 400)
  t.same(own.json().data.errors, [{ field: 'body.newPassword', message: 'must not be the username' }])
  t.equal((await passwordGrant(svc, 'mariana.lopez', PASSWORD)).statusCode, 200, 'the password is unchanged')
})

t.test('a manager does not reset its own password without the current one: that goes through /me/password', async (t) => {
  const svc = await createTestApp(t)
  const org = svc.organizationId
  const manager = await addMember(svc, org, 'emil', 'administrator')
  const self = await svc.call({ method: 'POST', url: `${users(org)}/${manager.userId}/password`, token: manager.token, payload: { newPassword: 'staple battery horse' } })
  t.equal(self.statusCode, 409, self.body)
  t.equal(self.json().data.code, 'CONFLICT')
  t.match(self.json().data.message, /POST \/v1\/me\/password/)
  t.equal((await passwordGrant(svc, 'emil', 'staple battery horse')).statusCode, 400, 'the password is unchanged')
  t.equal((await passwordGrant(svc, 'emil', PASSWORD)).statusCode, 200)
  t.equal((await protectedCall(svc, manager.token)).statusCode, 200, 'its token still holds')
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

t.test('a member changes only clients whose scopes it holds: a new secret would hand it the rest', async (t) => {
  const svc = await createTestApp(t)
  const org = svc.organizationId
  const roleTemplateId = await roleTemplateWith(svc, org, ['ManageMembers'])
  const client = async (name: string, scopes: string[]) => {
    const created = await svc.call({ method: 'POST', url: '/v1/oauth/clients', token: svc.adminToken, payload: { name, scopes, organizationId: org, roleTemplateId } })
    if (created.statusCode !== 201) throw new Error(created.body)
    return created.json<{ data: { client: ClientCredentials } }>().data.client
  }
  const manager = await client('manager', ['clients:write'])
  const stronger = await client('stronger', ['clients:write', 'passwords:write'])
  const peer = await client('peer', ['clients:write'])
  const token = await svc.clientToken(manager.client_id, manager.client_secret)
  const clients = `/v1/organization/${org}/clients`
  for (const [action, payload] of [['secret', undefined], ['revoke', undefined], ['role', { roleTemplateId }]] as const) {
    const refused = await svc.call({ method: action === 'role' ? 'PUT' : 'POST', url: `${clients}/${stronger.client_id}/${action}`, token, ...(payload === undefined ? {} : { payload }) })
    t.equal(refused.statusCode, 403, `${action} of a client holding passwords:write is refused`)
    t.match(refused.json().data, { code: 'INSUFFICIENT_SCOPE', scope: 'passwords:write' })
  }
  t.equal((await svc.clientToken(stronger.client_id, stronger.client_secret)).length > 0, true, 'the stronger client kept its secret')
  t.equal((await svc.call({ method: 'POST', url: `${clients}/${peer.client_id}/secret`, token })).statusCode, 200, 'a client of the caller\'s scopes is within reach')
  t.equal((await svc.call({ method: 'POST', url: `${clients}/${stronger.client_id}/secret`, token: svc.adminToken })).statusCode, 200, 'the platform administrator may')
})

const role = (organizationId: string, kind: 'users' | 'clients', id: string) => `/v1/organization/${organizationId}/${kind}/${id}/role`
const templatePath = (organizationId: string, id: string) => `/v1/organization/${organizationId}/role-template/${id}`

t.test('a role change takes effect on the next request with the same token, and moves the template\'s use to the new one', async (t) => {
  const svc = await createTestApp(t)
  const org = svc.organizationId
  const templateReader = await roleTemplateWith(svc, org, ['ReadRoleTemplate'])
  const taxReader = await roleTemplateWith(svc, org, ['ReadTax'])
  const user = await addMember(svc, org, 'olga', ['ReadRoleTemplate'])
  const userTemplate = (await svc.call({ method: 'GET', url: `${users(org)}/${user.userId}`, token: svc.adminToken }))
    .json<{ data: { user: UserView } }>().data.user.roleTemplateId ?? ''
  const readTaxes = () => svc.call({ method: 'GET', url: '/v1/taxes', token: user.token, organizationId: org })
  const readTemplates = () => svc.call({ method: 'GET', url: `/v1/organization/${org}/role-template`, token: user.token })
  t.equal((await readTaxes()).statusCode, 403)
  t.equal((await readTemplates()).statusCode, 200)

  const changeTo = (roleTemplateId: string) =>
    svc.call({ method: 'PUT', url: role(org, 'users', user.userId), token: svc.adminToken, payload: { roleTemplateId } })
  const changed = await changeTo(taxReader)
  t.equal(changed.statusCode, 200, changed.body)
  t.equal(changed.json<{ data: { user: UserView } }>().data.user.roleTemplateId, taxReader, 'the answer shows the new role')
  t.equal((await readTaxes()).statusCode, 200, 'the permission gained works with the token already held')
  const lost = await readTemplates()
  t.equal(lost.statusCode, 403, 'the permission lost is refused to it')
  t.equal(lost.json().data.permission, 'ReadRoleTemplate')

  t.equal((await svc.call({ method: 'GET', url: templatePath(org, taxReader), token: svc.adminToken })).json().data.usage_count, 1)
  const inUse = await svc.call({ method: 'DELETE', url: templatePath(org, taxReader), token: svc.adminToken })
  t.equal(inUse.statusCode, 409, 'the new template is in use')
  t.equal(inUse.json().data.code, 'ROLE_TEMPLATE_IN_USE')
  t.equal((await svc.call({ method: 'DELETE', url: templatePath(org, userTemplate), token: svc.adminToken })).statusCode, 204, 'the old one is free')

  const before = await svc.runtime.eventStore.headPosition()
  const again = await changeTo(taxReader)
  t.equal(again.statusCode, 200, 'the same role again is answered')
  t.equal(again.json<{ data: { user: UserView } }>().data.user.roleTemplateId, taxReader)
  t.equal(await svc.runtime.eventStore.headPosition(), before, 'and writes nothing')

  const app = await addClient(svc, org, 'tax sync', ['ReadRoleTemplate'])
  const clientChanged = await svc.call({
    method: 'PUT', url: role(org, 'clients', app.userId), token: svc.adminToken, payload: { roleTemplateId: templateReader },
  })
  t.equal(clientChanged.statusCode, 200, clientChanged.body)
  t.equal(clientChanged.json().data.client.roleTemplateId, templateReader)
  await svc.call({ method: 'PUT', url: role(org, 'clients', app.userId), token: svc.adminToken, payload: { roleTemplateId: taxReader } })
  t.equal((await svc.call({ method: 'GET', url: '/v1/taxes', token: app.token, organizationId: org })).statusCode, 200, 'a client\'s token gains it too')
  t.equal((await svc.call({ method: 'GET', url: templatePath(org, taxReader), token: svc.adminToken })).json().data.usage_count, 2)
  t.equal((await svc.call({ method: 'DELETE', url: templatePath(org, templateReader), token: svc.adminToken })).statusCode, 204,
    'the template the client passed through is free again')
})

t.test('a role change is refused beyond the caller\'s own permissions, for itself, to an unknown template and across organizations', async (t) => {
  const svc = await createTestApp(t)
  const org = svc.organizationId
  const manager = await addMember(svc, org, 'pia', ['ManageMembers'])
  const peer = await addMember(svc, org, 'quim', ['ManageMembers'])
  const boss = await addMember(svc, org, 'rosa', 'administrator')
  const administrator = builtInRoleTemplateId(org, 'administrator')
  const analyst = builtInRoleTemplateId(org, 'analyst')
  const other = await createOrganization(svc, 'Other')
  const outsider = await addMember(svc, other, 'sven', 'analyst')
  const powerful = await newClient(svc, org, 'admin app')
  const managerLike = await roleTemplateWith(svc, org, ['ManageMembers'])
  const small = await addClient(svc, org, 'small app', ['ManageMembers'])
  const put = (kind: 'users' | 'clients', id: string, roleTemplateId: string, token = manager.token, organizationId = org) =>
    svc.call({ method: 'PUT', url: role(organizationId, kind, id), token, payload: { roleTemplateId } })
  const before = await svc.runtime.eventStore.headPosition()

  const escalation = await put('users', peer.userId, administrator)
  t.equal(escalation.statusCode, 403, 'a manager cannot make an administrator')
  t.equal(escalation.json().data.code, 'FORBIDDEN')
  t.ok(escalation.json().data.missing.includes('AdministerOrganization'))
  const demotion = await put('users', boss.userId, managerLike)
  t.equal(demotion.statusCode, 403, 'nor change an administrator\'s role, even to one the manager could give')
  t.ok(demotion.json().data.missing.includes('AdministerOrganization'))
  t.equal((await put('clients', powerful.client_id, managerLike)).statusCode, 403, 'nor an administrator client\'s')
  const clientEscalation = await put('clients', small.userId, administrator)
  t.equal(clientEscalation.statusCode, 403, 'nor make a client an administrator')
  t.ok(clientEscalation.json().data.missing.includes('AdministerOrganization'))
  const self = await put('users', manager.userId, administrator)
  t.equal(self.statusCode, 409, 'nobody changes its own role')
  t.equal(self.json().data.code, 'CONFLICT')
  const ownByAdmin = await put('users', boss.userId, analyst, boss.token)
  t.equal(ownByAdmin.statusCode, 409, 'not even an administrator')

  for (const [what, roleTemplateId] of [
    ['an unknown template', '0190a0b0-0000-7000-8000-000000000000'], ['another organization\'s template', builtInRoleTemplateId(other, 'analyst')],
  ] as const) {
    const refused = await put('users', peer.userId, roleTemplateId, svc.adminToken)
    t.equal(refused.statusCode, 400, `${what} is refused`)
    t.equal(refused.json().data.code, 'VALIDATION_ERROR')
    t.equal(refused.json().data.errors[0].field, 'body.roleTemplateId')
  }
  const foreign = await put('users', outsider.userId, analyst, svc.adminToken)
  t.equal(foreign.statusCode, 404, 'another organization\'s user is not found under this one')
  t.equal(await svc.runtime.eventStore.headPosition(), before, 'no refusal wrote anything')

  const deleted = await roleTemplateWith(svc, org, ['ManageMembers'])
  t.equal((await svc.call({ method: 'DELETE', url: templatePath(org, deleted), token: svc.adminToken })).statusCode, 204)
  const gone = await put('users', peer.userId, deleted, svc.adminToken)
  t.equal(gone.statusCode, 400, 'a deleted template is refused')
  t.equal(gone.json().data.errors[0].field, 'body.roleTemplateId')

  const allowed = await put('users', peer.userId, managerLike)
  t.equal(allowed.statusCode, 200, 'a role within the manager\'s own permissions, for a user within them, is given')
  t.equal(allowed.json<{ data: { user: UserView } }>().data.user.roleTemplateId, managerLike)

  t.equal((await svc.call({ method: 'POST', url: `${users(org)}/${peer.userId}/deactivate`, token: svc.adminToken })).statusCode, 200)
  const inactive = await put('users', peer.userId, analyst, svc.adminToken)
  t.equal(inactive.statusCode, 409, 'a deactivated user keeps its role')
  t.equal(inactive.json().data.code, 'NOT_ACTIVE')
  const revokedClient = await newClient(svc, org, 'old app')
  await svc.call({ method: 'POST', url: `/v1/organization/${org}/clients/${revokedClient.client_id}/revoke`, token: svc.adminToken })
  const revoked = await put('clients', revokedClient.client_id, analyst, svc.adminToken)
  t.equal(revoked.statusCode, 409, 'so does a revoked client')
  t.equal(revoked.json().data.code, 'NOT_ACTIVE')
})

t.test('a reactivated user signs in with the new password only; its tokens from before the deactivation stay refused', async (t) => {
  const svc = await createTestApp(t)
  const org = svc.organizationId
  const returning = await addMember(svc, org, 'tomas', 'analyst')
  const signIn = (await passwordGrant(svc, 'tomas', PASSWORD)).json<{ refresh_token: string }>()
  const manager = await addMember(svc, org, 'ulla', 'administrator')
  const reactivate = (token: string, userId = returning.userId) =>
    svc.call({ method: 'POST', url: `${users(org)}/${userId}/reactivate`, token, payload: { newPassword: 'staple battery horse' } })

  const active = await reactivate(manager.token)
  t.equal(active.statusCode, 409, 'an active user is not reactivated')
  t.equal(active.json().data.code, 'CONFLICT')
  t.equal((await svc.call({ method: 'POST', url: `${users(org)}/${returning.userId}/deactivate`, token: manager.token })).statusCode, 200)
  t.equal((await protectedCall(svc, returning.token)).statusCode, 401)

  const reactivated = await reactivate(manager.token)
  t.equal(reactivated.statusCode, 200, reactivated.body)
  t.equal(reactivated.json<{ data: { user: UserView } }>().data.user.active, true)
  const old = await protectedCall(svc, returning.token)
  t.equal(old.statusCode, 401, 'a token from before the deactivation is still refused')
  t.equal(old.json().data.code, 'INVALID_TOKEN')
  const refreshed = await requestToken(svc.app, { grant_type: 'refresh_token', refresh_token: signIn.refresh_token, ...adminClient(svc) })
  t.equal(refreshed.json<{ error: string }>().error, 'invalid_grant', 'so is a refresh token from before')
  t.equal((await passwordGrant(svc, 'tomas', PASSWORD)).json<{ error: string }>().error, 'invalid_grant', 'the old password does not sign in')
  const fresh = await passwordGrant(svc, 'tomas', 'staple battery horse')
  t.equal(fresh.statusCode, 200, 'the new one does')
  t.equal((await protectedCall(svc, fresh.json<{ access_token: string }>().access_token)).statusCode, 200)
})

t.test('a user is reactivated only by a caller holding its role, with scope passwords:write', async (t) => {
  const svc = await createTestApp(t)
  const org = svc.organizationId
  const boss = await addMember(svc, org, 'vera', 'administrator')
  const manager = await addMember(svc, org, 'walt', ['ManageMembers'])
  t.equal((await svc.call({ method: 'POST', url: `${users(org)}/${boss.userId}/deactivate`, token: svc.adminToken })).statusCode, 200)
  const payload = { newPassword: 'staple battery horse' }
  const refused = await svc.call({ method: 'POST', url: `${users(org)}/${boss.userId}/reactivate`, token: manager.token, payload })
  t.equal(refused.statusCode, 403, 'a manager without the administrator\'s permissions cannot bring it back')
  t.equal(refused.json().data.code, 'FORBIDDEN')
  t.ok(refused.json().data.missing.includes('AdministerOrganization'))
  await addMember(svc, org, 'xena', 'administrator')
  const narrow = (await requestToken(svc.app, { grant_type: 'password', username: 'xena', password: PASSWORD, scope: 'users:read', ...adminClient(svc) }))
    .json<{ access_token: string }>().access_token
  const unscoped = await svc.call({ method: 'POST', url: `${users(org)}/${boss.userId}/reactivate`, token: narrow, payload })
  t.equal(unscoped.statusCode, 403)
  t.equal(unscoped.json().data.code, 'INSUFFICIENT_SCOPE')
  const short = await svc.call({ method: 'POST', url: `${users(org)}/${boss.userId}/reactivate`, token: svc.adminToken, payload: { newPassword: 'short' } })
  t.equal(short.statusCode, 400, 'the password has the bounds of a reset')
  const view = (await svc.call({ method: 'GET', url: `${users(org)}/${boss.userId}`, token: svc.adminToken })).json<{ data: { user: UserView } }>().data.user
  t.equal(view.active, false, 'none of them reactivated it')
})

t.test('a page of users or clients shows each one\'s own role, read in one membership query whatever the page\'s size', async (t) => {
  const svc = await createTestApp(t)
  const org = await createOrganization(svc, 'Members')
  const ana = await addMember(svc, org, 'ana', 'analyst')
  const bruno = await addMember(svc, org, 'bruno', 'administrator')
  const carla = await addMember(svc, org, 'carla', 'analyst')
  const crm = await addClient(svc, org, 'crm', 'analyst')
  const mobile = await addClient(svc, org, 'mobile', 'administrator')
  const memberships = svc.runtime.readStore.collection<MembershipDoc>('memberships')
  let reads = 0
  const find = memberships.find.bind(memberships)
  memberships.find = (filter, options) => { reads += 1; return find(filter, options) }
  const local = memberships.inProcess
  if (local !== undefined) {
    const findOne = local.findOne.bind(local)
    local.findOne = (filter) => { reads += 1; return findOne(filter) }
  }
  const readsFor = async (url: string) => {
    reads = 0
    const response = await svc.call({ method: 'GET', url, token: svc.adminToken })
    t.equal(response.statusCode, 200, response.body)
    return { reads, body: response.json<{ data: Array<{ id?: string; client_id?: string; roleTemplateId: string | null }> }>() }
  }

  const analyst = builtInRoleTemplateId(org, 'analyst')
  const administrator = builtInRoleTemplateId(org, 'administrator')
  const oneUser = await readsFor(`${users(org)}?limit=1`)
  const allUsers = await readsFor(`${users(org)}?limit=50`)
  t.same(new Map(allUsers.body.data.map((u) => [u.id, u.roleTemplateId])), new Map([[carla.userId, analyst], [bruno.userId, administrator], [ana.userId, analyst]]))
  t.equal(allUsers.reads, oneUser.reads, 'three users cost the membership reads one does')

  const oneClient = await readsFor(`/v1/organization/${org}/clients?limit=1`)
  const allClients = await readsFor(`/v1/organization/${org}/clients?limit=50`)
  t.same(new Map(allClients.body.data.map((c) => [c.client_id, c.roleTemplateId])), new Map([[mobile.userId, administrator], [crm.userId, analyst]]))
  t.equal(allClients.reads, oneClient.reads)
})

t.test('a member\'s role change racing an administrator\'s promotion of the same user never demotes the administrator', async (t) => {
  const svc = await createTestApp(t)
  const org = svc.organizationId
  const member = await addMember(svc, org, 'role.changer', ['ManageMembers', 'ReadCredit', 'ReadRoleTemplate'])
  const desk = await roleTemplateWith(svc, org, ['ReadCredit'])
  const other = await roleTemplateWith(svc, org, ['ReadCredit'])
  const administrator = builtInRoleTemplateId(org, 'administrator')
  const roleUrl = (userId: string) => `/v1/organization/${org}/users/${userId}/role`
  for (let round = 0; round < 8; round++) {
    const user = await svc.call({
      method: 'POST', url: `/v1/organization/${org}/users`, token: svc.adminToken,
      payload: { username: `promoted.${round}`, password: 'Correct-Horse-9-Battery', roleTemplateId: desk },
    })
    const userId: string = user.json().data.user.id
    const [promoted, changed] = await Promise.all([
      svc.call({ method: 'PUT', url: roleUrl(userId), token: svc.adminToken, payload: { roleTemplateId: administrator } }),
      svc.call({ method: 'PUT', url: roleUrl(userId), token: member.token, payload: { roleTemplateId: other } }),
    ])
    t.equal(promoted.statusCode, 200, `round ${round}: the promotion`)
    const role = (await svc.call({ method: 'GET', url: `/v1/organization/${org}/users/${userId}`, token: svc.adminToken })).json().data.user.roleTemplateId
    t.equal(role, administrator, `round ${round}: the user stays an administrator (member's change: ${changed.statusCode})`)
    if (changed.statusCode !== 200) t.match(changed.json().data, { code: 'FORBIDDEN' }, 'refused by the granting rule')
  }
})

t.test('acting on a member checks its role in the membership\'s turn: a member cleared by a stale read is refused once the user is an administrator', async (t) => {
  const svc = await createTestApp(t)
  const org = svc.organizationId
  const desk = await roleTemplateWith(svc, org, ['ReadCredit'])
  const administrator = builtInRoleTemplateId(org, 'administrator')
  const context = { organizationId: org, actorId: 'test', correlationId: 'c-act' }
  const user = await svc.call({
    method: 'POST', url: `/v1/organization/${org}/users`, token: svc.adminToken,
    payload: { username: 'promoted.meanwhile', password: 'Correct-Horse-9-Battery', roleTemplateId: desk },
  })
  const userId: string = user.json().data.user.id
  const member = { organizationId: org, principalId: userId, grantor: new Set(['ReadCredit', 'ManageMembers']) }
  let acted = 0
  t.equal(await actOnMember(svc.runtime.commands, member, async () => ++acted), 1, 'while the user holds only what the member holds')
  // The route's check read the user on `desk`; the promotion lands before the act's turn.
  await changeMemberRole(svc.runtime.commands, { organizationId: org, principalId: userId, roleTemplateId: administrator, grantor: 'all' }, context)
  await t.rejects(actOnMember(svc.runtime.commands, member, async () => ++acted), { code: 'FORBIDDEN' })
  t.equal(acted, 1, 'the act did not run')
  t.equal(await actOnMember(svc.runtime.commands, { ...member, grantor: 'all' }, async () => ++acted), 2, 'an administrator may')
  // A creation cut off before its membership's grant: the recovery may yet make it an administrator.
  const pending = { ...member, principalId: 'registered-not-granted' }
  await t.rejects(actOnMember(svc.runtime.commands, pending, async () => ++acted), { code: 'FORBIDDEN' }, 'a principal whose role is not granted yet')
  t.equal(await actOnMember(svc.runtime.commands, { ...pending, grantor: 'all' }, async () => ++acted), 3, 'but for an administrator')

  const client = await addClient(svc, org, 'promoted-client', ['ReadCredit'])
  await changeMemberRole(svc.runtime.commands, { organizationId: org, principalId: client.userId, roleTemplateId: administrator, grantor: 'all' }, context)
  await t.rejects(revokeClient(svc.runtime.commands, { organizationId: org, clientId: client.userId, grantor: member.grantor }, context), { code: 'FORBIDDEN' })
  const revocations = (await streamEventTypes(svc, 'oauthClient', clientStreamId(client.userId))).filter((type) => type === 'OAuthClientRevoked')
  t.same(revocations, [], 'the client is not revoked')
})

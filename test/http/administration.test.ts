import t from 'tap'
import { builtInRoleTemplateId } from '../../src/commands/identity.js'
import { streamName } from '../../src/events/streams.js'
import { schemaVersionOf } from '../../src/events/upcasters.js'
import { newId } from '../../src/shared/ids.js'
import { allPermissions } from '../../src/shared/permissions.js'
import { createTestApp, requestToken, type TestApp } from '../helpers/app.js'
import { addMember, roleTemplateWith } from '../helpers/members.js'

const createOrganization = async (svc: TestApp, name: string) => {
  const response = await svc.call({ method: 'POST', url: '/v1/organizations', token: svc.adminToken, payload: { name } })
  return response
}

const analystOf = (organizationId: string) => builtInRoleTemplateId(organizationId, 'analyst')

t.test('creating an organization gives it a default configuration and built-in role templates, visible at once', async (t) => {
  const svc = await createTestApp(t)
  const response = await createOrganization(svc, 'Banco Andino')
  t.equal(response.statusCode, 201)
  const organization = response.json().data.organization
  t.match(organization, { name: 'Banco Andino', active: true, defaultConfigId: /^[0-9a-f-]{36}$/ })
  const templates = await svc.call({ method: 'GET', url: `/v1/organization/${organization.id}/role-template`, token: svc.adminToken })
  t.equal(templates.statusCode, 200)
  t.same(templates.json().data.map((r: { name: string }) => r.name).sort(), ['Administrator', 'Analyst'])
  const one = await svc.call({ method: 'GET', url: `/v1/organizations/${organization.id}`, token: svc.adminToken })
  t.equal(one.json().data.organization.id, organization.id, 'read-your-writes: GET right after POST')
})

t.test('organizations are listed for their members only; the administrator sees all', async (t) => {
  const svc = await createTestApp(t)
  for (const name of ['A', 'B', 'C']) await createOrganization(svc, name)
  const all = await svc.call({ method: 'GET', url: '/v1/organizations?limit=2&page=2', token: svc.adminToken })
  t.equal(all.statusCode, 200)
  t.same(all.json().pagination, { current_page: 2, total_pages: 2, total_items: 4, items_per_page: 2 })
  const client = await svc.call({
    method: 'POST', url: '/v1/oauth/clients', token: svc.adminToken,
    payload: { name: 'member', scopes: [], organizationId: svc.organizationId, roleTemplateId: analystOf(svc.organizationId) },
  })
  const { client_id, client_secret } = client.json().data.client
  const memberToken = await svc.clientToken(client_id, client_secret)
  const mine = await svc.call({ method: 'GET', url: '/v1/organizations', token: memberToken })
  t.same(mine.json().data.map((o: { id: string }) => o.id), [svc.organizationId])
})

t.test('users: unique usernames, role templates of the same organization only', async (t) => {
  const svc = await createTestApp(t)
  const add = (username: string, roleTemplateId: string) => svc.call({
    method: 'POST', url: `/v1/organization/${svc.organizationId}/users`, token: svc.adminToken,
    payload: { username, password: 'long enough password', roleTemplateId },
  })
  const first = await add('diana', analystOf(svc.organizationId))
  t.equal(first.statusCode, 201)
  t.match(first.json().data.user, { username: 'diana', organizationId: svc.organizationId, totpEnrolled: false })
  t.notOk(first.json().data.totp)
  const again = await add('Diana', analystOf(svc.organizationId))
  t.equal(again.statusCode, 409)
  t.equal(again.json().data.code, 'USERNAME_TAKEN', 'usernames are unique regardless of case')
  const other = (await createOrganization(svc, 'Other')).json().data.organization.id
  const foreignTemplate = await add('eva', analystOf(other))
  t.equal(foreignTemplate.statusCode, 400)
  t.equal(foreignTemplate.json().data.errors[0].field, 'body.roleTemplateId')
})

t.test('a refused user creation leaves its role template unused, and a repeated client registration keeps the existing membership\'s use', async (t) => {
  const svc = await createTestApp(t)
  const org = svc.organizationId
  const templates = `/v1/organization/${org}/role-template`
  const template = async (name: string): Promise<string> =>
    (await svc.call({ method: 'POST', url: templates, token: svc.adminToken, payload: { name, permissions: ['ReadCredit'] } })).json().data.id
  const usage = async (id: string): Promise<number> => (await svc.call({ method: 'GET', url: `${templates}/${id}`, token: svc.adminToken })).json().data.usage_count
  const first = await template('first')
  const second = await template('second')
  const add = (username: string, roleTemplateId: string) => svc.call({
    method: 'POST', url: `/v1/organization/${org}/users`, token: svc.adminToken, payload: { username, password: 'long enough password', roleTemplateId },
  })
  t.equal((await add('diana', first)).statusCode, 201)
  const head = await svc.runtime.eventStore.headPosition()
  t.equal((await add('DIANA', second)).json().data.code, 'USERNAME_TAKEN')
  t.equal(await svc.runtime.eventStore.headPosition(), head, 'a name already taken is refused before anything is written')
  t.equal(await usage(first), 1)
  t.equal(await usage(second), 0)
  t.equal((await svc.call({ method: 'DELETE', url: `${templates}/${second}`, token: svc.adminToken })).statusCode, 204)

  // Registering a client id that exists (a workflow retried) is refused without touching the membership the client has.
  const { createClient } = await import('../../src/commands/identity.js')
  const input = { clientId: 'partner-crm', name: 'CRM', secretHash: 'x', scopes: [], organizationId: org, roleTemplateId: first, now: new Date().toISOString(), grantor: 'all' as const }
  const context = { organizationId: org, actorId: 'test', correlationId: 'c-1' }
  const made = await createClient(svc.runtime.commands, input, context)
  await svc.runtime.settle(made.position)
  await t.rejects(createClient(svc.runtime.commands, input, context), { code: 'ALREADY_EXISTS' })
  t.equal(await usage(first), 2)
  const refused = await svc.call({ method: 'DELETE', url: `${templates}/${first}`, token: svc.adminToken })
  t.equal(refused.json().data.code, 'ROLE_TEMPLATE_IN_USE', 'the client\'s membership still holds the template')
})

t.test('concurrent creations of one username make exactly one user, and the refused ones leave their template\'s use withdrawn', async (t) => {
  const svc = await createTestApp(t)
  const usage = async (): Promise<number> => (await svc.call({
    method: 'GET', url: `/v1/organization/${svc.organizationId}/role-template/${analystOf(svc.organizationId)}`, token: svc.adminToken,
  })).json().data.usage_count
  const before = await usage()
  const attempts = await Promise.all(Array.from({ length: 5 }, () => svc.call({
    method: 'POST', url: `/v1/organization/${svc.organizationId}/users`, token: svc.adminToken,
    payload: { username: 'race', password: 'long enough password', roleTemplateId: analystOf(svc.organizationId) },
  })))
  t.equal(attempts.filter((r) => r.statusCode === 201).length, 1)
  t.ok(attempts.filter((r) => r.statusCode !== 201).every((r) => r.statusCode === 409))
  t.equal(await usage(), before + 1, 'one use recorded: the losers of the race withdrew theirs')
})

t.test('role templates: create, search, filter, page, update, delete, and in-use protection', async (t) => {
  const svc = await createTestApp(t)
  const base = `/v1/organization/${svc.organizationId}/role-template`
  const created = await svc.call({
    method: 'POST', url: base, token: svc.adminToken,
    payload: { name: 'Collections desk', description: 'Calls debtors in arrears', permissions: ['ReadCredit', 'ReadOrder'] },
  })
  t.equal(created.statusCode, 201)
  const template = created.json().data
  t.match(template, { name: 'Collections desk', is_default: false, usage_count: 0, permissions: ['ReadCredit', 'ReadOrder'] })

  const unknownPermission = await svc.call({ method: 'POST', url: base, token: svc.adminToken, payload: { name: 'x', permissions: ['Teleport'] } })
  t.equal(unknownPermission.statusCode, 400)

  const search = await svc.call({ method: 'GET', url: `${base}?search=ARREARS`, token: svc.adminToken })
  t.same(search.json().data.map((r: { name: string }) => r.name), ['Collections desk'], 'search matches the description, any case')
  const defaults = await svc.call({ method: 'GET', url: `${base}?is_default=true`, token: svc.adminToken })
  t.same(defaults.json().data.map((r: { name: string }) => r.name), ['Analyst'])
  const paged = await svc.call({ method: 'GET', url: `${base}?limit=1&page=3`, token: svc.adminToken })
  t.same(paged.json().pagination, { current_page: 3, total_pages: 3, total_items: 3, items_per_page: 1 })
  for (const bad of ['page=0', 'limit=0', 'limit=101', 'page=x', 'is_default=maybe']) {
    const response = await svc.call({ method: 'GET', url: `${base}?${bad}`, token: svc.adminToken })
    t.equal(response.statusCode, 400, `${bad} is refused`)
  }

  const updated = await svc.call({ method: 'PUT', url: `${base}/${template.id}`, token: svc.adminToken, payload: { permissions: ['ReadCredit'] } })
  t.equal(updated.statusCode, 200)
  t.same(updated.json().data.permissions, ['ReadCredit'])
  t.equal(updated.json().data.name, 'Collections desk', 'fields not sent stay')

  await svc.call({
    method: 'POST', url: `/v1/organization/${svc.organizationId}/users`, token: svc.adminToken,
    payload: { username: 'collector', password: 'long enough password', roleTemplateId: template.id },
  })
  const inUse = await svc.call({ method: 'GET', url: `${base}/${template.id}`, token: svc.adminToken })
  t.equal(inUse.json().data.usage_count, 1)
  const refused = await svc.call({ method: 'DELETE', url: `${base}/${template.id}`, token: svc.adminToken })
  t.equal(refused.statusCode, 409)
  t.equal(refused.json().data.code, 'ROLE_TEMPLATE_IN_USE')

  const spare = (await svc.call({ method: 'POST', url: base, token: svc.adminToken, payload: { name: 'Spare', permissions: [] } })).json().data
  t.equal((await svc.call({ method: 'DELETE', url: `${base}/${spare.id}`, token: svc.adminToken })).statusCode, 204)
  t.equal((await svc.call({ method: 'GET', url: `${base}/${spare.id}`, token: svc.adminToken })).statusCode, 404)
  t.equal((await svc.call({ method: 'DELETE', url: `${base}/${spare.id}`, token: svc.adminToken })).statusCode, 404)
})

t.test('a client can only be given scopes its creator holds', async (t) => {
  const svc = await createTestApp(t)
  const created = await svc.call({
    method: 'POST', url: '/v1/oauth/clients', token: svc.adminToken,
    payload: { name: 'writer', scopes: ['clients:write'], organizationId: svc.organizationId, roleTemplateId: builtInRoleTemplateId(svc.organizationId, 'administrator') },
  })
  const { client_id, client_secret } = created.json().data.client
  const token = await svc.clientToken(client_id, client_secret)
  const escalate = await svc.call({
    method: 'POST', url: '/v1/oauth/clients', token,
    payload: { name: 'admin wannabe', scopes: ['*'], organizationId: svc.organizationId, roleTemplateId: analystOf(svc.organizationId) },
  })
  t.equal(escalate.statusCode, 403)
  t.equal(escalate.json().data.code, 'INSUFFICIENT_SCOPE')
  const unknown = await svc.call({
    method: 'POST', url: '/v1/oauth/clients', token: svc.adminToken,
    payload: { name: 'x', scopes: ['rockets:launch'], organizationId: svc.organizationId, roleTemplateId: analystOf(svc.organizationId) },
  })
  t.equal(unknown.statusCode, 400)
})

t.test('the built-in Administrator template gains permissions added to the catalogue since it was created', async (t) => {
  const svc = await createTestApp(t)
  const { roleTemplateAggregate } = await import('../../src/commands/roleTemplate.js')
  const { bootstrap } = await import('../../src/identity/bootstrap.js')
  const id = builtInRoleTemplateId(svc.organizationId, 'administrator')
  // As if the organization was created when the catalogue lacked these two: recorded as an earlier release did (no command takes them away now).
  const { state } = await svc.runtime.commands.load(roleTemplateAggregate, id)
  const at = new Date().toISOString()
  const appended = await svc.runtime.eventStore.append(streamName('roleTemplate', id), [{
    id: newId(), type: 'RoleTemplateUpdated',
    data: { roleTemplateId: id, organizationId: svc.organizationId, permissions: state.permissions.filter((p) => p !== 'ReadTax' && p !== 'WriteTax'), updatedAt: at },
    metadata: { organizationId: svc.organizationId, actorId: 'test', correlationId: newId(), causationId: null, occurredAt: at, schemaVersion: schemaVersionOf('RoleTemplateUpdated') },
  }], 'any')
  await svc.runtime.settle(appended.position)
  const narrowed = await svc.call({ method: 'GET', url: `/v1/organization/${svc.organizationId}/role-template/${id}`, token: svc.adminToken })
  t.notOk(narrowed.json().data.permissions.includes('ReadTax'), 'given: the template without them')
  await bootstrap(svc.runtime)
  const after = await svc.call({ method: 'GET', url: `/v1/organization/${svc.organizationId}/role-template/${id}`, token: svc.adminToken })
  t.ok(after.json().data.permissions.includes('ReadTax'))
  t.ok(after.json().data.permissions.includes('WriteTax'))
})

t.test('a member holding only ManageMembers cannot create a user or a client with the Administrator template, but can with a template within its permissions', async (t) => {
  const svc = await createTestApp(t)
  const org = svc.organizationId
  const administrator = builtInRoleTemplateId(org, 'administrator')
  const manager = await addMember(svc, org, 'member.manager', ['ManageMembers'])
  const usage = async (id: string): Promise<number> =>
    (await svc.call({ method: 'GET', url: `/v1/organization/${org}/role-template/${id}`, token: svc.adminToken })).json().data.usage_count
  const addUser = (username: string, roleTemplateId: string) => svc.call({
    method: 'POST', url: `/v1/organization/${org}/users`, token: manager.token, payload: { username, password: 'long enough password', roleTemplateId },
  })
  const addClient = (name: string, roleTemplateId: string) => svc.call({
    method: 'POST', url: '/v1/oauth/clients', token: manager.token, payload: { name, scopes: [], organizationId: org, roleTemplateId },
  })
  const lacking = allPermissions.filter((p) => p !== 'ManageMembers')
  const adminsBefore = await usage(administrator)

  const user = await addUser('escalated.user', administrator)
  t.equal(user.statusCode, 403)
  t.match(user.json().data, { code: 'FORBIDDEN', permission: lacking[0] })
  t.same(user.json().data.missing, lacking, 'names every permission the caller lacks')
  const client = await addClient('escalated client', administrator)
  t.equal(client.statusCode, 403)
  t.match(client.json().data, { code: 'FORBIDDEN', permission: lacking[0] })
  t.same(client.json().data.missing, lacking)
  const analyst = await addUser('analyst.user', analystOf(org))
  t.equal(analyst.statusCode, 403, 'the Analyst template holds read permissions the manager lacks')
  t.equal(await usage(administrator), adminsBefore, 'a refused creation records no use of the template')
  const login = await requestToken(svc.app, {
    grant_type: 'password', username: 'escalated.user', password: 'long enough password',
    client_id: svc.config.adminClientId ?? '', client_secret: svc.config.adminClientSecret ?? '',
  })
  t.not(login.statusCode, 200, 'no user was created')

  const within = await roleTemplateWith(svc, org, ['ManageMembers'])
  const empty = await roleTemplateWith(svc, org, [])
  t.equal((await addUser('peer.manager', within)).statusCode, 201, 'a template holding only what the caller holds')
  t.equal((await addUser('nobody.user', empty)).statusCode, 201)
  const peerClient = await addClient('peer client', within)
  t.equal(peerClient.statusCode, 201)
  const { client_id, client_secret } = peerClient.json().data.client
  const peerToken = await svc.clientToken(client_id, client_secret)
  const mine = await svc.call({ method: 'GET', url: '/v1/me/permissions', token: peerToken, organizationId: org })
  t.same(mine.json().data.permissions, ['ManageMembers'])
})

t.test('an organization administrator may create users and clients with any template, the Administrator one included', async (t) => {
  const svc = await createTestApp(t)
  const org = svc.organizationId
  // Not every permission: AdministerOrganization is what exempts it from the rule.
  const admin = await addMember(svc, org, 'org.admin', ['AdministerOrganization', 'ManageMembers'])
  const administrator = builtInRoleTemplateId(org, 'administrator')
  const user = await svc.call({
    method: 'POST', url: `/v1/organization/${org}/users`, token: admin.token,
    payload: { username: 'second.admin', password: 'long enough password', roleTemplateId: administrator },
  })
  t.equal(user.statusCode, 201)
  const client = await svc.call({
    method: 'POST', url: '/v1/oauth/clients', token: admin.token, payload: { name: 'admin app', scopes: [], organizationId: org, roleTemplateId: administrator },
  })
  t.equal(client.statusCode, 201)
  const writer = await roleTemplateWith(svc, org, ['WriteCredit', 'ReadTax'])
  t.equal((await svc.call({
    method: 'POST', url: `/v1/organization/${org}/users`, token: admin.token,
    payload: { username: 'credit.writer', password: 'long enough password', roleTemplateId: writer },
  })).statusCode, 201, 'permissions the administrator itself lacks')
})

import t, { type Test } from 'tap'
import { builtInRoleTemplateId } from '../../src/commands/identity.js'
import { ManualClock } from '../../src/shared/clock.js'
import { newId } from '../../src/shared/ids.js'
import type { Permission } from '../../src/shared/permissions.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { addMember } from '../helpers/members.js'
import { createOrganization, memberToken } from '../helpers/organizations.js'

const setup = async (t: Test) => {
  const clock = new ManualClock('2026-01-15T12:00:00.000Z')
  const svc = await createTestApp(t, { clock })
  const base = `/v1/organization/${svc.organizationId}/role-template`
  const call = (options: { method: 'GET' | 'POST' | 'PUT' | 'DELETE'; url: string; payload?: object; token?: string }) =>
    svc.call({ token: svc.adminToken, ...options })
  const create = async (payload: object) => {
    clock.advance(1000)
    const response = await call({ method: 'POST', url: base, payload })
    if (response.statusCode !== 201) throw new Error(response.body)
    const template: { id: string; updated_at: string } = response.json().data
    return template
  }
  const names = async (query: string) => (await call({ method: 'GET', url: `${base}${query}` })).json().data.map((r: { name: string }) => r.name)
  return { svc, clock, base, call, create, names }
}

t.test('the list answers exactly the interface\'s shape', async (t) => {
  const { call, base, create } = await setup(t)
  await create({ name: 'Collections', description: 'Calls debtors in arrears', permissions: ['ReadCredit', 'ReadOrder'], is_default: false })
  const body = (await call({ method: 'GET', url: base })).json()
  t.same(Object.keys(body).sort(), ['data', 'pagination', 'status'])
  t.equal(body.status, 'success')
  t.same(Object.keys(body.data[2]).sort(), ['created_at', 'description', 'id', 'is_default', 'name', 'permissions', 'updated_at', 'usage_count'])
  t.same(body.pagination, { current_page: 1, total_pages: 1, total_items: 3, items_per_page: 20 })
})

t.test('page and limit: defaults, bounds and pages past the end', async (t) => {
  const { call, base, create } = await setup(t)
  for (let i = 1; i <= 20; i++) await create({ name: `Role ${String(i).padStart(2, '0')}`, permissions: [] })
  const page = async (query: string) => (await call({ method: 'GET', url: `${base}${query}` })).json()
  const first = await page('')
  t.equal(first.data.length, 20, 'limit defaults to 20')
  t.same(first.pagination, { current_page: 1, total_pages: 2, total_items: 22, items_per_page: 20 })
  const second = await page('?page=2')
  t.same(second.data.map((r: { name: string }) => r.name), ['Role 19', 'Role 20'], 'oldest first')
  t.same((await page('?page=3')).data, [])
  t.same((await page('?page=3')).pagination, { current_page: 3, total_pages: 2, total_items: 22, items_per_page: 20 })
  t.same((await page('?page=1000000000000')).data, [], 'a page far past the end is empty, not an error')
  t.equal((await page('?limit=1')).data.length, 1)
  t.same((await page('?limit=1&page=22')).data.map((r: { name: string }) => r.name), ['Role 20'])
  t.equal((await page('?limit=100')).data.length, 22)
  t.same((await page('?limit=100')).pagination, { current_page: 1, total_pages: 1, total_items: 22, items_per_page: 100 })
  for (const bad of ['page=0', 'page=-1', 'page=1.5', 'page=first', 'limit=0', 'limit=101', 'limit=2.5', 'limit=', 'sort=name']) {
    const response = await call({ method: 'GET', url: `${base}?${bad}` })
    t.equal(response.statusCode, 400, `${bad} refused`)
    t.equal(response.json().data.code, 'VALIDATION_ERROR')
  }
})

t.test('search matches name or description, any case, as plain text; is_default filters', async (t) => {
  const { names, create, call, base } = await setup(t)
  await create({ name: 'Collections desk', description: 'Calls debtors in ARREARS', permissions: ['ReadCredit'] })
  await create({ name: 'Risk (senior)', description: 'Approves scoring models', permissions: ['WriteScoringModel'], is_default: true })
  await create({ name: 'Auditor', description: 'Reads everything', permissions: ['ReadCredit'] })
  t.same(await names('?search=arrears'), ['Collections desk'], 'description, any case')
  t.same(await names('?search=COLLECT'), ['Collections desk'], 'name, any case')
  t.same(await names('?search=scoring'), ['Risk (senior)'])
  t.same(await names('?search=(senior)'), ['Risk (senior)'], 'regular-expression characters are plain text')
  t.same(await names('?search=.*'), [])
  t.same(await names('?search=read'), ['Analyst', 'Auditor'], 'the built-in Analyst "Reads credits…" matches too')
  t.same((await names('?search=')).slice(2), ['Collections desk', 'Risk (senior)', 'Auditor'], 'an empty search filters nothing')
  t.same(await names('?search=nothing-like-this'), [])
  t.same(await names('?is_default=true'), ['Analyst', 'Risk (senior)'])
  t.same((await names('?is_default=false')).sort(), ['Administrator', 'Auditor', 'Collections desk'])
  t.same(await names('?is_default=true&search=risk'), ['Risk (senior)'])
  t.same(await names('?is_default=false&search=risk'), [])
  t.same(await names(`?search=${'x'.repeat(200)}`), [])
  t.equal((await call({ method: 'GET', url: `${base}?search=${'x'.repeat(201)}` })).statusCode, 400)
  t.equal((await call({ method: 'GET', url: `${base}?is_default=maybe` })).statusCode, 400)
})

t.test('create, update and delete', async (t) => {
  const { svc, call, base, create, clock } = await setup(t)
  const minimal = await call({ method: 'POST', url: base, payload: { name: 'Minimal', permissions: [] } })
  t.equal(minimal.statusCode, 201)
  t.match(minimal.json().data, { name: 'Minimal', description: '', permissions: [], is_default: false, usage_count: 0 })
  for (const payload of [
    { name: 'x', permissions: ['Teleport'] }, { name: 'x', permissions: ['ReadCredit', 'ReadCredit'] }, { name: '', permissions: [] },
    { name: 'x' }, { permissions: [] }, { name: 'x', permissions: [], role: 'admin' },
  ]) t.equal((await call({ method: 'POST', url: base, payload })).statusCode, 400, JSON.stringify(payload))

  const template = await create({ name: 'Desk', description: 'd', permissions: ['ReadCredit'] })
  clock.advance(60_000)
  const same = await call({ method: 'PUT', url: `${base}/${template.id}`, payload: { name: 'Desk', permissions: ['ReadCredit'] } })
  t.equal(same.json().data.updated_at, template.updated_at, 'an update that changes nothing leaves updated_at')
  const updated = await call({ method: 'PUT', url: `${base}/${template.id}`, payload: { permissions: ['ReadCredit', 'WriteCredit'], is_default: true } })
  t.match(updated.json().data, { name: 'Desk', description: 'd', permissions: ['ReadCredit', 'WriteCredit'], is_default: true, updated_at: clock.now().toISOString() })
  t.equal((await call({ method: 'PUT', url: `${base}/${template.id}`, payload: { permissions: ['Fly'] } })).statusCode, 400)
  t.equal((await call({ method: 'PUT', url: `${base}/${newId()}`, payload: { name: 'x' } })).statusCode, 404)

  for (const username of ['first.user', 'second.user']) {
    await call({ method: 'POST', url: `/v1/organization/${svc.organizationId}/users`, payload: { username, password: 'long enough password', roleTemplateId: template.id } })
  }
  const used = (await call({ method: 'GET', url: `${base}/${template.id}` })).json().data
  t.equal(used.usage_count, 2, 'usage_count counts the memberships')
  t.equal(used.updated_at, updated.json().data.updated_at, 'being used is no change of the template')
  const inUse = await call({ method: 'DELETE', url: `${base}/${template.id}` })
  t.equal(inUse.statusCode, 409)
  t.match(inUse.json().data, { code: 'ROLE_TEMPLATE_IN_USE', usageCount: 2 })
  const spare = await create({ name: 'Spare', permissions: [] })
  t.equal((await call({ method: 'DELETE', url: `${base}/${spare.id}` })).statusCode, 204)
  t.equal((await call({ method: 'GET', url: `${base}/${spare.id}` })).statusCode, 404)
  t.equal((await call({ method: 'PUT', url: `${base}/${spare.id}`, payload: { name: 'back' } })).statusCode, 404)
})

t.test('another organization\'s templates are a 404; reading and writing need their permissions', async (t) => {
  const { svc, call, base } = await setup(t)
  const other = await createOrganization(svc, 'Other lender')
  const foreign = builtInRoleTemplateId(other.id, 'analyst')
  t.equal((await call({ method: 'GET', url: `${base}/${foreign}` })).statusCode, 404)
  t.equal((await call({ method: 'PUT', url: `${base}/${foreign}`, payload: { name: 'mine now' } })).statusCode, 404)
  t.equal((await call({ method: 'DELETE', url: `${base}/${foreign}` })).statusCode, 404)
  const analyst = await memberToken(svc, svc.organizationId, 'analyst')
  t.equal((await call({ method: 'GET', url: base, token: analyst })).statusCode, 200)
  t.equal((await call({ method: 'POST', url: base, token: analyst, payload: { name: 'x', permissions: [] } })).statusCode, 403)
  const nobody = await memberToken(svc, svc.organizationId, [])
  t.equal((await call({ method: 'GET', url: base, token: nobody })).statusCode, 403)
  const outsider = await call({ method: 'GET', url: `/v1/organization/${other.id}/role-template`, token: analyst })
  t.equal(outsider.statusCode, 403)
  t.equal(outsider.json().data.code, 'ORGANIZATION_FORBIDDEN')
})

/** A client whose membership uses a new template with exactly these permissions (made by the platform administrator). */
const memberWithTemplate = async (svc: TestApp, permissions: readonly Permission[]) => {
  const template = await svc.call({
    method: 'POST', url: `/v1/organization/${svc.organizationId}/role-template`, token: svc.adminToken, payload: { name: `own ${newId()}`, permissions },
  })
  const templateId: string = template.json().data.id
  const client = await svc.call({
    method: 'POST', url: '/v1/oauth/clients', token: svc.adminToken,
    payload: { name: `member ${newId()}`, scopes: [], organizationId: svc.organizationId, roleTemplateId: templateId },
  })
  const { client_id, client_secret } = client.json().data.client
  return { templateId, token: await svc.clientToken(client_id, client_secret) }
}

t.test('a client holding only WriteRoleTemplate cannot add AdministerOrganization to its own template nor create a template with permissions it lacks', async (t) => {
  const { svc, call, base } = await setup(t)
  const { templateId, token } = await memberWithTemplate(svc, ['WriteRoleTemplate'])

  const widen = await call({ method: 'PUT', url: `${base}/${templateId}`, token, payload: { permissions: ['WriteRoleTemplate', 'AdministerOrganization'] } })
  t.equal(widen.statusCode, 403)
  t.same(widen.json().data, {
    code: 'FORBIDDEN', message: 'the caller lacks permissions of the role template: AdministerOrganization', permission: 'AdministerOrganization', missing: ['AdministerOrganization'],
  })
  const me = await svc.call({ method: 'GET', url: '/v1/me/permissions', token, organizationId: svc.organizationId })
  t.same(me.json().data, { organizationId: svc.organizationId, permissions: ['WriteRoleTemplate'], isAdministrator: false }, 'not administrator on the next request')
  t.same((await call({ method: 'GET', url: `${base}/${templateId}` })).json().data.permissions, ['WriteRoleTemplate'], 'the template is unchanged')

  const created = await call({ method: 'POST', url: base, token, payload: { name: 'Everything', permissions: ['ReadCredit', 'WriteRoleTemplate', 'ManageMembers'] } })
  t.equal(created.statusCode, 403)
  t.match(created.json().data, { code: 'FORBIDDEN', permission: 'ReadCredit', missing: ['ReadCredit', 'ManageMembers'] })
  t.same((await call({ method: 'GET', url: `${base}?search=Everything` })).json().data, [], 'nothing was created')

  // An existing template it did not make cannot be widened either, while edits within its permissions pass.
  const other = (await call({ method: 'POST', url: base, payload: { name: 'Reader', permissions: ['ReadCredit'] } })).json().data
  const widenOther = await call({ method: 'PUT', url: `${base}/${other.id}`, token, payload: { permissions: ['ReadCredit', 'WriteCredit'] } })
  t.equal(widenOther.statusCode, 403)
  t.same(widenOther.json().data.missing, ['ReadCredit', 'WriteCredit'])
  const own = await call({ method: 'POST', url: base, token, payload: { name: 'Template editors', permissions: ['WriteRoleTemplate'] } })
  t.equal(own.statusCode, 201, 'a template within the caller\'s permissions')
  t.equal((await call({ method: 'PUT', url: `${base}/${own.json().data.id}`, token, payload: { permissions: [] } })).statusCode, 200)
  t.equal((await call({ method: 'PUT', url: `${base}/${templateId}`, token, payload: { name: 'Renamed' } })).statusCode, 200, 'fields other than permissions are no grant')
})

t.test('a client holding only WriteRoleTemplate cannot edit a template holding permissions it lacks, not even to narrow it', async (t) => {
  const { svc, call, base } = await setup(t)
  const { token } = await memberWithTemplate(svc, ['WriteRoleTemplate'])
  const administrator = builtInRoleTemplateId(svc.organizationId, 'administrator')
  const strip = await call({ method: 'PUT', url: `${base}/${administrator}`, token, payload: { permissions: ['WriteRoleTemplate'] } })
  t.equal(strip.statusCode, 403)
  t.match(strip.json().data, { code: 'FORBIDDEN', permission: 'ReadCredit' })
  t.notOk(strip.json().data.missing.includes('WriteRoleTemplate'), 'only what the caller lacks is named')
  t.equal((await call({ method: 'PUT', url: `${base}/${administrator}`, token, payload: { name: 'Mine' } })).statusCode, 403, 'nor any other field of it')
  const stored = (await call({ method: 'GET', url: `${base}/${administrator}` })).json().data
  t.match(stored, { name: 'Administrator' })
  t.ok(stored.permissions.includes('AdministerOrganization'), 'the Administrator template keeps every permission')
})

t.test('an organization administrator may create and edit templates with any permissions, its own membership\'s included', async (t) => {
  const { svc, call, base } = await setup(t)
  // Not every permission: AdministerOrganization is what exempts it from the rule.
  const { templateId, token } = await memberWithTemplate(svc, ['AdministerOrganization', 'WriteRoleTemplate'])
  const created = await call({ method: 'POST', url: base, token, payload: { name: 'Credit desk', permissions: ['ReadCredit', 'WriteCredit'] } })
  t.equal(created.statusCode, 201)
  const updated = await call({ method: 'PUT', url: `${base}/${created.json().data.id}`, token, payload: { permissions: ['ReadCredit', 'WriteCredit', 'ApproveOrder'] } })
  t.equal(updated.statusCode, 200)
  const own = await call({ method: 'PUT', url: `${base}/${templateId}`, token, payload: { permissions: ['AdministerOrganization', 'WriteRoleTemplate', 'ReadTax'] } })
  t.equal(own.statusCode, 200)
  const me = await svc.call({ method: 'GET', url: '/v1/me/permissions', token, organizationId: svc.organizationId })
  t.ok(me.json().data.permissions.includes('ReadTax'))
})

t.test('a client holding only WriteRoleTemplate cannot delete a template holding permissions it lacks, the unused Administrator template included', async (t) => {
  const svc = await createTestApp(t)
  const org = (await createOrganization(svc, 'Fresh lender')).id
  const writer = await addMember(svc, org, 'template.writer', ['WriteRoleTemplate', 'ReadRoleTemplate', 'ReadTax'])
  const templates = `/v1/organization/${org}/role-template`
  const administrator = builtInRoleTemplateId(org, 'administrator')
  const refused = await svc.call({ method: 'DELETE', url: `${templates}/${administrator}`, token: writer.token })
  t.equal(refused.statusCode, 403)
  t.match(refused.json().data, { code: 'FORBIDDEN', permission: 'ReadCredit' })
  t.equal((await svc.call({ method: 'GET', url: `${templates}/${administrator}`, token: svc.adminToken })).statusCode, 200, 'the template is still there')
  const within = await svc.call({ method: 'POST', url: templates, token: writer.token, payload: { name: 'Tax readers', permissions: ['ReadTax'] } })
  t.equal(within.statusCode, 201)
  t.equal((await svc.call({ method: 'DELETE', url: `${templates}/${within.json().data.id}`, token: writer.token })).statusCode, 204, 'one within its own permissions it may delete')
})

t.test('the built-in Administrator template cannot be narrowed, since each start gives it every permission again; renaming it is fine', async (t) => {
  const { svc, call, base } = await setup(t)
  const administrator = `${base}/${builtInRoleTemplateId(svc.organizationId, 'administrator')}`
  const before: string[] = (await call({ method: 'GET', url: administrator })).json().data.permissions
  const narrowed = await call({ method: 'PUT', url: administrator, payload: { permissions: before.filter((p) => p !== 'WriteTax') } })
  t.equal(narrowed.statusCode, 409)
  t.match(narrowed.json().data, { code: 'BUILT_IN_ROLE_TEMPLATE', removed: ['WriteTax'] })
  t.ok((await call({ method: 'GET', url: administrator })).json().data.permissions.includes('WriteTax'), 'nothing was written')
  const renamed = await call({ method: 'PUT', url: administrator, payload: { name: 'Owners', permissions: [...before].reverse() } })
  t.equal(renamed.statusCode, 200)
  t.equal(renamed.json().data.name, 'Owners')
})

t.test('a template a revoked client used can be deleted: revoking, which is final, gives its use back', async (t) => {
  const { svc, call, base, create } = await setup(t)
  const template = await create({ name: 'Integrations', permissions: ['ReadCredit'] })
  const client = await svc.call({
    method: 'POST', url: '/v1/oauth/clients', token: svc.adminToken,
    payload: { name: 'erp', scopes: [], organizationId: svc.organizationId, roleTemplateId: template.id },
  })
  t.equal(client.statusCode, 201, client.body)
  const clientId: string = client.json().data.client.client_id
  t.match((await call({ method: 'DELETE', url: `${base}/${template.id}` })).json().data, { code: 'ROLE_TEMPLATE_IN_USE', usageCount: 1 })
  t.equal((await call({ method: 'POST', url: `/v1/organization/${svc.organizationId}/clients/${clientId}/revoke` })).statusCode, 200)
  t.equal((await call({ method: 'GET', url: `${base}/${template.id}` })).json().data.usage_count, 0)
  t.equal((await call({ method: 'DELETE', url: `${base}/${template.id}` })).statusCode, 204)
})

t.test('a name of spaces is refused', async (t) => {
  const { call, base, create } = await setup(t)
  const blank = await call({ method: 'POST', url: base, payload: { name: '   ', permissions: [] } })
  t.equal(blank.statusCode, 400)
  t.match(blank.json().data, { code: 'VALIDATION_ERROR', errors: [{ field: 'body.name' }] })
  const template = await create({ name: 'Desk', permissions: [] })
  t.equal((await call({ method: 'PUT', url: `${base}/${template.id}`, payload: { name: ' ' } })).statusCode, 400)
})

t.test('a member\'s edit or deletion racing an administrator\'s widening never strips the permissions the member lacks', async (t) => {
  const svc = await createTestApp(t)
  const base = `/v1/organization/${svc.organizationId}/role-template`
  const member = await memberToken(svc, svc.organizationId, ['WriteRoleTemplate', 'ReadRoleTemplate', 'ReadCredit', 'ManageMembers'])
  const narrow = await memberToken(svc, svc.organizationId, ['WriteRoleTemplate', 'ReadRoleTemplate', 'ReadCredit'])
  for (let round = 0; round < 10; round++) {
    const created = await svc.call({ method: 'POST', url: base, token: svc.adminToken, payload: { name: `desk ${round}`, permissions: ['ReadCredit'] } })
    const id: string = created.json().data.id
    const [widened, edited, deleted] = await Promise.all([
      svc.call({ method: 'PUT', url: `${base}/${id}`, token: svc.adminToken, payload: { permissions: ['ReadCredit', 'ReadTax'] } }),
      svc.call({ method: 'PUT', url: `${base}/${id}`, token: narrow, payload: { permissions: ['ReadCredit'], name: `desk ${round} (edited)` } }),
      round % 2 === 0 ? svc.call({ method: 'DELETE', url: `${base}/${id}`, token: narrow }) : Promise.resolve(null),
    ])
    const final = await svc.call({ method: 'GET', url: `${base}/${id}`, token: svc.adminToken })
    if (final.statusCode === 404) {
      t.equal(deleted?.statusCode, 204, `round ${round}: deleted by the member's deletion`)
      t.equal(widened.statusCode, 404, `round ${round}: which came before the widening`)
      continue
    }
    t.equal(widened.statusCode, 200, `round ${round}: the administrator's widening`)
    t.ok(final.json().data.permissions.includes('ReadTax'), `round ${round}: ReadTax stays (edit ${edited.statusCode}, deletion ${deleted?.statusCode ?? '-'})`)
    for (const answer of [edited, deleted]) {
      if (answer === null || answer.statusCode < 300) continue
      t.equal(answer.statusCode, 403, `round ${round}: a refusal is the granting rule's`)
      t.match(answer.json().data, { code: 'FORBIDDEN', missing: ['ReadTax'] })
    }
  }
  // A widening after which a member who holds everything may still edit: the rule refuses only what it must.
  const created = await svc.call({ method: 'POST', url: base, token: svc.adminToken, payload: { name: 'members desk', permissions: ['ReadCredit'] } })
  const id: string = created.json().data.id
  await svc.call({ method: 'PUT', url: `${base}/${id}`, token: svc.adminToken, payload: { permissions: ['ReadCredit', 'ManageMembers'] } })
  t.equal((await svc.call({ method: 'PUT', url: `${base}/${id}`, token: member, payload: { name: 'renamed' } })).statusCode, 200)
})

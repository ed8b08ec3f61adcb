import t from 'tap'
import { builtInRoleTemplateId, keyedRoleTemplateId } from '../../src/commands/roleTemplate.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { addMember, createOrganization } from '../helpers/members.js'
import { streamEventTypes } from '../helpers/streams.js'
import { oneCreatedOthersReturned, refusesMalformedKeys } from '../helpers/idempotency.js'

const desk = { name: 'Credit desk', description: 'Requests and approves credits', permissions: ['ReadCredit', 'WriteCredit', 'ReadProfile'] }

const templatesOf = (svc: TestApp, organizationId = svc.organizationId, token = svc.adminToken) => ({
  post: (key: string | undefined, payload: object) => svc.call({
    method: 'POST', url: `/v1/organization/${organizationId}/role-template`, token, payload, ...(key === undefined ? {} : { headers: { 'idempotency-key': key } }),
  }),
  put: (id: string, payload: object) => svc.call({ method: 'PUT', url: `/v1/organization/${organizationId}/role-template/${id}`, token, payload }),
  remove: (id: string) => svc.call({ method: 'DELETE', url: `/v1/organization/${organizationId}/role-template/${id}`, token }),
  count: async (): Promise<number> =>
    (await svc.call({ method: 'GET', url: `/v1/organization/${organizationId}/role-template?limit=100`, token })).json().pagination.total_items,
})

t.test('a role template created with an Idempotency-Key: 201 first, 200 with the template as it is now when sent again, 409 for another request', async (t) => {
  const svc = await createTestApp(t)
  const api = templatesOf(svc)
  const before = await api.count()
  const first = await api.post('desk-2026', desk)
  t.equal(first.statusCode, 201)
  const template = first.json().data
  t.equal(template.id, keyedRoleTemplateId(svc.organizationId, 'desk-2026'), 'the id derives from the organization and the Key')

  const again = await api.post('desk-2026', desk)
  t.equal(again.statusCode, 200)
  t.same(again.json(), first.json(), 'the same answer, the same template')
  const spelledOtherwise = await api.post('desk-2026', { ...desk, permissions: ['ReadProfile', 'ReadCredit', 'WriteCredit'], is_default: false })
  t.equal(spelledOtherwise.statusCode, 200, 'permissions in another order, the default is_default written out: the same request')

  t.equal((await api.put(template.id, { description: 'Renamed desk' })).statusCode, 200)
  const afterChange = await api.post('desk-2026', desk)
  t.equal(afterChange.statusCode, 200)
  t.equal(afterChange.json().data.description, 'Renamed desk', 'the template as it is now, not as the request made it')

  for (const [what, body] of [
    ['fewer permissions', { ...desk, permissions: ['ReadCredit'] }],
    ['another name', { ...desk, name: 'Desk 2' }],
    ['made the default', { ...desk, is_default: true }],
  ] as const) {
    const reused = await api.post('desk-2026', body)
    t.equal(reused.statusCode, 409, what)
    t.same(reused.json().data, {
      code: 'IDEMPOTENCY_KEY_REUSED', message: 'this Idempotency-Key was already used for a different role template creation request',
      key: 'desk-2026', roleTemplateId: template.id,
    }, what)
  }
  t.same(await streamEventTypes(svc, 'roleTemplate', template.id), ['RoleTemplateCreated', 'RoleTemplateUpdated'], 'one creation, and the change')
  t.equal(await api.count(), before + 1)

  t.equal((await api.remove(template.id)).statusCode, 204)
  const afterDeletion = await api.post('desk-2026', desk)
  t.equal(afterDeletion.statusCode, 404, 'a retry after the deletion is told the template is gone')
  t.match(afterDeletion.json().data, { code: 'NOT_FOUND', message: 'the role template this Idempotency-Key created has been deleted' })
  t.same(await streamEventTypes(svc, 'roleTemplate', template.id), ['RoleTemplateCreated', 'RoleTemplateUpdated', 'RoleTemplateDeleted'],
    'and nothing is created again under the Key')
})

t.test('concurrent creations with one Key make one template; another organization\'s same Key is its own; no Key, a new template each time', async (t) => {
  const svc = await createTestApp(t)
  const api = templatesOf(svc)
  const before = await api.count()
  const racing = await Promise.all(Array.from({ length: 6 }, () => api.post('race', desk)))
  oneCreatedOthersReturned(t, racing)
  t.same([...new Set(racing.map((r) => r.json().data.id))], [keyedRoleTemplateId(svc.organizationId, 'race')])

  const other = await createOrganization(svc, 'Otra S.A.')
  const theirs = await templatesOf(svc, other).post('race', desk)
  t.equal(theirs.statusCode, 201)
  t.equal(theirs.json().data.id, keyedRoleTemplateId(other, 'race'))

  const administrator = await api.post('administrator', desk)
  t.equal(administrator.statusCode, 201, 'a Key spelling a built-in template\'s name creates a template of its own')
  t.not(administrator.json().data.id, builtInRoleTemplateId(svc.organizationId, 'administrator'))

  const plain = await Promise.all([api.post(undefined, desk), api.post(undefined, desk)])
  t.same(plain.map((r) => r.statusCode), [201, 201])
  t.not(plain[0]?.json().data.id, plain[1]?.json().data.id)
  t.equal(await api.count(), before + 4)

  await refusesMalformedKeys(t, (key) => api.post(key, desk))
  t.equal((await api.post('bad-first', { ...desk, name: '  ' })).statusCode, 400, 'a blank name')
  t.equal((await api.post('bad-first', desk)).statusCode, 201, 'a refused creation leaves its Key free')
})

t.test('a caller may not use a Key to get around the granting rule: permissions it lacks are 403 whatever the Key names', async (t) => {
  const svc = await createTestApp(t)
  const admin = templatesOf(svc)
  t.equal((await admin.post('wide', { ...desk, permissions: ['ReadCredit', 'WriteCredit', 'ReadProfile', 'WriteTax'] })).statusCode, 201)
  const member = await addMember(svc, svc.organizationId, 'template.writer', ['ReadRoleTemplate', 'WriteRoleTemplate', 'ReadCredit'])
  const narrow = templatesOf(svc, svc.organizationId, member.token)
  const refused = await narrow.post('wide', { ...desk, permissions: ['ReadCredit', 'WriteCredit', 'ReadProfile', 'WriteTax'] })
  t.equal(refused.statusCode, 403, 'the same request from a caller who may not grant WriteTax')
  t.equal(refused.json().data.code, 'FORBIDDEN')
  t.equal((await narrow.post('narrow', { name: 'Reader', permissions: ['ReadCredit'] })).statusCode, 201)
  t.equal((await narrow.post('narrow', { name: 'Reader', permissions: ['ReadCredit'] })).statusCode, 200)
})

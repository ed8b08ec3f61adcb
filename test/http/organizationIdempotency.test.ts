import t from 'tap'
import { builtInRoleTemplateId } from '../../src/commands/identity.js'
import { keyedOrganizationId, organizationAggregate, organizationRequestHash } from '../../src/commands/organization.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { streamEventTypes } from '../helpers/streams.js'
import { oneCreatedOthersReturned, refusesMalformedKeys } from '../helpers/idempotency.js'

const post = (svc: TestApp, key: string | undefined, payload: object, token = svc.adminToken) => svc.call({
  method: 'POST', url: '/v1/organizations', token, payload, ...(key === undefined ? {} : { headers: { 'idempotency-key': key } }),
})
const count = async (svc: TestApp): Promise<number> =>
  (await svc.call({ method: 'GET', url: '/v1/organizations?limit=100', token: svc.adminToken })).json().pagination.total_items

t.test('an organization created with an Idempotency-Key: 201 first, 200 with it as it is now when sent again, 409 for another name', async (t) => {
  const svc = await createTestApp(t)
  const before = await count(svc)
  const first = await post(svc, 'acme-onboarding', { name: 'Acme S.A.S.' })
  t.equal(first.statusCode, 201)
  const organization = first.json().data.organization
  t.equal(organization.id, keyedOrganizationId('acme-onboarding'))
  const again = await post(svc, 'acme-onboarding', { name: 'Acme S.A.S.' })
  t.equal(again.statusCode, 200)
  t.same(again.json(), first.json(), 'the same organization, its configuration included')

  const renamed = await svc.call({ method: 'PATCH', url: `/v1/organizations/${organization.id}`, token: svc.adminToken, payload: { name: 'Acme Colombia' } })
  t.equal(renamed.statusCode, 200)
  t.equal((await post(svc, 'acme-onboarding', { name: 'Acme S.A.S.' })).json().data.organization.name, 'Acme Colombia', 'as it is now')
  const reused = await post(svc, 'acme-onboarding', { name: 'Other S.A.' })
  t.equal(reused.statusCode, 409)
  t.same(reused.json().data, {
    code: 'IDEMPOTENCY_KEY_REUSED', message: 'this Idempotency-Key was already used for a different organization creation request',
    key: 'acme-onboarding', organizationId: organization.id,
  })
  t.same(await streamEventTypes(svc, 'organization', organization.id), ['OrganizationCreated', 'OrganizationRenamed'])
  t.equal(await count(svc), before + 1)

  const racing = await Promise.all(Array.from({ length: 6 }, () => post(svc, 'race', { name: 'Race S.A.' })))
  oneCreatedOthersReturned(t, racing)
  t.same([...new Set(racing.map((r) => r.json().data.organization.defaultConfigId))].length, 1, 'one organization, one configuration')
  t.equal(await count(svc), before + 2)
  await refusesMalformedKeys(t, (key) => post(svc, key, { name: 'X' }))
})

t.test('a retry completes a keyed creation cut off before its built-in role templates', async (t) => {
  const svc = await createTestApp(t)
  const organizationId = keyedOrganizationId('cut-off')
  const idempotency = { key: 'cut-off', requestHash: organizationRequestHash('Cut Off S.A.') }
  await svc.runtime.commands.execute(organizationAggregate, organizationId, {
    type: 'CreateOrganization', organizationId, name: 'Cut Off S.A.', defaultConfigId: 'c', now: new Date().toISOString(), idempotency,
  }, { organizationId, actorId: 'test', correlationId: 'c-1' })
  t.same(await streamEventTypes(svc, 'roleTemplate', builtInRoleTemplateId(organizationId, 'administrator')), [], 'cut off: no templates yet')
  const retried = await post(svc, 'cut-off', { name: 'Cut Off S.A.' })
  t.equal(retried.statusCode, 200)
  t.same(await streamEventTypes(svc, 'roleTemplate', builtInRoleTemplateId(organizationId, 'administrator')), ['RoleTemplateCreated'], 'the retry made them')
})

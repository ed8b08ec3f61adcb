import path from 'node:path'
import t from 'tap'
import { builtInRoleTemplateId } from '../../src/commands/identity.js'
import { creditLineAggregate } from '../../src/commands/creditLine.js'
import { CommandHandler } from '../../src/commands/handler.js'
import { organizationAggregate } from '../../src/commands/organization.js'
import { SqliteEventStore } from '../../src/events/sqlite.js'
import { streamName } from '../../src/events/streams.js'
import { ManualClock } from '../../src/shared/clock.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { addMember } from '../helpers/members.js'
import { lending } from '../helpers/lending.js'
import { createOrganization } from '../helpers/organizations.js'

const eventTypesOf = async (svc: TestApp, organizationId: string): Promise<string[]> => {
  const types: string[] = []
  for await (const event of svc.runtime.eventStore.readStream(streamName('organization', organizationId))) types.push(event.type)
  return types
}

t.test('a deactivated organization refuses its members and takes no new ones until it is activated again, with the roles they held', async (t) => {
  const clock = new ManualClock('2026-11-23T10:00:00.000Z')
  const svc = await createTestApp(t, { clock })
  const org = (await createOrganization(svc, 'Cooperativa Sur')).id
  const member = await addMember(svc, org, 'sur.analyst', ['ReadTax'])
  const admin = (method: 'POST' | 'PATCH', url: string, payload?: object) =>
    svc.call({ method, url: `/v1/organizations/${org}${url}`, token: svc.adminToken, ...(payload === undefined ? {} : { payload }) })
  const memberReadsTaxes = () => svc.call({ method: 'GET', url: '/v1/taxes', token: member.token, organizationId: org })
  t.equal((await memberReadsTaxes()).statusCode, 200)

  clock.set('2026-11-23T10:05:00.000Z')
  const deactivated = await admin('POST', '/deactivate', { reason: 'contract under review' })
  t.equal(deactivated.statusCode, 200)
  t.match(deactivated.json().data.organization, {
    id: org, active: false, deactivationReason: 'contract under review', deactivatedAt: '2026-11-23T10:05:00.000Z', updatedAt: '2026-11-23T10:05:00.000Z',
  })

  const refused = await memberReadsTaxes()
  t.equal(refused.statusCode, 403)
  t.match(refused.json(), { status: 'fail', data: { code: 'ORGANIZATION_INACTIVE', organizationId: org } })
  const memberReadsIt = await svc.call({ method: 'GET', url: `/v1/organizations/${org}`, token: member.token })
  t.equal(memberReadsIt.json().data.code, 'ORGANIZATION_INACTIVE', 'its member is told why')
  const adminReadsIt = await svc.call({ method: 'GET', url: `/v1/organizations/${org}`, token: svc.adminToken })
  t.equal(adminReadsIt.statusCode, 200, 'the platform administrator still sees it')
  t.equal(adminReadsIt.json().data.organization.active, false)
  const listed = await svc.call({ method: 'GET', url: '/v1/organizations', token: svc.adminToken })
  t.match(listed.json().data.find((o: { id: string }) => o.id === org), { active: false, deactivationReason: 'contract under review' })
  const memberList = await svc.call({ method: 'GET', url: '/v1/organizations', token: member.token })
  t.match(memberList.json().data, [{ id: org, active: false, deactivatedAt: '2026-11-23T10:05:00.000Z', deactivationReason: null }],
    'its member sees that it is inactive and since when, not the administrator\'s reason')
  const newUser = await svc.call({
    method: 'POST', url: `/v1/organization/${org}/users`, token: svc.adminToken,
    payload: { username: 'too.late', password: 'long enough password', roleTemplateId: builtInRoleTemplateId(org, 'analyst') },
  })
  t.equal(newUser.json().data.code, 'ORGANIZATION_INACTIVE', 'not even the platform administrator adds a member meanwhile')

  clock.set('2026-11-23T10:10:00.000Z')
  const again = await admin('POST', '/deactivate', { reason: 'another reason' })
  t.equal(again.statusCode, 200)
  t.match(again.json().data.organization, { deactivationReason: 'contract under review', deactivatedAt: '2026-11-23T10:05:00.000Z' }, 'deactivating it again changes nothing')

  const activated = await admin('POST', '/activate')
  t.equal(activated.statusCode, 200)
  t.match(activated.json().data.organization, { active: true, deactivationReason: null, deactivatedAt: null, updatedAt: '2026-11-23T10:10:00.000Z' })
  const back = await memberReadsTaxes()
  t.equal(back.statusCode, 200, 'its member acts in it again, with the same role')
  t.equal((await admin('POST', '/activate')).statusCode, 200)
  t.same(await eventTypesOf(svc, org), ['OrganizationCreated', 'OrganizationDeactivated', 'OrganizationActivated'], 'repeats recorded nothing')
})

t.test('renaming an organization shows the new name to its members at once; the same name records nothing', async (t) => {
  const svc = await createTestApp(t)
  const org = (await createOrganization(svc, 'Cooperativa Sur')).id
  const member = await addMember(svc, org, 'sur.reader', 'analyst')
  const rename = (name: string) => svc.call({ method: 'PATCH', url: `/v1/organizations/${org}`, token: svc.adminToken, payload: { name } })
  const renamed = await rename('Cooperativa del Sur')
  t.equal(renamed.statusCode, 200)
  t.equal(renamed.json().data.organization.name, 'Cooperativa del Sur')
  const seen = await svc.call({ method: 'GET', url: `/v1/organizations/${org}`, token: member.token })
  t.equal(seen.json().data.organization.name, 'Cooperativa del Sur')
  t.equal((await rename('Cooperativa del Sur')).statusCode, 200)
  t.same(await eventTypesOf(svc, org), ['OrganizationCreated', 'OrganizationRenamed'])
})

t.test('only the platform administrator changes an organization; unknown ones are 404 and bad bodies 400, all in the envelope', async (t) => {
  const svc = await createTestApp(t)
  const org = svc.organizationId
  const orgAdmin = await addMember(svc, org, 'org.admin', 'administrator')
  const call = (token: string, method: 'POST' | 'PATCH', url: string, payload?: object) =>
    svc.call({ method, url: `/v1/organizations/${url}`, token, ...(payload === undefined ? {} : { payload }) })

  for (const [method, url, payload] of [
    ['PATCH', org, { name: 'Mine now' }], ['POST', `${org}/deactivate`, { reason: 'x' }], ['POST', `${org}/activate`, undefined],
  ] as const) {
    const response = await call(orgAdmin.token, method, url, payload)
    t.equal(response.statusCode, 403, `${method} ${url} by the organization's own administrator`)
    t.equal(response.json().data.code, 'INSUFFICIENT_SCOPE')
  }

  const unknown = '0190f0c4-0000-7000-8000-000000000000'
  for (const [method, url, payload] of [
    ['PATCH', unknown, { name: 'Nobody' }], ['POST', `${unknown}/deactivate`, { reason: 'x' }], ['POST', `${unknown}/activate`, undefined],
  ] as const) {
    const response = await call(svc.adminToken, method, url, payload)
    t.equal(response.statusCode, 404, `${method} ${url}`)
    t.equal(response.json().data.code, 'NOT_FOUND')
  }
  t.equal((await svc.call({ method: 'GET', url: `/v1/organizations/${unknown}`, token: svc.adminToken })).statusCode, 404)

  for (const [method, url, payload, field] of [
    ['PATCH', org, { name: '' }, 'body.name'],
    ['PATCH', org, { name: 'A', active: false }, 'body'],
    ['POST', `${org}/deactivate`, {}, 'body.reason'],
    ['POST', `${org}/deactivate`, { reason: '' }, 'body.reason'],
    ['POST', `${org}/deactivate`, { reason: '   ' }, 'body.reason'],
    ['POST', `${org}/deactivate`, { reason: 'r'.repeat(501) }, 'body.reason'],
    ['POST', 'not-a-uuid/deactivate', { reason: 'x' }, 'params.entityid'],
  ] as const) {
    const response = await call(svc.adminToken, method, url, payload)
    t.equal(response.statusCode, 400, `${method} ${url} ${JSON.stringify(payload)}`)
    t.equal(response.json().data.code, 'VALIDATION_ERROR')
    t.ok(response.json().data.errors.some((e: { field: string }) => e.field.startsWith(field)), `names ${field}`)
  }
  t.same(await eventTypesOf(svc, org), ['OrganizationCreated'], 'nothing refused was recorded')
  t.equal((await svc.call({ method: 'GET', url: '/v1/taxes', token: orgAdmin.token, organizationId: org })).statusCode, 200)
})

t.test('a deactivated organization\'s credit products leave the public marketplace until it is activated again', async (t) => {
  const svc = await createTestApp(t)
  const org = (await createOrganization(svc, 'Cooperativa Sur')).id
  const lines = await lending(svc, org)
  const line = await lines.createLine({ name: 'Crédito Sur' })
  const marketplace = async () => (await svc.call({ method: 'GET', url: '/v1/products?limit=100' })).json().data.products.map((p: { ID: string }) => p.ID)
  const product = async () => (await svc.call({ method: 'GET', url: `/v1/products/${line}` })).statusCode
  t.ok((await marketplace()).includes(line))
  t.equal(await product(), 200)

  await svc.call({ method: 'POST', url: `/v1/organizations/${org}/deactivate`, token: svc.adminToken, payload: { reason: 'license suspended' } })
  t.notOk((await marketplace()).includes(line), 'left out of the public list')
  t.equal(await product(), 404, 'the public product answers as an unknown one')
  const total = (await svc.call({ method: 'GET', url: '/v1/products' })).json().pagination.total_items
  t.equal(total, (await marketplace()).length, 'the count leaves it out too')

  await svc.call({ method: 'POST', url: `/v1/organizations/${org}/activate`, token: svc.adminToken })
  t.ok((await marketplace()).includes(line), 'offered again')
  t.equal(await product(), 200)
})

t.test('a line whose creation raced its organization\'s deactivation stays off the marketplace until the organization is activated', async (t) => {
  const svc = await createTestApp(t)
  const org = (await createOrganization(svc, 'Cooperativa Sur')).id
  const lines = await lending(svc, org)
  const commands = svc.runtime.commands
  const execute = commands.execute.bind(commands)
  // The deactivation lands after the route's organization check and before the line's command.
  commands.execute = async (aggregate, id, command, context) => {
    if (aggregate === creditLineAggregate) {
      commands.execute = execute
      await execute(organizationAggregate, org, { type: 'DeactivateOrganization', reason: 'raced' }, context)
    }
    return execute(aggregate, id, command, context)
  }
  const line = await lines.createLine({ name: 'Crédito carrera' })
  const product = async () => (await svc.call({ method: 'GET', url: `/v1/products/${line}` })).statusCode
  t.equal(await product(), 404, 'recorded after the deactivation: hidden')
  await svc.call({ method: 'POST', url: `/v1/organizations/${org}/activate`, token: svc.adminToken })
  t.equal(await product(), 200)
})

t.test('a repeat answers the organization as the change that made it a repeat left it, even before that change was projected', async (t) => {
  const svc = await createTestApp(t)
  const org = (await createOrganization(svc, 'Cooperativa Este')).id
  // Another instance on the same event store: this one sees its appends only when its subscription next polls the file.
  const elsewhere = new SqliteEventStore({ file: path.join(svc.config.dataDir, 'events.sqlite'), writer: 'inline' })
  t.teardown(() => elsewhere.close())
  const otherInstance = new CommandHandler({ eventStore: elsewhere, clock: new ManualClock(), maxRetries: 3 })
  for (const [action, command] of [['deactivate', { type: 'DeactivateOrganization', reason: 'elsewhere' }], ['activate', { type: 'ActivateOrganization' }]] as const) {
    await otherInstance.execute(organizationAggregate, org, command, { organizationId: org, actorId: 'another-instance', correlationId: action })
    const repeat = await svc.call({
      method: 'POST', url: `/v1/organizations/${org}/${action}`, token: svc.adminToken, ...(action === 'deactivate' ? { payload: { reason: 'here too' } } : {}),
    })
    t.equal(repeat.statusCode, 200)
    t.equal(repeat.json().data.organization.active, action === 'activate', `${action}: a repeat of the other instance's change`)
  }
  t.same(await eventTypesOf(svc, org), ['OrganizationCreated', 'OrganizationDeactivated', 'OrganizationActivated'], 'the repeats recorded nothing')
})

import { pino } from 'pino'
import t, { type Test } from 'tap'
import type { CommandHandler } from '../../src/commands/handler.js'
import { changeMemberRole, createClient, createUser, withdrawLeftUse } from '../../src/commands/identity.js'
import { roleTemplateAggregate } from '../../src/commands/roleTemplate.js'
import { membershipId } from '../../src/events/membership.js'
import { usernameStreamId } from '../../src/events/user.js'
import { hashSecret } from '../../src/identity/passwords.js'
import { REGISTRATION_GRACE_MS, registrationRecoveryJob } from '../../src/processes/registrationRecovery.js'
import type { Runtime } from '../../src/runtime.js'
import { ManualClock } from '../../src/shared/clock.js'
import { newId } from '../../src/shared/ids.js'
import { createTestApp, requestToken, type TestApp } from '../helpers/app.js'
import { roleTemplateWith } from '../helpers/members.js'

const PASSWORD = 'long enough password'
const crash = new Error('the process stopped here')
const MINUTE = 60_000

/**
 * The service's command handler, as if the process stopped just before the
 * command of type `stopAt`: that command and every one after it (the
 * workflow's own clean-up included) fail, and what came before stays.
 */
const cutOffAt = (commands: CommandHandler, stopAt: string): CommandHandler => {
  let stopped = false
  const cut: CommandHandler = Object.create(commands)
  cut.execute = (aggregate, streamId, command, context) => {
    if (typeof command === 'object' && command !== null && 'type' in command && command.type === stopAt) stopped = true
    return stopped ? Promise.reject(crash) : commands.execute(aggregate, streamId, command, context)
  }
  return cut
}

const setup = async (t: Test, readStore: 'memory' | 'sqlite' = 'memory') => {
  const clock = new ManualClock('2026-03-02T09:00:00.000Z')
  const svc = await createTestApp(t, { clock, config: { accessTokenTtl: 86_400, readStore } })
  const org = svc.organizationId
  const templates = `/v1/organization/${org}/role-template`
  // The uses the template itself counts, which refuse its deletion; the API's usage_count must show the same.
  const usage = async (id: string): Promise<number> => {
    const uses = (await svc.runtime.commands.load(roleTemplateAggregate, id)).state.memberships.size
    await svc.runtime.settle(await svc.runtime.eventStore.headPosition())
    const shown = await svc.call({ method: 'GET', url: `${templates}/${id}`, token: svc.adminToken })
    t.equal(shown.json().data.usage_count, uses, 'usage_count shows the uses that refuse a deletion')
    return uses
  }
  const context = { organizationId: org, actorId: 'admin', correlationId: newId() }
  const cutUserCreation = async (stopAt: string, username: string, roleTemplateId: string) => {
    const userId = newId()
    const input = { userId, username, passwordHash: await hashSecret(PASSWORD), organizationId: org, roleTemplateId, encryptedTotpSecret: null, now: clock.now().toISOString(), grantor: 'all' as const }
    await t.rejects(createUser(cutOffAt(svc.runtime.commands, stopAt), input, context), crash)
    return userId
  }
  const addUser = (username: string, roleTemplateId: string) => svc.call({
    method: 'POST', url: `/v1/organization/${org}/users`, token: svc.adminToken, payload: { username, password: PASSWORD, roleTemplateId },
  })
  const signIn = (username: string) => requestToken(svc.app, {
    grant_type: 'password', username, password: PASSWORD, client_id: svc.config.adminClientId ?? '', client_secret: svc.config.adminClientSecret ?? '',
  })
  const recover = async () => {
    await svc.runtime.scheduler.runNow('registrationRecovery')
    await svc.runtime.settle(await svc.runtime.eventStore.headPosition())
  }
  const typesOf = async (streamId: string) => {
    const types: string[] = []
    for await (const event of svc.runtime.history(streamId)) types.push(event.type)
    return types
  }
  return { svc, clock, org, templates, usage, cutUserCreation, addUser, signIn, recover, typesOf }
}

const template = (svc: TestApp, org: string) => roleTemplateWith(svc, org, ['ReadTax'])

t.test('a user creation cut off before its username was claimed gives its role template back, after the grace period only', async (t) => {
  const { svc, clock, org, templates, usage, cutUserCreation, recover, typesOf } = await setup(t)
  const roleTemplateId = await template(svc, org)
  const userId = await cutUserCreation('ClaimUsername', 'cut-early', roleTemplateId)
  t.equal(await usage(roleTemplateId), 1, 'the cut-off creation left the template\'s use behind')
  const pending = () => svc.runtime.queries.pendingRegistrations.membershipsPendingSince('9999-12-31T00:00:00.000Z', 100)
  const seen = await pending()
  t.same(seen.map((doc) => [doc._id, doc.principalId]), [[membershipId(org, userId), null]], 'only the cut-off creation is pending')
  await svc.runtime.projections.rebuild(['pendingRegistrations'])
  t.same(await pending(), seen, 'a rebuild gives the same pending documents')

  clock.advance(REGISTRATION_GRACE_MS - MINUTE)
  await recover()
  t.equal(await usage(roleTemplateId), 1, 'within the grace period a creation might still be under way: left alone')

  clock.advance(2 * MINUTE)
  await recover()
  await recover()
  t.equal(await usage(roleTemplateId), 0)
  t.same(await typesOf(`roleTemplate-${roleTemplateId}`), ['RoleTemplateCreated', 'RoleTemplateAssigned', 'RoleTemplateUnassigned'], 'withdrawn once, however often the job runs')
  t.same(await typesOf(`membership-${membershipId(org, userId)}`), [], 'no membership for a user that does not exist')
  t.equal((await svc.call({ method: 'DELETE', url: `${templates}/${roleTemplateId}`, token: svc.adminToken })).statusCode, 204, 'the template can be deleted again')
})

for (const readStore of ['memory', 'sqlite'] as const) t.test(`a user creation cut off after claiming its username releases the name for the next creation (${readStore} read store)`, async (t) => {
  const { svc, clock, org, usage, cutUserCreation, addUser, recover, typesOf } = await setup(t, readStore)
  const roleTemplateId = await template(svc, org)
  const userId = await cutUserCreation('RegisterUser', 'Zoe', roleTemplateId)
  const taken = await addUser('zoe', roleTemplateId)
  t.equal(taken.json().data.code, 'USERNAME_TAKEN', 'the name is held by a user that was never registered')

  clock.advance(REGISTRATION_GRACE_MS + MINUTE)
  await recover()
  t.same(await typesOf(`username-${usernameStreamId('zoe')}`), ['UsernameClaimed', 'UsernameReleased'])
  t.equal(await usage(roleTemplateId), 0, 'the cut-off creation\'s use is withdrawn too')
  const created = await addUser('zoe', roleTemplateId)
  t.equal(created.statusCode, 201)
  t.not(created.json().data.user.id, userId)
  t.equal(await usage(roleTemplateId), 1)
  await recover()
  t.same(await typesOf(`username-${usernameStreamId('zoe')}`), ['UsernameClaimed', 'UsernameReleased', 'UsernameClaimed'],
    'the new claim is not pending: the next run leaves it')
})

t.test('a user registered but cut off before its membership gets the membership it was created with', async (t) => {
  const { svc, clock, org, usage, cutUserCreation, signIn, recover } = await setup(t)
  const roleTemplateId = await template(svc, org)
  await cutUserCreation('GrantMembership', 'half-made', roleTemplateId)
  const login = await signIn('half-made')
  t.equal(login.statusCode, 200)
  const token: string = login.json().access_token
  const taxes = () => svc.call({ method: 'GET', url: '/v1/taxes', token, organizationId: org })
  t.equal((await taxes()).statusCode, 403, 'registered, but not yet a member')

  clock.advance(REGISTRATION_GRACE_MS + MINUTE)
  await recover()
  t.equal((await taxes()).statusCode, 200, 'now a member with the template asked for')
  t.equal(await usage(roleTemplateId), 1)
})

t.test('a client registered but cut off before its membership gets it, and one cut off before registering gives its template back', async (t) => {
  const { svc, clock, org, usage, recover, typesOf } = await setup(t)
  const roleTemplateId = await template(svc, org)
  const context = { organizationId: org, actorId: 'admin', correlationId: newId() }
  const client = (clientId: string) => ({
    clientId, name: clientId, secretHash: 'x', scopes: [], organizationId: org, roleTemplateId, now: clock.now().toISOString(), grantor: 'all' as const,
  })
  await t.rejects(createClient(cutOffAt(svc.runtime.commands, 'GrantMembership'), client('registered-only'), context), crash)
  await t.rejects(createClient(cutOffAt(svc.runtime.commands, 'RegisterClient'), client('never-registered'), context), crash)
  t.equal(await usage(roleTemplateId), 2)

  clock.advance(REGISTRATION_GRACE_MS + MINUTE)
  await recover()
  t.same(await typesOf(`membership-${membershipId(org, 'registered-only')}`), ['MembershipGranted'])
  t.same(await typesOf(`membership-${membershipId(org, 'never-registered')}`), [])
  t.equal(await usage(roleTemplateId), 1, 'the registered client\'s use stays; the other is withdrawn')
})

t.test('completed creations are never touched by the recovery', async (t) => {
  const { svc, clock, org, usage, addUser, recover, typesOf } = await setup(t)
  const roleTemplateId = await template(svc, org)
  t.equal((await addUser('complete', roleTemplateId)).statusCode, 201)
  const before = await svc.runtime.eventStore.headPosition()
  clock.advance(24 * 60 * MINUTE)
  await recover()
  t.equal(await svc.runtime.eventStore.headPosition(), before, 'nothing appended')
  t.equal(await usage(roleTemplateId), 1)
  t.same(await typesOf(`username-${usernameStreamId('complete')}`), ['UsernameClaimed'])
})

t.test('two instances recovering the same cut-off creations at once do each repair once and log each once', async (t) => {
  const { svc, clock, org, usage, cutUserCreation, typesOf } = await setup(t)
  const roleTemplateId = await template(svc, org)
  await cutUserCreation('ClaimUsername', 'raced', roleTemplateId)
  await cutUserCreation('RegisterUser', 'raced-name', roleTemplateId)
  clock.advance(REGISTRATION_GRACE_MS + MINUTE)

  const recovered: string[] = []
  // Two service instances on one store: the same runtime, each with a logger of its own.
  const instance = (name: string): Runtime => Object.create(svc.runtime, {
    logger: { value: Object.create(pino({ level: 'silent' }), {
      info: { value: (_what: unknown, message: string) => { if (message === 'cut-off registration recovered') recovered.push(name) } },
    }) },
  })
  await Promise.all([registrationRecoveryJob.run(instance('a')), registrationRecoveryJob.run(instance('b'))])
  await svc.runtime.settle(await svc.runtime.eventStore.headPosition())

  t.equal(await usage(roleTemplateId), 0, 'both uses withdrawn')
  t.same(await typesOf(`roleTemplate-${roleTemplateId}`), ['RoleTemplateCreated', 'RoleTemplateAssigned', 'RoleTemplateAssigned',
    'RoleTemplateUnassigned', 'RoleTemplateUnassigned'], 'each withdrawn once')
  t.same(await typesOf(`username-${usernameStreamId('raced-name')}`), ['UsernameClaimed', 'UsernameReleased'])
  t.equal(recovered.length, 3, 'two uses and a username recovered, each logged once, by the instance that did it')
})

t.test('a role change cut off between its steps is completed or undone by the recovery, never leaving a membership on an unrecorded template', async (t) => {
  const { svc, clock, org, usage, addUser, recover } = await setup(t)
  const from = await template(svc, org)
  const to = await roleTemplateWith(svc, org, ['ReadTax', 'ReadCredit'])
  const userId: string = (await addUser('changing', from)).json().data.user.id
  const context = { organizationId: org, actorId: 'admin', correlationId: newId() }
  const cutChange = (stopAt: string) =>
    t.rejects(changeMemberRole(cutOffAt(svc.runtime.commands, stopAt), { organizationId: org, principalId: userId, roleTemplateId: to, grantor: 'all' }, context), crash)
  const roleOf = async () =>
    (await svc.call({ method: 'GET', url: `/v1/organization/${org}/users/${userId}`, token: svc.adminToken })).json().data.user.roleTemplateId

  await cutChange('ChangeMembershipRole')
  t.equal(await usage(to), 1, 'cut off before the membership changed: the new template\'s use was recorded')
  clock.advance(REGISTRATION_GRACE_MS + MINUTE)
  await recover()
  t.equal(await roleOf(), from)
  t.same([await usage(from), await usage(to)], [1, 0], 'the recovery withdraws it: the membership never moved')

  await cutChange('UnassignRoleTemplate')
  t.equal(await roleOf(), to, 'cut off after the membership changed')
  clock.advance(REGISTRATION_GRACE_MS + MINUTE)
  await recover()
  t.equal(await usage(to), 1, 'the template the membership uses keeps its use')
  t.equal(await usage(from), 0, 'the recovery withdraws the use of the template it left, as the change would have')
  t.equal(await roleOf(), to)
})

t.test('the recovery keeps a template\'s use when the membership is back on that template by the time it runs', async (t) => {
  const { svc, org, usage, addUser } = await setup(t)
  const roleTemplateId = await template(svc, org)
  const userId: string = (await addUser('moved-back', roleTemplateId)).json().data.user.id
  const context = { organizationId: org, actorId: null, correlationId: newId() }
  const withdrawn = await withdrawLeftUse(svc.runtime.commands, membershipId(org, userId), roleTemplateId, context)
  t.same(withdrawn.events, [], 'nothing written')
  t.equal(await usage(roleTemplateId), 1)
})

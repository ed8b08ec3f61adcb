import { pino } from 'pino'
import t from 'tap'
import { CommandHandler } from '../../src/commands/handler.js'
import { clientStreamId } from '../../src/commands/identity.js'
import { oauthClientAggregate } from '../../src/commands/oauthClient.js'
import { refreshTokenFamilyAggregate } from '../../src/commands/refreshTokenFamily.js'
import type { OAuthClientEvent } from '../../src/events/oauthClient.js'
import { SqliteEventStore } from '../../src/events/sqlite.js'
import { streamName } from '../../src/events/streams.js'
import { MemoryReadStore } from '../../src/projections/memoryStore.js'
import { principalQueries, principalsProjection, secretVersionOf, type RevokedSignInDoc } from '../../src/projections/principals.js'
import type { ReadStore } from '../../src/projections/readStore.js'
import { ProjectionRunner } from '../../src/projections/runner.js'
import { SqliteReadStore } from '../../src/projections/sqliteStore.js'
import { ManualClock } from '../../src/shared/clock.js'

const logger = pino({ level: 'silent' })
const context = { organizationId: 'o1', actorId: 'c1', correlationId: 'c' }
const DAY = 86_400_000

const revokedSignIns = (store: ReadStore) => store.collection<RevokedSignInDoc>('revoked_sign_ins').find({}, { sort: { _id: 1 } })

const stores: Array<[string, () => ReadStore]> = [
  ['memory', () => new MemoryReadStore()],
  ['sqlite', () => new SqliteReadStore({ file: ':memory:' })],
]

for (const [kind, makeStore] of stores) {
  t.test(`${kind} read store: a revoked sign-in is forgotten once a revocation comes more than a day after it; a replay keeps the same entries`, async (t) => {
    const eventStore = new SqliteEventStore({ file: ':memory:' })
    const readStore = makeStore()
    const runner = new ProjectionRunner(eventStore, readStore, [principalsProjection], { logger })
    t.teardown(async () => { await runner.stop(); await readStore.close(); await eventStore.close() })
    await runner.start()
    const clock = new ManualClock('2026-01-10T00:00:00.000Z')
    const commands = new CommandHandler({ eventStore, clock, maxRetries: 1 })
    const signIn = (familyId: string) => commands.execute(refreshTokenFamilyAggregate, familyId, {
      type: 'IssueRefreshToken', familyId, clientId: 'c1', userId: 'u1', passwordVersion: 0, scope: '', tokenHash: `h-${familyId}`,
      expiresAt: '2026-03-01T00:00:00.000Z', now: clock.now().toISOString(),
    }, context)
    const signOut = async (familyId: string) => {
      await commands.execute(refreshTokenFamilyAggregate, familyId, { type: 'RevokeRefreshTokenFamily', now: clock.now().toISOString() }, context)
      t.ok(await runner.waitFor(await eventStore.headPosition(), 2000), `the sign-out of ${familyId} is read`)
    }
    for (const familyId of ['a', 'b', 'c']) await signIn(familyId)

    await signOut('a')
    clock.advance(DAY)
    await signOut('b')
    t.same((await revokedSignIns(readStore)).map(({ _id, revokedAt }) => ({ _id, revokedAt })), [
      { _id: 'a', revokedAt: '2026-01-10T00:00:00.000Z' }, { _id: 'b', revokedAt: '2026-01-11T00:00:00.000Z' },
    ], 'a revocation exactly a day old is still needed: a token issued just before it may live that long')
    clock.advance(DAY)
    await signOut('c')
    const live = await revokedSignIns(readStore)
    t.same(live.map(({ _id, revokedAt }) => ({ _id, revokedAt })), [{ _id: 'b', revokedAt: '2026-01-11T00:00:00.000Z' }, { _id: 'c', revokedAt: '2026-01-12T00:00:00.000Z' }],
      'the revocation two days before the last one is forgotten')
    const queries = principalQueries(readStore)
    t.equal(await queries.revokedSignIn('a'), null)
    t.match(await queries.revokedSignIn('c'), { revokedAt: '2026-01-12T00:00:00.000Z' })

    for await (const event of eventStore.readAll()) await principalsProjection.project(readStore, event, event.position)
    t.same(await revokedSignIns(readStore), live, 'every event delivered again: the same entries')
    await runner.rebuild()
    t.same(await revokedSignIns(readStore), live, 'rebuilt from zero: the same entries')
    await runner.rebuild()
    t.same(await revokedSignIns(readStore), live, 'and again')
  })
}

t.test('revoked sign-ins are pruned at the first revocation of each hour, so one may outlive its day by less than an hour', async (t) => {
  const eventStore = new SqliteEventStore({ file: ':memory:' })
  const readStore = new MemoryReadStore()
  const runner = new ProjectionRunner(eventStore, readStore, [principalsProjection], { logger })
  t.teardown(async () => { await runner.stop(); await eventStore.close() })
  await runner.start()
  const clock = new ManualClock('2026-01-10T00:30:00.000Z')
  const commands = new CommandHandler({ eventStore, clock, maxRetries: 1 })
  const signInAndOut = async (familyId: string) => {
    await commands.execute(refreshTokenFamilyAggregate, familyId, {
      type: 'IssueRefreshToken', familyId, clientId: 'c1', userId: 'u1', passwordVersion: 0, scope: '', tokenHash: `h-${familyId}`,
      expiresAt: '2026-03-01T00:00:00.000Z', now: clock.now().toISOString(),
    }, context)
    await commands.execute(refreshTokenFamilyAggregate, familyId, { type: 'RevokeRefreshTokenFamily', now: clock.now().toISOString() }, context)
    t.ok(await runner.waitFor(await eventStore.headPosition(), 2000), `the sign-out of ${familyId} is read`)
    return (await revokedSignIns(readStore)).map(({ _id }) => _id)
  }
  const MINUTE = 60_000
  await signInAndOut('a')
  clock.advance(DAY - 20 * MINUTE)
  t.same(await signInAndOut('b'), ['a', 'b'], '00:10 the next day: pruned up to 00:10, a (00:30) is kept')
  clock.advance(30 * MINUTE)
  t.same(await signInAndOut('c'), ['a', 'b', 'c'], '00:40: a is more than a day old, but this hour was pruned already')
  clock.advance(30 * MINUTE)
  t.same(await signInAndOut('d'), ['b', 'c', 'd'], '01:10, a new hour: a is forgotten')
  const kept = await revokedSignIns(readStore)
  await runner.rebuild()
  t.same(await revokedSignIns(readStore), kept, 'rebuilt from zero: the same entries')
})

t.test('a client\'s secret version counts rotations, those recorded before versions included', async (t) => {
  const eventStore = new SqliteEventStore({ file: ':memory:' })
  const readStore = new MemoryReadStore()
  const runner = new ProjectionRunner(eventStore, readStore, [principalsProjection], { logger })
  t.teardown(async () => { await runner.stop(); await eventStore.close() })
  await runner.start()
  const commands = new CommandHandler({ eventStore, clock: new ManualClock('2026-01-10T00:00:00.000Z'), maxRetries: 1 })
  const versionNow = async () => {
    t.ok(await runner.waitFor(await eventStore.headPosition(), 2000), 'the read model caught up')
    const client = await principalQueries(readStore).client('c1')
    return client === null ? null : secretVersionOf(client)
  }
  const legacy: OAuthClientEvent[] = [
    { type: 'OAuthClientRegistered', data: { clientId: 'c1', name: 'batch', secretHash: 'h0', scopes: [], organizationId: 'o1', createdAt: '2026-01-01T00:00:00.000Z' } },
    { type: 'OAuthClientSecretRotated', data: { clientId: 'c1', secretHash: 'h1' } },
    { type: 'OAuthClientSecretRotated', data: { clientId: 'c1', secretHash: 'h2' } },
  ]
  const stream = streamName('oauthClient', clientStreamId('c1'))
  await commands.appendRaw(stream, legacy.slice(0, 1), 'no_stream', context)
  t.equal(await versionNow(), 0, 'a new client')
  await commands.appendRaw(stream, legacy.slice(1), 0, context)
  t.equal(await versionNow(), 2, 'two rotations recorded without a version')
  await commands.execute(oauthClientAggregate, clientStreamId('c1'), { type: 'RotateClientSecret', secretHash: 'h3' }, context)
  t.equal(await versionNow(), 3, 'the next rotation carries version 3, as the decider counts')
  await runner.rebuild()
  t.equal(await versionNow(), 3, 'rebuilt: the same version')
})

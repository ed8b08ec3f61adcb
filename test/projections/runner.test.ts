import path from 'node:path'
import t, { type Test } from 'tap'
import { pino } from 'pino'
import { CommandHandler } from '../../src/commands/handler.js'
import { createOrganization } from '../../src/commands/identity.js'
import { organizationAggregate } from '../../src/commands/organization.js'
import { SqliteEventStore } from '../../src/events/sqlite.js'
import { allProjections } from '../../src/projections/index.js'
import { MemoryReadStore } from '../../src/projections/memoryStore.js'
import { applyAt, defineProjection, type Projection } from '../../src/projections/projection.js'
import type { ReadStore } from '../../src/projections/readStore.js'
import { ProjectionRunner, VERSIONS_LEASE, type RunnerLogger } from '../../src/projections/runner.js'
import { SqliteReadStore } from '../../src/projections/sqliteStore.js'
import { ManualClock } from '../../src/shared/clock.js'
import { newId } from '../../src/shared/ids.js'
import { tempDir } from '../helpers/config.js'

const logger = pino({ level: 'silent' })
const organizationsHandle: ReadonlySet<string> = new Set(allProjections.find((p) => p.name === 'organizations')?.handles ?? [])
const context = { organizationId: null, actorId: 'a', correlationId: 'c' }

const snapshot = async (store: ReadStore) => {
  const out: Record<string, unknown[]> = {}
  for (const projection of allProjections) {
    for (const spec of projection.collections) {
      out[spec.name] = await store.collection(spec).find({}, { sort: { _id: 1 } })
    }
  }
  return out
}

const seed = async (commands: CommandHandler, clock: ManualClock) => {
  for (let i = 0; i < 3; i++) {
    const id = newId()
    await createOrganization(commands, { organizationId: id, name: `Org ${i}`, defaultConfigId: newId(), now: clock.now().toISOString() }, context)
    clock.advance(1000)
    await commands.execute(organizationAggregate, id, { type: 'RenameOrganization', name: `Renamed ${i}` }, context)
    if (i === 1) await commands.execute(organizationAggregate, id, { type: 'DeactivateOrganization', reason: 'test' }, context)
  }
}

/** A runner following a seeded log live, with the documents it built. */
const seededRunner = async (t: Test) => {
  const eventStore = new SqliteEventStore({ file: ':memory:' })
  const readStore = new MemoryReadStore()
  const runner = new ProjectionRunner(eventStore, readStore, allProjections, { logger })
  t.teardown(async () => { await runner.stop(); await eventStore.close() })
  await runner.start()
  const clock = new ManualClock()
  const commands = new CommandHandler({ eventStore, clock, maxRetries: 1 })
  const seeded = async () => {
    await seed(commands, clock)
    return runner.waitFor(await eventStore.headPosition(), 2000)
  }
  t.ok(await seeded(), 'live processing reached the head')
  return { eventStore, readStore, runner, seeded, live: await snapshot(readStore) }
}

t.test('a rebuild from zero gives the same documents as live processing, and so does a second one', async (t) => {
  const { readStore, runner, live } = await seededRunner(t)
  t.equal((live['organizations'] ?? []).length, 3)
  await runner.rebuild()
  t.same(await snapshot(readStore), live, 'first rebuild')
  await runner.rebuild(['organizations'])
  t.same(await snapshot(readStore), live, 'second rebuild of one projection')
})

t.test('a timed rebuild gives the same documents and counts each projection\'s events by type', async (t) => {
  const { eventStore, readStore, runner, seeded, live } = await seededRunner(t)
  const timings = await runner.timedRebuild(['organizations'])
  t.same(await snapshot(readStore), live, 'the documents of a plain rebuild')
  const counted = new Map<string, number>()
  for await (const event of eventStore.readAll()) {
    if (organizationsHandle.has(event.type)) counted.set(event.type, (counted.get(event.type) ?? 0) + 1)
  }
  const rebuilt = timings.filter((row) => row.projection === 'organizations')
  t.same(new Map(rebuilt.map((row) => [row.eventType, row.events])), counted, 'one row per event type the projection handled, with its count')
  t.ok(timings.every((row) => row.milliseconds >= 0))
  t.same(timings.map((row) => row.milliseconds), [...timings.map((row) => row.milliseconds)].sort((a, b) => b - a), 'slowest first')
  t.ok(await seeded(), 'live processing goes on after it, untimed')
})

t.test('an event applied twice to a document changes it once', async (t) => {
  const store = new MemoryReadStore()
  const counters = store.collection<{ _id: string; _position?: number; count: number }>('counters')
  const bump = (position: number) => applyAt(counters, 'c', position, (doc) => ({ _id: 'c', count: (doc?.count ?? 0) + 1 }))
  await bump(5)
  await bump(5)
  await bump(3)
  t.equal((await counters.get('c'))?.count, 1)
  await bump(6)
  t.equal((await counters.get('c'))?.count, 2)
})

t.test('a failing projection is marked failed and the others go on', async (t) => {
  const eventStore = new SqliteEventStore({ file: ':memory:' })
  const readStore = new MemoryReadStore()
  const broken = defineProjection({
    name: 'broken', handles: ['OrganizationCreated'], collections: [],
    project: async () => { throw new Error('boom') },
  })
  const runner = new ProjectionRunner(eventStore, readStore, [broken, ...allProjections], { logger })
  t.teardown(async () => { await runner.stop(); await eventStore.close() })
  await runner.start()
  const commands = new CommandHandler({ eventStore, clock: new ManualClock(), maxRetries: 1 })
  const id = newId()
  await createOrganization(commands, { organizationId: id, name: 'Still served', defaultConfigId: newId(), now: '2026-01-01T00:00:00.000Z' }, context)
  t.ok(await runner.waitFor(await eventStore.headPosition(), 2000))
  const status = await runner.status()
  t.match(status.projections.find((p) => p.name === 'broken')?.failed, /boom/)
  t.equal((await readStore.collection<{ _id: string; name: string }>('organizations').get(id))?.name, 'Still served')
})

t.test('waitFor gives up after its timeout when nothing arrives', async (t) => {
  const eventStore = new SqliteEventStore({ file: ':memory:' })
  const runner = new ProjectionRunner(eventStore, new MemoryReadStore(), allProjections, { logger })
  t.teardown(async () => { await runner.stop(); await eventStore.close() })
  await runner.start()
  t.equal(await runner.waitFor(999, 30), false)
})

interface NameDoc { _id: string; _position?: number; name: string }

/** A read model of organization names; `skip` leaves some out, so a rebuild that did not drop would show the old ones. */
const namesProjection = (version: number, skip: (name: string) => boolean = () => false) => defineProjection({
  name: 'names', version, handles: ['OrganizationCreated'], collections: [{ name: 'version_test_names' }],
  project: (store, event, position) => applyAt(store.collection<NameDoc>('version_test_names'), event.data.organizationId, position,
    (current) => (skip(event.data.name) ? current : { _id: event.data.organizationId, _position: position, name: event.data.name })),
})

/** Counts what it is given, to tell a projection that resumed from one that started over. */
const countingProjection = () => {
  const seen: number[] = []
  const projection = defineProjection({
    name: 'counting', handles: ['OrganizationCreated'], collections: [{ name: 'version_test_counts' }],
    project: async (_store, _event, position) => { seen.push(position) },
  })
  return { projection, seen }
}

const capturingLogger = () => {
  const rebuilt: unknown[] = []
  return {
    rebuilt,
    logger: {
      info: (object: object, message: string) => { if (message.includes('rebuilding')) rebuilt.push(Reflect.get(object, 'projection')) },
      error: () => undefined,
    },
  }
}

const createOrganizations = async (eventStore: SqliteEventStore, names: readonly string[]) => {
  const commands = new CommandHandler({ eventStore, clock: new ManualClock(), maxRetries: 1 })
  for (const name of names) {
    await createOrganization(commands, { organizationId: newId(), name, defaultConfigId: newId(), now: '2026-01-01T00:00:00.000Z' }, context)
  }
}

const runOnce = async (eventStore: SqliteEventStore, file: string, projections: readonly Projection[],
  logger: RunnerLogger, during: (store: SqliteReadStore, runner: ProjectionRunner) => Promise<void> = async () => undefined) => {
  const store = new SqliteReadStore({ file })
  const runner = new ProjectionRunner(eventStore, store, projections, { logger })
  try {
    await runner.start()
    await during(store, runner)
  } finally {
    await runner.stop()
    await store.close()
  }
}

const storedNames = async (store: ReadStore) =>
  (await store.collection<NameDoc>('version_test_names').find({}, { sort: { name: 1 } })).map((doc) => doc.name)

t.test('a persistent read store made by another version of a projection is rebuilt at the next start; the others resume', async (t) => {
  const eventStore = new SqliteEventStore({ file: ':memory:' })
  t.teardown(() => eventStore.close())
  const file = path.join(tempDir(), 'read-store.sqlite')
  await createOrganizations(eventStore, ['Acme', 'Bolt', 'Crux'])
  const first = countingProjection()
  const firstLog = capturingLogger()
  await runOnce(eventStore, file, [namesProjection(1), first.projection], firstLog.logger, async (store) => {
    t.same(await storedNames(store), ['Acme', 'Bolt', 'Crux'])
    t.equal(await store.getProjectionVersion('names'), 1, 'a new store records each version')
  })
  t.same(firstLog.rebuilt, [], 'nothing to rebuild in a new store')
  t.equal(first.seen.length, 3)

  // Version 2 leaves Bolt out: a rebuild that kept version 1's documents would still show it.
  await createOrganizations(eventStore, ['Dune'])
  const second = countingProjection()
  const secondLog = capturingLogger()
  await runOnce(eventStore, file, [namesProjection(2, (name) => name === 'Bolt'), second.projection], secondLog.logger, async (store, runner) => {
    t.same(await storedNames(store), ['Acme', 'Crux', 'Dune'], 'projected again from the start, without version 1\'s documents')
    t.equal(await store.getProjectionVersion('names'), 2)
    t.same((await runner.status()).projections.map((p) => [p.name, p.version]), [['names', 2], ['counting', 1]])
  })
  t.same(secondLog.rebuilt, ['names'], 'only the changed projection is rebuilt')
  t.equal(second.seen.length, 1, 'the unchanged projection resumed from its checkpoint: only the new event')

  const third = capturingLogger()
  await runOnce(eventStore, file, [namesProjection(2, (name) => name === 'Bolt'), countingProjection().projection], third.logger, async (store) => {
    t.same(await storedNames(store), ['Acme', 'Crux', 'Dune'])
  })
  t.same(third.rebuilt, [], 'the same version again: nothing rebuilt')
})

t.test('a persistent read store filled before versions were recorded is rebuilt, since its documents\' code is unknown', async (t) => {
  const eventStore = new SqliteEventStore({ file: ':memory:' })
  t.teardown(() => eventStore.close())
  const file = path.join(tempDir(), 'read-store.sqlite')
  await createOrganizations(eventStore, ['Acme', 'Bolt'])
  const before = new SqliteReadStore({ file })
  await before.collection<NameDoc>('version_test_names').put({ _id: newId(), _position: 1, name: 'Left by older code' })
  await before.setCheckpoint('names', await eventStore.headPosition())
  await before.close()

  const log = capturingLogger()
  await runOnce(eventStore, file, [namesProjection(1)], log.logger, async (store) => {
    t.same(await storedNames(store), ['Acme', 'Bolt'])
    t.equal(await store.getProjectionVersion('names'), 1)
  })
  t.same(log.rebuilt, ['names'])
})

t.test('the embedded memory store, rebuilt at every start, never drops for a version', async (t) => {
  const eventStore = new SqliteEventStore({ file: ':memory:' })
  t.teardown(() => eventStore.close())
  await createOrganizations(eventStore, ['Acme'])
  const readStore = new MemoryReadStore()
  await readStore.setCheckpoint('names', await eventStore.headPosition())
  await readStore.setProjectionVersion('names', 1)
  await readStore.collection<NameDoc>('version_test_names').put({ _id: 'kept', _position: 1, name: 'From a snapshot' })
  const log = capturingLogger()
  const runner = new ProjectionRunner(eventStore, readStore, [namesProjection(2)], { logger: log.logger })
  await runner.start()
  await runner.stop()
  t.same(await storedNames(readStore), ['From a snapshot'], 'a snapshot is only loaded when made by the same code (its fingerprint)')
  t.same(log.rebuilt, [])
})

t.test('no two projections share a collection, so dropping one projection\'s documents leaves the others\' whole', async (t) => {
  const owners = new Map<string, string[]>()
  for (const projection of allProjections) {
    for (const spec of projection.collections) owners.set(spec.name, [...(owners.get(spec.name) ?? []), projection.name])
  }
  t.same([...owners].filter(([, names]) => names.length > 1), [])
})

/** A persistent store (as one MongoDB) holding version 1 of `names` over Acme and Bolt; two instances of version 2 are to start on it. */
const storeOfVersionOne = async (t: Test) => {
  const eventStore = new SqliteEventStore({ file: ':memory:' })
  const store = new SqliteReadStore({ file: path.join(tempDir(), 'read-store.sqlite') })
  t.teardown(async () => { await store.close(); await eventStore.close() })
  await createOrganizations(eventStore, ['Acme', 'Bolt'])
  await runOnceOn(eventStore, store, [namesProjection(1)], logger)
  return { eventStore, store }
}

const runOnceOn = async (eventStore: SqliteEventStore, store: ReadStore, projections: readonly Projection[], log: RunnerLogger, clock?: ManualClock) => {
  const runner = new ProjectionRunner(eventStore, store, projections, { logger: log, ...(clock === undefined ? {} : { clock }) })
  await runner.start()
  await runner.stop()
}

t.test('instances of a new projection version starting together on one store replace the old documents once, one at a time', async (t) => {
  const { eventStore, store } = await storeOfVersionOne(t)
  const logs = [capturingLogger(), capturingLogger()]
  const drops: string[][] = []
  const drop = store.drop.bind(store)
  store.drop = async (collections) => { drops.push([...collections]); await drop(collections) }
  await Promise.all(logs.map((log) => runOnceOn(eventStore, store, [namesProjection(2, (name) => name === 'Bolt')], log.logger)))
  t.same(logs.flatMap((log) => log.rebuilt), ['names'], 'one instance rebuilt; the other found the version recorded when it got the lease')
  t.same(drops, [['version_test_names']])
  t.same(await storedNames(store), ['Acme'])
  t.equal(await store.getProjectionVersion('names'), 2)
  t.equal(await store.acquireLease(VERSIONS_LEASE, 'next', new Date(), 1000), true, 'the lease was released')
})

t.test('an instance waits for the lease of one that died while replacing versions, and takes it when it runs out', async (t) => {
  const { eventStore, store } = await storeOfVersionOne(t)
  const clock = new ManualClock('2026-11-23T12:00:00.000Z')
  t.equal(await store.acquireLease(VERSIONS_LEASE, 'died', clock.now(), 60_000), true)
  const messages: string[] = []
  const log = { info: (_object: object, message: string) => { messages.push(message) }, error: () => undefined }
  let started = false
  const starting = runOnceOn(eventStore, store, [namesProjection(2, (name) => name === 'Bolt')], log, clock).then(() => { started = true })
  await new Promise((resolve) => setTimeout(resolve, 300))
  t.equal(started, false, 'still waiting while the lease runs')
  t.same(await storedNames(store), ['Acme', 'Bolt'], 'nothing dropped meanwhile')
  t.match(messages, [/another instance holds the lease/])
  clock.advance(60_000)
  await starting
  t.same(await storedNames(store), ['Acme'], 'replaced once the lease ran out')
  t.equal(await store.getProjectionVersion('names'), 2)
})

t.test('a start with every version recorded takes no lease', async (t) => {
  const { eventStore, store } = await storeOfVersionOne(t)
  t.equal(await store.acquireLease(VERSIONS_LEASE, 'someone else', new Date(), 60_000), true)
  await runOnceOn(eventStore, store, [namesProjection(1)], logger)
  t.same(await storedNames(store), ['Acme', 'Bolt'], 'started at once, though another holds the lease')
})

t.test('a start that loses its lease while replacing versions stops before its next step, so the next start replaces them again', async (t) => {
  const { eventStore, store } = await storeOfVersionOne(t)
  const drop = store.drop.bind(store)
  store.drop = async (collections) => {
    await new Promise((resolve) => setTimeout(resolve, 100))
    await drop(collections)
  }
  const acquire = store.acquireLease.bind(store)
  let acquisitions = 0
  // The first call takes the lease; every renewal finds it gone, as when another instance took it after a stall.
  store.acquireLease = async (name, holder, now, ttlMs) => (++acquisitions === 1 ? acquire(name, holder, now, ttlMs) : false)
  const runner = new ProjectionRunner(eventStore, store, [namesProjection(2, (name) => name === 'Bolt')], { logger, leaseTtlMs: 30 })
  await t.rejects(runner.start(), /lease projection-versions was lost/)
  await runner.stop()
  t.ok(acquisitions > 1, 'it was renewed while the drop ran')
  t.equal(await store.getProjectionVersion('names'), 1, 'the new version is not recorded')
})

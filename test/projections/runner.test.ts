import t, { type Test } from 'tap'
import { pino } from 'pino'
import { CommandHandler } from '../../src/commands/handler.js'
import { createOrganization } from '../../src/commands/identity.js'
import { organizationAggregate } from '../../src/commands/organization.js'
import { SqliteEventStore } from '../../src/events/sqlite.js'
import { allProjections } from '../../src/projections/index.js'
import { MemoryReadStore } from '../../src/projections/memoryStore.js'
import { applyAt, defineProjection } from '../../src/projections/projection.js'
import type { ReadStore } from '../../src/projections/readStore.js'
import { ProjectionRunner } from '../../src/projections/runner.js'
import { ManualClock } from '../../src/shared/clock.js'
import { newId } from '../../src/shared/ids.js'

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

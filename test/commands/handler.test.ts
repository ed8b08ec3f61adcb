import path from 'node:path'
import t from 'tap'
import { CommandHandler } from '../../src/commands/handler.js'
import { organizationAggregate } from '../../src/commands/organization.js'
import { SqliteEventStore } from '../../src/events/sqlite.js'
import { WrongExpectedRevisionError, type EventStore } from '../../src/events/store.js'
import { ManualClock } from '../../src/shared/clock.js'
import { AppError } from '../../src/shared/errors.js'
import { newId } from '../../src/shared/ids.js'
import { tempDir } from '../helpers/config.js'

const context = { organizationId: 'o1', actorId: 'actor', correlationId: 'corr' }
const create = (organizationId: string) =>
  ({ type: 'CreateOrganization' as const, organizationId, name: 'Acme', defaultConfigId: 'c', now: '2026-01-01T00:00:00.000Z' })

/** Wraps a store so that the first `failures` appends lose a race to a concurrent writer. */
const racing = (store: EventStore, failures: number): EventStore => {
  let left = failures
  return new Proxy(store, {
    get(target, property, receiver) {
      if (property !== 'append') return Reflect.get(target, property, receiver)
      return async (...args: Parameters<EventStore['append']>) => {
        if (left > 0) {
          left -= 1
          const rival = args[1][0]
          if (rival === undefined) throw new Error('nothing to race with')
          await target.append(args[0], [{ ...rival, id: newId(), type: 'OrganizationRenamed', data: { organizationId: 'o', name: `rival-${left}` } }], 'any')
          throw new WrongExpectedRevisionError(args[0], args[2], 0)
        }
        return target.append(...args)
      }
    },
  })
}

t.test('appends decided events with metadata from the context and the clock', async (t) => {
  const store = new SqliteEventStore({ file: ':memory:' })
  t.teardown(() => store.close())
  const clock = new ManualClock('2026-02-02T02:02:02.000Z')
  const handler = new CommandHandler({ eventStore: store, clock, maxRetries: 3 })
  const id = newId()
  const result = await handler.execute(organizationAggregate, id, create(id), context)
  t.equal(result.events.length, 1)
  t.equal(result.revision, 0)
  t.ok(result.position > 0)
  const loaded = await handler.load(organizationAggregate, id, { withEvents: true })
  t.equal(loaded.state.status, 'active')
  t.same(loaded.events[0]?.metadata, { ...context, causationId: null, occurredAt: '2026-02-02T02:02:02.000Z', schemaVersion: 1 })
})

t.test('a command that changes nothing appends nothing, and answers the position of the stream\'s last event', async (t) => {
  const store = new SqliteEventStore({ file: ':memory:' })
  t.teardown(() => store.close())
  const handler = new CommandHandler({ eventStore: store, clock: new ManualClock(), maxRetries: 3 })
  const id = newId()
  const created = await handler.execute(organizationAggregate, id, create(id), context)
  await handler.execute(organizationAggregate, newId(), create(newId()), context)
  const head = await store.headPosition()
  const result = await handler.execute(organizationAggregate, id, { type: 'ActivateOrganization' }, context)
  t.same(result.events, [])
  t.equal(result.position, created.position, 'a caller waiting for it reads the write that made the command a repeat')
  t.equal(await store.headPosition(), head)
  const fresh = new CommandHandler({ eventStore: store, clock: new ManualClock(), maxRetries: 3, cacheSize: 0 })
  t.equal((await fresh.execute(organizationAggregate, id, { type: 'ActivateOrganization' }, context)).position, created.position, 'from the store too')
})

t.test('on a revision conflict it re-reads and decides again', async (t) => {
  const store = new SqliteEventStore({ file: ':memory:' })
  t.teardown(() => store.close())
  const id = newId()
  const base = new CommandHandler({ eventStore: store, clock: new ManualClock(), maxRetries: 3 })
  await base.execute(organizationAggregate, id, create(id), context)
  const handler = new CommandHandler({ eventStore: racing(store, 2), clock: new ManualClock(), maxRetries: 3 })
  const result = await handler.execute(organizationAggregate, id, { type: 'RenameOrganization', name: 'After race' }, context)
  t.equal(result.events.length, 1)
  t.equal((await handler.load(organizationAggregate, id)).state.name, 'After race')
})

t.test('after its bounded retries it answers 409 CONCURRENCY_CONFLICT', async (t) => {
  const store = new SqliteEventStore({ file: ':memory:' })
  t.teardown(() => store.close())
  const id = newId()
  const base = new CommandHandler({ eventStore: store, clock: new ManualClock(), maxRetries: 2 })
  await base.execute(organizationAggregate, id, create(id), context)
  const handler = new CommandHandler({ eventStore: racing(store, 10), clock: new ManualClock(), maxRetries: 2 })
  const error = await handler.execute(organizationAggregate, id, { type: 'RenameOrganization', name: 'x' }, context).catch((e: unknown) => e)
  t.ok(error instanceof AppError)
  t.equal(error instanceof AppError ? error.status : 0, 409)
  t.equal(error instanceof AppError ? error.code : '', 'CONCURRENCY_CONFLICT')
})

t.test('commands on one stream take turns in the instance: twenty at once all append, with no retry allowed', async (t) => {
  const store = new SqliteEventStore({ file: ':memory:' })
  t.teardown(() => store.close())
  const handler = new CommandHandler({ eventStore: store, clock: new ManualClock(), maxRetries: 0 })
  const id = newId()
  await handler.execute(organizationAggregate, id, create(id), context)
  const names = Array.from({ length: 20 }, (_, i) => `Name ${i}`)
  const results = await Promise.all(names.map((name) => handler.execute(organizationAggregate, id, { type: 'RenameOrganization', name }, context)))
  t.same(results.map((r) => r.revision), names.map((_, i) => i + 1), 'each decided on the state the one before it left, in arrival order')
  const renames = []
  for await (const event of store.readStream(`organization-${id}`)) if (event.type === 'OrganizationRenamed') renames.push(event.data.name)
  t.same(renames, names)
})

t.test('a refused command gives its stream to the next one, and other streams never wait for it', async (t) => {
  const store = new SqliteEventStore({ file: ':memory:' })
  t.teardown(() => store.close())
  const handler = new CommandHandler({ eventStore: store, clock: new ManualClock(), maxRetries: 0 })
  const [id, other] = [newId(), newId()]
  await handler.execute(organizationAggregate, id, create(id), context)
  const refused = handler.execute(organizationAggregate, id, create(id), context)
  const renamed = handler.execute(organizationAggregate, id, { type: 'RenameOrganization', name: 'Next' }, context)
  await t.rejects(refused, AppError, 'creating it twice is refused')
  t.equal((await renamed).revision, 1)
  const blocked = new Promise<never>(() => undefined)
  const holding = new Proxy(store, {
    get(target, property, receiver) {
      if (property !== 'append') return Reflect.get(target, property, receiver)
      return (...args: Parameters<EventStore['append']>) => args[0] === `organization-${id}` ? blocked : target.append(...args)
    },
  })
  const stuck = new CommandHandler({ eventStore: holding, clock: new ManualClock(), maxRetries: 0 })
  void stuck.execute(organizationAggregate, id, { type: 'RenameOrganization', name: 'Never' }, context)
  t.equal((await stuck.execute(organizationAggregate, other, create(other), context)).revision, 0, 'a stream whose append hangs holds up only itself')
})

t.test('loads an aggregate as it stood at a past moment', async (t) => {
  const store = new SqliteEventStore({ file: ':memory:' })
  t.teardown(() => store.close())
  const clock = new ManualClock('2026-01-01T00:00:00.000Z')
  const handler = new CommandHandler({ eventStore: store, clock, maxRetries: 0 })
  const id = newId()
  await handler.execute(organizationAggregate, id, create(id), context)
  clock.set('2026-06-01T00:00:00.000Z')
  await handler.execute(organizationAggregate, id, { type: 'RenameOrganization', name: 'Later' }, context)
  t.equal((await handler.load(organizationAggregate, id, { asOf: new Date('2026-03-01T00:00:00.000Z') })).state.name, 'Acme')
  t.equal((await handler.load(organizationAggregate, id)).state.name, 'Later')
})

t.test('a cached state still sees events another writer appended, and cannot be edited in place', async (t) => {
  const store = new SqliteEventStore({ file: ':memory:' })
  t.teardown(() => store.close())
  const mine = new CommandHandler({ eventStore: store, clock: new ManualClock(), maxRetries: 1 })
  const theirs = new CommandHandler({ eventStore: store, clock: new ManualClock(), maxRetries: 1, cacheSize: 0 })
  const id = newId()
  await mine.execute(organizationAggregate, id, create(id), context)
  const first = await mine.load(organizationAggregate, id)
  t.equal(first.state.name, 'Acme')
  await theirs.execute(organizationAggregate, id, { type: 'RenameOrganization', name: 'Renamed elsewhere' }, context)
  const second = await mine.load(organizationAggregate, id)
  t.equal(second.state.name, 'Renamed elsewhere', 'the newer event is read and folded')
  t.equal(second.revision, 1)
  t.equal(second.position, await store.headPosition())
  t.throws(() => Object.assign(second.state, { name: 'edited' }), TypeError, 'a cached state is frozen')
  const renamed = await mine.execute(organizationAggregate, id, { type: 'RenameOrganization', name: 'Third' }, context)
  t.equal(renamed.revision, 2, 'and a command decides on the fresh state')
})

t.test('a cached state sees events another process appended to the same file, though its own appends need no re-read', async (t) => {
  const file = path.join(tempDir(), 'events.sqlite')
  const store = new SqliteEventStore({ file })
  const otherProcess = new SqliteEventStore({ file })
  t.teardown(async () => { await store.close(); await otherProcess.close() })
  const reads: string[] = []
  const counting = new Proxy(store, {
    get(target, property, receiver) {
      if (property !== 'readStream') return Reflect.get(target, property, receiver)
      return (...args: Parameters<EventStore['readStream']>) => { reads.push(args[0]); return target.readStream(...args) }
    },
  })
  const mine = new CommandHandler({ eventStore: counting, clock: new ManualClock(), maxRetries: 1 })
  const id = newId()
  await mine.execute(organizationAggregate, id, create(id), context)
  reads.length = 0
  await mine.execute(organizationAggregate, id, { type: 'RenameOrganization', name: 'Mine' }, context)
  t.same(reads, [], 'nothing written elsewhere: the cached state is used without a read')
  const theirs = new CommandHandler({ eventStore: otherProcess, clock: new ManualClock(), maxRetries: 1 })
  await theirs.execute(organizationAggregate, id, { type: 'RenameOrganization', name: 'Theirs' }, context)
  const loaded = await mine.load(organizationAggregate, id)
  t.equal(loaded.state.name, 'Theirs', 'the other process\'s event is read and folded')
  t.equal(loaded.revision, 2)
  t.same(reads, [`organization-${id}`])
  const renamed = await mine.execute(organizationAggregate, id, { type: 'RenameOrganization', name: 'Mine again' }, context)
  t.equal(renamed.revision, 3, 'and the next command decides on the fresh state')
})

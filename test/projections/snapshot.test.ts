import fs from 'node:fs'
import path from 'node:path'
import { pino } from 'pino'
import t from 'tap'
import { organizationAggregate } from '../../src/commands/organization.js'
import { loadDemo } from '../../src/demo/index.js'
import { SqliteEventStore } from '../../src/events/sqlite.js'
import { bootstrap } from '../../src/identity/bootstrap.js'
import { MemoryReadStore } from '../../src/projections/memoryStore.js'
import type { ReadDocument } from '../../src/projections/readStore.js'
import { loadSnapshot, saveSnapshot } from '../../src/projections/snapshot.js'
import { createRuntime, type Runtime } from '../../src/runtime.js'
import type { Config } from '../../src/shared/config.js'
import { newId } from '../../src/shared/ids.js'
import { tempDir, testConfig } from '../helpers/config.js'

const open = async (config: Config): Promise<Runtime> => {
  const runtime = await createRuntime(config, { logger: pino({ level: 'silent' }) })
  await runtime.start()
  return runtime
}

/**
 * Every document of an embedded read store, collection by collection, in id
 * order, as JSON sees it (a snapshot, like MongoDB, keeps no `undefined`
 * properties; queries and answers treat them as missing either way).
 */
const documents = (store: unknown): Record<string, ReadDocument[]> => {
  if (!(store instanceof MemoryReadStore)) throw new Error('embedded read store expected')
  const out: Record<string, ReadDocument[]> = {}
  for (const { spec, docs } of store.contents()) {
    const sorted = [...docs].sort((a, b) => (a._id < b._id ? -1 : a._id > b._id ? 1 : 0))
    if (sorted.length > 0) out[spec.name] = sorted
  }
  return JSON.parse(JSON.stringify(out))
}

const context = (organizationId: string) => ({ organizationId, actorId: 'test', correlationId: newId(), causationId: null })

t.test('a start after a clean stop loads the snapshot, catches up with later events, and holds what a rebuild from zero holds', async (t) => {
  const config = testConfig()
  const first = await open(config)
  const { organizationId } = await bootstrap(first)
  await loadDemo(first)
  const snapshotAt = await first.eventStore.headPosition()
  await first.close()
  t.ok(fs.existsSync(path.join(config.dataDir, 'read-store.snapshot')), 'the stop wrote the snapshot')

  // Events the snapshot does not hold: a run that writes no snapshot, changing a document and adding one.
  const between = await open({ ...config, readStoreSnapshot: false })
  await between.commands.execute(organizationAggregate, organizationId, { type: 'RenameOrganization', name: 'Renamed while the snapshot was older' }, context(organizationId))
  const added = newId()
  await between.commands.execute(organizationAggregate, added, { type: 'CreateOrganization', organizationId: added, name: 'Added later', defaultConfigId: newId(), now: new Date().toISOString() }, context(added))
  const head = await between.eventStore.headPosition()
  await between.close()
  t.ok(head > snapshotAt)

  const restarted = await open(config)
  t.equal(restarted.projections.position, head, 'caught up with the log')
  t.equal((await restarted.queries.organizations.get(organizationId))?.name, 'Renamed while the snapshot was older')
  t.ok(await restarted.queries.organizations.get(added), 'a document created after the snapshot')
  const fromSnapshot = documents(restarted.readStore)
  await restarted.close()

  const rebuilt = await open({ ...config, readStoreSnapshot: false })
  t.same(fromSnapshot, documents(rebuilt.readStore), 'the same documents as projecting the whole log')
  t.ok(Object.keys(fromSnapshot).length > 10, 'the demo fills many read models')
  await rebuilt.close()
})

t.test('a snapshot of other code, of another log, or cut short is not used and leaves the store empty', async (t) => {
  const dir = tempDir()
  const eventStore = new SqliteEventStore({ file: path.join(dir, 'events.sqlite') })
  t.teardown(() => eventStore.close())
  const organizationId = newId()
  await eventStore.append(`organization-${organizationId}`, [{
    id: newId(), type: 'OrganizationCreated', data: { organizationId, name: 'Org', defaultConfigId: newId(), createdAt: '2026-01-01T00:00:00.000Z' },
    metadata: { organizationId, actorId: null, correlationId: newId(), causationId: null, occurredAt: '2026-01-01T00:00:00.000Z', schemaVersion: 1 },
  }], 'no_stream')
  const source = new MemoryReadStore()
  const things = source.collection<{ _id: string; kind: string }>({ name: 'things', indexes: [{ kind: 1 }] })
  await things.put({ _id: 'a', kind: 'x' })
  await things.put({ _id: 'b', kind: 'y' })
  const file = path.join(dir, 'read-store.snapshot')
  fs.writeFileSync(`${file}.4242.tmp`, 'what a stop killed midway left')
  const written = await saveSnapshot(source, file, { fingerprint: 'code-1', position: 1, checkpoints: { things: 1 }, eventStore, now: new Date() })
  t.equal(written.documents, 2)
  t.notOk(fs.existsSync(`${file}.4242.tmp`), 'a killed write\'s temporary file is removed')

  const loaded = new MemoryReadStore()
  t.match(await loadSnapshot(loaded, file, { fingerprint: 'code-1', eventStore }), { loaded: true, position: 1, documents: 2 })
  t.same(documents(loaded), documents(source))
  t.equal(await loaded.getCheckpoint('things'), 1)
  t.equal(await loaded.collection('things').count({ kind: 'y' }), 1, 'indexes rebuilt from the loaded documents')

  const otherCode = new MemoryReadStore()
  t.same(await loadSnapshot(otherCode, file, { fingerprint: 'code-2', eventStore }), { loaded: false, reason: 'made by other code' })
  t.same(documents(otherCode), {})

  const otherLog = new SqliteEventStore({ file: path.join(dir, 'other.sqlite') })
  t.teardown(() => otherLog.close())
  await otherLog.append(`organization-${organizationId}`, [{
    id: newId(), type: 'OrganizationCreated', data: { organizationId, name: 'Org', defaultConfigId: newId(), createdAt: '2026-01-01T00:00:00.000Z' },
    metadata: { organizationId, actorId: null, correlationId: newId(), causationId: null, occurredAt: '2026-01-01T00:00:00.000Z', schemaVersion: 1 },
  }], 'no_stream')
  t.same(await loadSnapshot(new MemoryReadStore(), file, { fingerprint: 'code-1', eventStore: otherLog }), { loaded: false, reason: 'made over another log' })

  const content = fs.readFileSync(file, 'utf8').split('\n')
  fs.writeFileSync(file, content.slice(0, 3).join('\n'))
  const cut = new MemoryReadStore()
  t.same(await loadSnapshot(cut, file, { fingerprint: 'code-1', eventStore }), { loaded: false, reason: 'incomplete' })
  t.same(documents(cut), {}, 'nothing half-loaded')
  t.equal(await cut.getCheckpoint('things'), 0)
})

t.test('after a snapshot cut short or emptied, the service reads what the rebuild from the log writes', async (t) => {
  const config = testConfig()
  const first = await open(config)
  const { organizationId } = await bootstrap(first)
  await first.close()
  const file = path.join(config.dataDir, 'read-store.snapshot')
  const whole = fs.readFileSync(file, 'utf8')
  for (const [damage, content] of [['cut short', whole.slice(0, whole.lastIndexOf('{"end"'))], ['emptied', '']] as const) {
    fs.writeFileSync(file, content)
    const restarted = await open(config)
    await restarted.commands.execute(organizationAggregate, organizationId, { type: 'RenameOrganization', name: `Renamed after a snapshot ${damage}` }, context(organizationId))
    await restarted.settle(await restarted.eventStore.headPosition())
    t.equal((await restarted.queries.organizations.get(organizationId))?.name, `Renamed after a snapshot ${damage}`, damage)
    t.ok(await restarted.queries.principals.client(config.adminClientId ?? ''), `${damage}: the administrator client is found`)
    await restarted.close()
  }
})

t.test('a dropped collection is emptied in place: what was handed out before reads what is put after', async (t) => {
  const store = new MemoryReadStore()
  const held = store.collection<{ _id: string; kind: string }>({ name: 'things', indexes: [{ kind: 1 }] })
  await held.put({ _id: 'a', kind: 'x' })
  await store.drop(['things'])
  t.equal(await held.count({}), 0)
  t.equal(await held.count({ kind: 'x' }), 0, 'its index emptied too')
  await store.collection<{ _id: string; kind: string }>('things').put({ _id: 'b', kind: 'x' })
  t.same((await held.find({ kind: 'x' })).map((d) => d._id), ['b'])
})

t.test('without a snapshot file the store starts empty and says so', async (t) => {
  const dir = tempDir()
  const eventStore = new SqliteEventStore({ file: path.join(dir, 'events.sqlite') })
  t.teardown(() => eventStore.close())
  t.same(await loadSnapshot(new MemoryReadStore(), path.join(dir, 'read-store.snapshot'), { fingerprint: 'x', eventStore }), { loaded: false, reason: 'no snapshot' })
})

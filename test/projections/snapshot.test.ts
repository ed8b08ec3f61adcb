import { createHash } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { pino } from 'pino'
import t, { type Test } from 'tap'
import { organizationAggregate } from '../../src/commands/organization.js'
import { loadDemo } from '../../src/demo/index.js'
import { SqliteEventStore } from '../../src/events/sqlite.js'
import { bootstrap } from '../../src/identity/bootstrap.js'
import { MemoryReadStore } from '../../src/projections/memoryStore.js'
import type { ReadDocument } from '../../src/projections/readStore.js'
import { loadSnapshot, readStoreSnapshots, saveSnapshot } from '../../src/projections/snapshot.js'
import { createRuntime, type Runtime } from '../../src/runtime.js'
import type { Config } from '../../src/shared/config.js'
import { newId } from '../../src/shared/ids.js'
import { tempDir, testConfig } from '../helpers/config.js'

const open = async (config: Config, logger = pino({ level: 'silent' })): Promise<Runtime> => {
  const runtime = await createRuntime(config, { logger })
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

const organizationCreated = (organizationId: string) => ({
  id: newId(), type: 'OrganizationCreated', data: { organizationId, name: 'Org', defaultConfigId: newId(), createdAt: '2026-01-01T00:00:00.000Z' },
  metadata: { organizationId, actorId: null, correlationId: newId(), causationId: null, occurredAt: '2026-01-01T00:00:00.000Z', schemaVersion: 1 },
})

/** A log of one event and a store of two documents at its position, and where their snapshot goes. */
const snapshotFixture = async (t: Test) => {
  const dir = tempDir()
  const eventStore = new SqliteEventStore({ file: path.join(dir, 'events.sqlite') })
  t.teardown(() => eventStore.close())
  await eventStore.append(`organization-${newId()}`, [organizationCreated(newId())], 'no_stream')
  const source = new MemoryReadStore()
  const things = source.collection<{ _id: string; kind: string; balanceMinor: number }>({ name: 'things', indexes: [{ kind: 1 }] })
  await things.put({ _id: 'a', kind: 'x', balanceMinor: 125_000 })
  await things.put({ _id: 'b', kind: 'y', balanceMinor: 98_765 })
  const file = path.join(dir, 'read-store.snapshot')
  const save = () => saveSnapshot(source, file, { fingerprint: 'code-1', position: 1, checkpoints: { things: 1 }, eventStore, now: new Date() })
  const load = (into: MemoryReadStore) => loadSnapshot(into, file, { fingerprint: 'code-1', eventStore })
  return { dir, eventStore, source, file, save, load }
}

/** What a snapshot refused for damage must leave: no document and no checkpoint. */
const assertEmpty = async (t: Test, store: MemoryReadStore) => {
  t.same(documents(store), {}, 'no document kept from the refused snapshot')
  t.equal(await store.getCheckpoint('things'), 0, 'no checkpoint kept from the refused snapshot')
}

const recordingLogger = () => {
  const entries: { level: 'info' | 'warn'; object: object; message: string }[] = []
  return {
    entries,
    info: (object: object, message: string) => void entries.push({ level: 'info', object, message }),
    warn: (object: object, message: string) => void entries.push({ level: 'warn', object, message }),
  }
}

t.test('a start after a clean stop loads the snapshot, catches up with later events, and holds what a rebuild from zero holds', async (t) => {
  const config = testConfig({ readStore: 'memory' })
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
  t.same(await loadSnapshot(otherCode, file, { fingerprint: 'code-2', eventStore }), { loaded: false, reason: 'made by other code', damaged: false })
  t.same(documents(otherCode), {})

  const otherLog = new SqliteEventStore({ file: path.join(dir, 'other.sqlite') })
  t.teardown(() => otherLog.close())
  await otherLog.append(`organization-${organizationId}`, [{
    id: newId(), type: 'OrganizationCreated', data: { organizationId, name: 'Org', defaultConfigId: newId(), createdAt: '2026-01-01T00:00:00.000Z' },
    metadata: { organizationId, actorId: null, correlationId: newId(), causationId: null, occurredAt: '2026-01-01T00:00:00.000Z', schemaVersion: 1 },
  }], 'no_stream')
  t.same(await loadSnapshot(new MemoryReadStore(), file, { fingerprint: 'code-1', eventStore: otherLog }), { loaded: false, reason: 'made over another log', damaged: false })

  const content = fs.readFileSync(file, 'utf8').split('\n')
  fs.writeFileSync(file, content.slice(0, 3).join('\n'))
  const cut = new MemoryReadStore()
  t.same(await loadSnapshot(cut, file, { fingerprint: 'code-1', eventStore }), { loaded: false, reason: 'incomplete', damaged: true })
  t.same(documents(cut), {}, 'nothing half-loaded')
  t.equal(await cut.getCheckpoint('things'), 0)
})

t.test('after a snapshot cut short or emptied, the service reads what the rebuild from the log writes', async (t) => {
  const config = testConfig({ readStore: 'memory' })
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
  t.same(await loadSnapshot(new MemoryReadStore(), path.join(dir, 'read-store.snapshot'), { fingerprint: 'x', eventStore }), { loaded: false, reason: 'no snapshot', damaged: false })
})

t.test('given a saved snapshot, when it is loaded, then its digest is verified and every document and checkpoint comes back', async (t) => {
  const { source, file, save, load } = await snapshotFixture(t)
  await save()

  const bytes = fs.readFileSync(file)
  const trailerStart = bytes.lastIndexOf('\n', bytes.length - 2) + 1
  const trailer: unknown = JSON.parse(bytes.subarray(trailerStart).toString('utf8'))
  t.same(trailer, { sha256: createHash('sha256').update(bytes.subarray(0, trailerStart)).digest('hex') }, 'the last line is the SHA-256 of every byte before it')
  t.match(bytes.subarray(0, bytes.indexOf('\n')).toString('utf8'), /^\{"format":2,/, 'the header says format 2')

  const loaded = new MemoryReadStore()
  t.same(await load(loaded), { loaded: true, position: 1, documents: 2 })
  t.same(documents(loaded), documents(source))
  t.equal(await loaded.getCheckpoint('things'), 1)
})

t.test('given a snapshot with one digit of a document changed in place, still valid JSON, when it is loaded, then it is refused as damaged and nothing of it is kept', async (t) => {
  const { file, save, load } = await snapshotFixture(t)
  await save()
  const original = fs.readFileSync(file, 'utf8')
  const tampered = original.replace('"balanceMinor":125000', '"balanceMinor":925000')
  t.not(tampered, original)
  t.equal(tampered.length, original.length, 'same length')
  tampered.split('\n').filter((line) => line !== '').forEach((line) => JSON.parse(line))
  fs.writeFileSync(file, tampered)

  const loaded = new MemoryReadStore()
  t.same(await load(loaded), { loaded: false, reason: 'digest mismatch', damaged: true })
  await assertEmpty(t, loaded)
})

t.test('given a service whose snapshot had a document value changed in place, when it starts, then it warns, refuses the snapshot and serves what the log rebuilds', async (t) => {
  const config = testConfig({ readStore: 'memory' })
  const first = await open(config)
  const { organizationId } = await bootstrap(first)
  const atStop = documents(first.readStore)
  await first.close()
  const file = path.join(config.dataDir, 'read-store.snapshot')
  const original = fs.readFileSync(file, 'utf8')
  const lines = original.split('\n')
  const index = lines.findIndex((line) => line.startsWith(`{"doc":{"_id":"${organizationId}","name":`))
  t.ok(index > 0, 'the organization document is in the snapshot')
  // The last digit of its creation year, one up: the same length, still valid JSON, another date.
  lines[index] = (lines[index] ?? '').replace(/"createdAt":"(\d{3})(\d)/u, (_, head: string, last: string) => `"createdAt":"${head}${(Number(last) + 1) % 10}`)
  t.not(lines[index], original.split('\n')[index], 'the document line changed')
  JSON.parse(lines[index] ?? '')
  fs.writeFileSync(file, lines.join('\n'))
  t.equal(fs.statSync(file).size, Buffer.byteLength(original), 'changed in place, same length')

  const logged: string[] = []
  const restarted = await open(config, pino({ level: 'info' }, { write: (line: string) => void logged.push(line) }))
  t.same(documents(restarted.readStore), atStop, 'the documents the log rebuilds, not the changed one')
  t.ok(await restarted.queries.principals.client(config.adminClientId ?? ''), 'the administrator client is found')
  await restarted.close()
  const entries = logged.map((line): Record<string, unknown> => JSON.parse(line))
  t.match(entries.find((entry) => entry['msg'] === 'read store snapshot damaged: rebuilding from the log'), { level: 40, reason: 'digest mismatch' }, 'a warning names the reason')
})

t.test('given a snapshot whose digest trailer was removed, when it is loaded, then it is refused as damaged and nothing of it is kept', async (t) => {
  const { file, save, load } = await snapshotFixture(t)
  await save()
  const whole = fs.readFileSync(file, 'utf8')
  fs.writeFileSync(file, whole.slice(0, whole.lastIndexOf('{"sha256"')))

  const loaded = new MemoryReadStore()
  t.same(await load(loaded), { loaded: false, reason: 'no digest', damaged: true })
  await assertEmpty(t, loaded)
})

t.test('given a snapshot with a line appended after its digest, when it is loaded, then it is refused as damaged', async (t) => {
  const { file, save, load } = await snapshotFixture(t)
  await save()
  fs.appendFileSync(file, '{"doc":{"_id":"c","kind":"x"}}\n')

  const loaded = new MemoryReadStore()
  t.same(await load(loaded), { loaded: false, reason: 'content after the digest', damaged: true })
  await assertEmpty(t, loaded)
})

t.test('given a snapshot in the previous format, without a digest, when the service restores, then it is not trusted: refused with an info log and the store left empty', async (t) => {
  const { file, save, load, eventStore } = await snapshotFixture(t)
  await save()
  // What the previous code wrote: format 1 in the header, no trailer after the end line.
  const whole = fs.readFileSync(file, 'utf8')
  fs.writeFileSync(file, whole.slice(0, whole.lastIndexOf('{"sha256"')).replace(/^\{"format":2,/u, '{"format":1,'))

  const loaded = new MemoryReadStore()
  t.same(await load(loaded), { loaded: false, reason: 'format 1, this code reads format 2', damaged: false })
  await assertEmpty(t, loaded)

  const logger = recordingLogger()
  const store = new MemoryReadStore()
  const outcome = await readStoreSnapshots({ file, store, eventStore, positions: () => ({ position: 0, checkpoints: {} }), logger, now: () => new Date() }).restore()
  t.same(outcome, { loaded: false, reason: 'format 1, this code reads format 2', damaged: false })
  t.match(logger.entries, [{ level: 'info', object: { reason: 'format 1, this code reads format 2' }, message: 'read store snapshot not used: rebuilding from the log' }])
  await assertEmpty(t, store)
})

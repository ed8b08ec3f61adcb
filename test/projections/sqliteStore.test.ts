import Database from 'better-sqlite3'
import path from 'node:path'
import { pino } from 'pino'
import t, { type Test } from 'tap'
import { organizationAggregate } from '../../src/commands/organization.js'
import { loadDemo } from '../../src/demo/index.js'
import { bootstrap } from '../../src/identity/bootstrap.js'
import { allProjections } from '../../src/projections/index.js'
import { MemoryReadStore } from '../../src/projections/memoryStore.js'
import type { CollectionSpec, Filter, FindOptions, ReadDocument, ReadStore } from '../../src/projections/readStore.js'
import { SqliteReadStore } from '../../src/projections/sqliteStore.js'
import { createRuntime, type Runtime } from '../../src/runtime.js'
import type { Config } from '../../src/shared/config.js'
import { newId } from '../../src/shared/ids.js'
import { tempDir, testConfig } from '../helpers/config.js'

interface Row extends ReadDocument {
  org: string
  due?: string | number | null | boolean
  n?: number | string | null
  part?: { day: string } | string[]
}

const collect = async <T>(iterable: AsyncIterable<T>) => {
  const out: T[] = []
  for await (const item of iterable) out.push(item)
  return out
}

const spec: CollectionSpec = { name: 'rows', indexes: [{ org: 1, due: 1 }, { n: -1 }, { 'part.day': 1 }] }

/** The rows of a filter and options, as ids in order, from a store. */
const idsOf = async (store: ReadStore, filter: Filter, options?: FindOptions) =>
  (await store.collection<Row>(spec).find(filter, options)).map((row) => row._id)

/**
 * Whether SQLite answers as the memory store: in the same order when sorted;
 * without a sort (the order is unspecified, as in MongoDB) the same documents,
 * or with a limit as many of the matching ones.
 */
const sameAnswer = async (t: Test, sqlite: ReadStore, memory: ReadStore, what: string, filter: Filter, options?: FindOptions) => {
  const expected = await idsOf(memory, filter, options)
  const actual = await idsOf(sqlite, filter, options)
  if (options?.sort !== undefined) return t.same(actual, expected, what)
  if (options?.limit === undefined) return t.same([...actual].sort(), [...expected].sort(), what)
  const all = new Set(await idsOf(memory, filter))
  return t.ok(actual.length === expected.length && actual.every((id) => all.has(id)), what)
}

const fill = async (stores: ReadStore[], rows: Row[]) => {
  for (const store of stores) for (const row of rows) await store.collection<Row>(spec).put(row)
}

const mixedRows = (count: number): Row[] => Array.from({ length: count }, (_, i) => {
  const row: Row = { _id: `r${String(i).padStart(5, '0')}`, org: i % 3 === 0 ? 'a' : 'b' }
  if (i % 7 !== 0) row.due = `2026-0${1 + (i % 9)}-1${i % 10}`
  if (i % 11 === 0) row.due = null
  if (i % 5 !== 0) row.n = i % 4 === 0 ? String(i % 13) : i % 17
  if (i % 6 === 0) row.part = { day: `2026-01-${10 + (i % 20)}` }
  return row
})

const filters: Array<[string, Filter, FindOptions?]> = [
  ['an equality and a text range on an index', { org: 'a', due: { $gte: '2026-03-00', $lt: '2026-07-00' } }],
  ['a number range (text values excluded)', { n: { $gt: 3, $lte: 12 } }],
  ['a text range from above (numbers excluded)', { n: { $lt: '5' } }],
  ['$in with numbers and text', { n: { $in: [1, '4', 16] } }],
  ['null: missing or null', { due: null }],
  ['a dotted path', { 'part.day': { $gte: '2026-01-20' } }],
  ['$and of pushed terms', { $and: [{ org: 'b' }, { n: { $gte: 10 } }] }],
  ['a pushed term beside one left to JavaScript', { org: 'a', n: { $ne: 4 } }],
  ['ids by $in, read through the key', { _id: { $in: ['r00010', 'r00020', 'r00299', 'nope'] } }],
  ['a selective equality, unsorted, limited', { org: 'a', due: '2026-04-13' }, { limit: 2 }],
  ['a selective equality beside a field left to JavaScript, unsorted', { org: 'b', due: { $in: ['2026-02-11', '2026-09-18'] }, n: { $exists: true } }],
  ['$or (JavaScript only)', { $or: [{ n: 2 }, { due: { $exists: false } }] }],
  ['sorted descending by an index with nulls, paged', { org: 'b' }, { sort: { n: -1 }, skip: 5, limit: 40 }],
  ['sorted ascending with nulls first, then by _id', {}, { sort: { due: 1, _id: 1 } }],
  ['sorted by a field SQL does not know to be plain', { org: 'a' }, { sort: { part: 1, _id: -1 }, limit: 30 }],
]

t.test('answers every filter and sort as the memory store does, also once a path stops being plain', async (t) => {
  const memory = new MemoryReadStore()
  const sqlite = new SqliteReadStore({ file: ':memory:', pageSize: 16 })
  t.teardown(() => sqlite.close())
  await fill([memory, sqlite], mixedRows(300))
  for (const [what, filter, options] of filters) {
    await sameAnswer(t, sqlite, memory, what, filter, options)
    t.equal(await sqlite.collection(spec).count(filter), await memory.collection(spec).count(filter), `count: ${what}`)
  }
  // A boolean beside the text of an indexed path (its column holds it as a BLOB), and an array on the way to one (that path leaves SQL).
  await fill([memory, sqlite], [{ _id: 'x1', org: 'a', due: true, n: 5 }, { _id: 'x2', org: 'b', part: ['2026-01-25'], n: 5 }])
  for (const [what, filter, options] of filters) await sameAnswer(t, sqlite, memory, `after: ${what}`, filter, options)
  t.equal(await sqlite.collection(spec).deleteMany({ org: 'a', due: { $gte: '2026-05' } }), await memory.collection(spec).deleteMany({ org: 'a', due: { $gte: '2026-05' } }))
  t.same(await idsOf(sqlite, {}, { sort: { _id: 1 } }), await idsOf(memory, {}, { sort: { _id: 1 } }), 'deleteMany removed the same documents')
})

t.test('findOne reads past pages of candidates holding no match (a filter SQL does not select exactly)', async (t) => {
  const sqlite = new SqliteReadStore({ file: ':memory:', pageSize: 100 })
  t.teardown(() => sqlite.close())
  const rows = sqlite.collection<Row>(spec)
  for (let i = 0; i < 450; i++) await rows.put({ _id: `f${String(i).padStart(4, '0')}`, org: 'a', n: i === 420 ? 'needle' : i })
  const filter = { org: 'a', n: { $regex: '^nee' } }
  t.notOk(sqlite.explainQuery(spec, filter).exact, 'the regex is tested in JavaScript')
  t.equal((await rows.findOne(filter))?._id, 'f0420')
  t.equal(await rows.findOne({ org: 'a', n: { $regex: '^none' } }), null)
})

t.test('streams many rows in a sort across pages, each row once, while documents are written between pages', async (t) => {
  const sqlite = new SqliteReadStore({ file: ':memory:', pageSize: 100 })
  t.teardown(() => sqlite.close())
  const rows = sqlite.collection<Row>(spec)
  for (let i = 0; i < 5000; i++) await rows.put({ _id: `s${i}`, org: 'a', due: i % 50 === 0 ? null : `2026-${String(1 + (i % 12)).padStart(2, '0')}`, n: i })
  let previous: string | null = null
  const seen = new Set<string>()
  let ordered = true
  for await (const row of rows.stream({ org: 'a' }, { sort: { due: 1 } })) {
    const due = typeof row.due === 'string' ? row.due : ''
    if (previous !== null && due < previous) ordered = false
    previous = due
    seen.add(row._id)
    // A write on the same connection between two pages (the stream must hold no statement open).
    if (seen.size % 250 === 0) await rows.put({ _id: `extra${seen.size}`, org: 'z', n: -1 })
  }
  t.equal(seen.size, 5000, 'every row once')
  t.ok(ordered, 'in the order of the sort (missing first)')
  const descending = await collect(rows.stream({ org: 'a' }, { sort: { n: -1 }, skip: 10, limit: 1500 }))
  t.same(descending.map((r) => r.n), Array.from({ length: 1500 }, (_, i) => 4989 - i))
})

t.test('a checkpoint is never committed ahead of the documents it covers', async (t) => {
  const file = path.join(tempDir(), 'read-store.sqlite')
  const store = new SqliteReadStore({ file, commitEvery: 7, commitAfterMs: 60_000 })
  const docs = store.collection<Row>({ name: 'docs' })
  // What a crash would leave: what another connection reads of the file while writes wait in the open transaction.
  const disk = new Database(file, { readonly: true })
  t.teardown(() => disk.close())
  const onDisk = () => ({
    checkpoint: Number(disk.prepare('SELECT coalesce(max(position), 0) FROM _checkpoints WHERE name = ?').pluck().get('p')),
    docs: Number(disk.prepare('SELECT count(*) FROM "c_docs"').pluck().get()),
  })
  const states: Array<{ checkpoint: number; docs: number }> = []
  for (let position = 1; position <= 40; position++) {
    await docs.put({ _id: `d${position}`, org: 'a' })
    states.push(onDisk())
    await store.setCheckpoint('p', position)
    states.push(onDisk())
  }
  t.ok(states.every((state) => state.checkpoint <= state.docs), 'no state on disk has the checkpoint past its documents')
  t.ok(states.some((state) => state.docs > 0 && state.docs < 40), 'writes were committed along the way')
  t.ok(onDisk().checkpoint < 40, 'the last writes still wait in the open transaction')
  await store.close()
  t.same(onDisk(), { checkpoint: 40, docs: 40 }, 'closing commits them')
})

t.test('documents waiting for the commit are read as written, by id and by query, and only their last version is written', async (t) => {
  const file = path.join(tempDir(), 'read-store.sqlite')
  const store = new SqliteReadStore({ file, commitEvery: 1000, commitAfterMs: 60_000 })
  const docs = store.collection<Row>({ name: 'docs', indexes: [{ org: 1 }] })
  const disk = new Database(file, { readonly: true })
  t.teardown(() => disk.close())
  const onDisk = () => (disk.prepare('SELECT _id, doc FROM "c_docs" ORDER BY _id').raw().all() as Array<[string, string]>).map(([id, doc]) => [id, JSON.parse(doc)])

  await docs.put({ _id: 'a', org: 'x', n: 1 })
  await docs.put({ _id: 'a', org: 'y', n: 2 })
  await docs.put({ _id: 'b', org: 'y', n: 3 })
  await docs.delete('b')
  await docs.put({ _id: 'c', org: 'y', n: 4 })
  t.same(await docs.get('a'), { _id: 'a', org: 'y', n: 2 }, 'a read by id sees the last put')
  t.equal(await docs.get('b'), null, 'and a delete')
  t.same(onDisk(), [], 'nothing is on disk before the commit')
  t.same((await docs.find({ org: 'y' }, { sort: { n: 1 } })).map((d) => d._id), ['a', 'c'], 'a query sees the waiting documents')
  t.equal(await docs.count({ org: 'x' }), 0, 'a count too, by the indexed column of the last version')

  await docs.put({ _id: 'c', org: 'x', n: 5 })
  t.equal(await docs.deleteMany({ org: 'x' }), 1, 'a delete by filter sees a version put after the last query')
  t.equal(await docs.get('c'), null)

  await docs.put({ _id: 'gone', org: 'x' })
  await store.drop(['docs'])
  const again = store.collection<Row>({ name: 'docs' })
  t.equal(await again.get('gone'), null, 'a drop discards what waited')
  await again.put({ _id: 'd', org: 'z' })
  await store.commit()
  t.same(onDisk(), [['d', { _id: 'd', org: 'z' }]], 'the commit writes what waits')
  await store.close()
})

const open = async (config: Config, onProgress?: (position: number) => void): Promise<Runtime> => {
  const runtime = await createRuntime(config, { logger: pino({ level: 'silent' }) })
  await runtime.start(onProgress === undefined ? {} : { onProgress })
  return runtime
}

/** Every document of every collection in the read-store file, by collection and id, for comparison with a memory store. */
const fileDocuments = (file: string): Record<string, ReadDocument[]> => {
  const db = new Database(file, { readonly: true })
  try {
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'c\\_%' ESCAPE '\\'").pluck().all().map(String)
    const out: Record<string, ReadDocument[]> = {}
    for (const table of tables) {
      const docs = db.prepare(`SELECT doc FROM "${table}" ORDER BY _id`).pluck().all().map((text) => JSON.parse(String(text)) as ReadDocument)
      if (docs.length > 0) out[table.slice(2)] = docs
    }
    return out
  } finally {
    db.close()
  }
}

const memoryDocuments = (store: unknown): Record<string, ReadDocument[]> => {
  if (!(store instanceof MemoryReadStore)) throw new Error('memory read store expected')
  const out: Record<string, ReadDocument[]> = {}
  for (const { spec: collection, docs } of store.contents()) {
    const sorted = [...docs].sort((a, b) => (a._id < b._id ? -1 : a._id > b._id ? 1 : 0))
    if (sorted.length > 0) out[collection.name] = sorted
  }
  return JSON.parse(JSON.stringify(out))
}

t.test('READ_STORE=sqlite: a restart resumes the projections from their checkpoints and holds what projecting into memory holds', async (t) => {
  const config = testConfig({ readStore: 'sqlite' })
  const file = path.join(config.dataDir, 'read-store.sqlite')
  const first = await open(config)
  t.equal(first.readStore.kind, 'sqlite')
  t.equal(first.readStore.persistent, true)
  const { organizationId } = await bootstrap(first)
  await loadDemo(first)
  const stoppedAt = await first.eventStore.headPosition()
  await first.close()
  const recorded = new Database(file, { readonly: true })
  t.same(recorded.prepare('SELECT name, version FROM _projection_versions ORDER BY name').all(),
    allProjections.map((p) => ({ name: p.name, version: p.version })).sort((a, b) => (a.name < b.name ? -1 : 1)),
    'the version of every projection is recorded with its documents, so a restart under the same code rebuilds none')
  recorded.close()

  const replayed: number[] = []
  const resumed = await open(config, (position) => replayed.push(position))
  t.same(replayed, [], 'nothing replayed: every checkpoint was at the head')
  t.equal(resumed.projections.position, stoppedAt)
  const context = { organizationId, actorId: 'test', correlationId: newId(), causationId: null }
  await resumed.execute(organizationAggregate, organizationId, { type: 'RenameOrganization', name: 'Renamed after the restart' }, context)
  t.equal((await resumed.queries.organizations.get(organizationId))?.name, 'Renamed after the restart', 'later events are projected')
  await resumed.close()

  // Events written while another read store followed the log: the SQLite store catches up with exactly those.
  const meanwhile = await open({ ...config, readStore: 'memory', readStoreSnapshot: false })
  await meanwhile.execute(organizationAggregate, organizationId, { type: 'RenameOrganization', name: 'Renamed meanwhile' }, context)
  const head = await meanwhile.eventStore.headPosition()
  const inMemory = memoryDocuments(meanwhile.readStore)
  await meanwhile.close()

  const checkpoints = new Database(file, { readonly: true })
  const behind = Number(checkpoints.prepare('SELECT min(position) FROM _checkpoints').pluck().get())
  checkpoints.close()
  const caughtUp: number[] = []
  const last = await open(config, (position) => caughtUp.push(position))
  t.ok(caughtUp.length > 0 && caughtUp.every((position) => position > behind), 'only events past the checkpoint are projected')
  t.equal(last.projections.position, head)
  t.equal((await last.queries.organizations.get(organizationId))?.name, 'Renamed meanwhile')
  await last.close()
  t.same(fileDocuments(file), inMemory, 'the same documents as projecting the whole log into memory')
})

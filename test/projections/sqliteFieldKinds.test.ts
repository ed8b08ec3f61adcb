import Database from 'better-sqlite3'
import path from 'node:path'
import t, { type Test } from 'tap'
import { MemoryReadStore } from '../../src/projections/memoryStore.js'
import type { CollectionSpec, Filter, FindOptions, ReadDocument, ReadStore } from '../../src/projections/readStore.js'
import { SqliteReadStore } from '../../src/projections/sqliteStore.js'
import { tempDir } from '../helpers/config.js'

// Booleans, arrays of scalars and `$or` on the SQLite read store: what SQL now takes must answer exactly as the memory
// store (MongoDB's semantics), through every change of a field's kind (plain, then multikey, then opaque).

interface Doc extends ReadDocument {
  [field: string]: unknown
}

const spec: CollectionSpec = { name: 'kinds', indexes: [{ org: 1, flag: 1 }, { tags: 1 }, { mixed: 1 }, { late: 1 }, { spoilt: 1 }, { n: 1, _id: 1 }] }

/** Small deterministic generator (mulberry32), so a failure names a case that replays. */
const random = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let x = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x
  return ((x ^ (x >>> 14)) >>> 0) / 4294967296
}

const SCALARS: readonly unknown[] = ['a', 'b', 'c', 1, 2, 3, true, false, null]

const idsOf = async (store: ReadStore, filter: Filter, options?: FindOptions) => (await store.collection<Doc>(spec).find(filter, options)).map((doc) => doc._id)

t.test('random writes and filters over booleans, arrays and $or: SQLite answers as the memory store, pages and counts', async (t) => {
  const next = random(34)
  const pick = <T>(values: readonly T[]): T => values[Math.floor(next() * values.length)] as T
  const memory = new MemoryReadStore()
  const sqlite = new SqliteReadStore({ file: ':memory:', pageSize: 7 })
  t.teardown(() => sqlite.close())
  const stores = [memory, sqlite]

  const scalarOrArray = (arrays: boolean) => (arrays && next() < 0.4 ? Array.from({ length: Math.floor(next() * 4) }, () => pick(SCALARS)) : pick(SCALARS))
  const makeDoc = (i: number, round: number): Doc => {
    const doc: Doc = { _id: `d${String(i).padStart(4, '0')}`, org: pick(['o1', 'o2']), n: Math.floor(next() * 20) }
    if (next() < 0.85) doc['flag'] = next() < 0.5
    if (next() < 0.9) doc['tags'] = scalarOrArray(true)
    if (next() < 0.8) doc['mixed'] = pick(SCALARS)
    // Plain for the first rounds, then arrays arrive (the field becomes multikey over stored documents).
    if (next() < 0.8) doc['late'] = scalarOrArray(round >= 2)
    // Scalars, then an object in the last round: the field stops going to SQL at all.
    if (next() < 0.8) doc['spoilt'] = round >= 4 && next() < 0.1 ? { nested: pick(SCALARS) } : pick(SCALARS)
    return doc
  }

  const condition = (): unknown => {
    const operand = pick(SCALARS)
    switch (pick(['eq', 'eq', '$eq', '$ne', '$in', '$range', '$nin'])) {
      case 'eq': return operand
      case '$eq': return { $eq: operand }
      case '$ne': return { $ne: operand }
      case '$in': return { $in: Array.from({ length: 1 + Math.floor(next() * 3) }, () => pick(SCALARS)) }
      case '$nin': return { $nin: [pick(SCALARS), pick(SCALARS)] }
      default: return { [pick(['$gt', '$gte', '$lt', '$lte'])]: pick(['b', 2]) }
    }
  }
  const term = (): Filter => ({ [pick(['flag', 'tags', 'mixed', 'late', 'spoilt', 'org'])]: condition() })
  const filter = (): Filter => {
    const shape = next()
    if (shape < 0.45) return { ...term(), ...term() }
    if (shape < 0.75) return { org: pick(['o1', 'o2']), $or: [term(), term()] }
    if (shape < 0.85) return { $and: [term(), { $or: [term(), term(), term()] }] }
    return term()
  }

  let checks = 0
  let pushed = 0
  for (let round = 0; round < 5; round++) {
    for (let w = 0; w < 160; w++) {
      const i = Math.floor(next() * 220)
      const id = `d${String(i).padStart(4, '0')}`
      if (next() < 0.12) for (const store of stores) await store.collection<Doc>(spec).delete(id)
      else {
        const doc = makeDoc(i, round)
        for (const store of stores) await store.collection<Doc>(spec).put(doc)
      }
    }
    for (let q = 0; q < 120; q++) {
      const f = filter()
      const what = `round ${round}, ${JSON.stringify(f)}`
      if (sqlite.explainQuery(spec, f).exact) pushed += 1
      t.equal(await sqlite.collection(spec).count(f), await memory.collection(spec).count(f), `count: ${what}`)
      const sorts: Array<FindOptions['sort']> = [{ n: 1, _id: 1 }, { _id: -1 }, { flag: -1, _id: 1 }]
      const options: FindOptions = { sort: pick(sorts), skip: Math.floor(next() * 5), limit: 1 + Math.floor(next() * 12) }
      t.same(await idsOf(sqlite, f, options), await idsOf(memory, f, options), `page: ${what} ${JSON.stringify(options)}`)
      checks += 2
    }
    const doomed: Filter = { org: 'o2', flag: pick([true, false]), tags: pick(SCALARS) }
    t.equal(await sqlite.collection(spec).deleteMany(doomed), await memory.collection(spec).deleteMany(doomed), `round ${round}: deleteMany ${JSON.stringify(doomed)}`)
  }
  t.same(await idsOf(sqlite, {}, { sort: { _id: 1 } }), await idsOf(memory, {}, { sort: { _id: 1 } }), 'the same documents in the end')
  t.ok(checks >= 1200, `${checks} answers compared`)
  t.ok(pushed >= 150, `${pushed} of ${checks / 2} filters went to SQL whole (the rest partly or not at all)`)
})

/** What the store says of a filter: whether SQL selects it whole. */
const exact = (store: SqliteReadStore, filter: Filter) => store.explainQuery(spec, filter).exact

t.test('a field goes to SQL as a column while it holds scalars, by its elements once it holds arrays, and no more once it holds an object', async (t) => {
  const sqlite = new SqliteReadStore({ file: ':memory:' })
  t.teardown(() => sqlite.close())
  const docs = sqlite.collection<Doc>(spec)
  await docs.put({ _id: 'a', org: 'o', flag: true, tags: 'x' })
  await docs.put({ _id: 'b', org: 'o', flag: false, tags: 'y' })
  t.ok(exact(sqlite, { org: 'o', flag: true }), 'a boolean is a column')
  t.ok(exact(sqlite, { tags: 'x' }), 'scalars: a column')
  t.same(sqlite.explainQuery(spec, { org: 'o' }, { sort: { flag: 1, _id: 1 } }).sortedInJavaScript, false, 'a boolean column sorts in SQL')

  await docs.put({ _id: 'c', org: 'o', tags: ['x', 'z', 'x'] })
  t.ok(exact(sqlite, { tags: 'x' }), 'arrays of scalars: by elements')
  t.ok(exact(sqlite, { $or: [{ tags: 'z' }, { flag: false }] }), '$or of pushed branches')
  t.same((await docs.find({ tags: 'x' }, { sort: { _id: 1 } })).map((d) => d._id), ['a', 'c'], 'an element or the value itself')
  t.same((await docs.find({ tags: { $ne: 'x' } }, { sort: { _id: 1 } })).map((d) => d._id), ['b'], '$ne: no element equal')
  t.equal(await docs.count({ tags: null }), 0, 'every document holds the field')
  t.ok(sqlite.explainQuery(spec, {}, { sort: { tags: 1 } }).sortedInJavaScript, 'a multikey field sorts in JavaScript, as MongoDB sorts arrays by their least element')
  t.notOk(exact(sqlite, { tags: { $gt: 'a' } }), 'ranges over elements are left to JavaScript')

  await docs.delete('c')
  await docs.put({ _id: 'd', org: 'o', tags: [] })
  t.same((await docs.find({ tags: 'x' })).map((d) => d._id), ['a'], 'a deleted document leaves no element behind')
  t.same((await docs.find({ tags: { $in: ['y', null] } }, { sort: { _id: 1 } })).map((d) => d._id), ['b'], 'an empty array matches no element')

  await docs.put({ _id: 'e', org: 'o', tags: [{ deep: 'x' }] })
  t.notOk(exact(sqlite, { tags: 'x' }), 'an array of objects: left to JavaScript')
  t.same((await docs.find({ tags: 'x' })).map((d) => d._id), ['a'], 'and still answered')
})

t.test('a store written by the earlier rule (booleans and arrays never pushed down) looks at those fields again when it opens', async (t) => {
  const file = path.join(tempDir(), 'read-store.sqlite')
  const first = new SqliteReadStore({ file })
  const docs = first.collection<Doc>(spec)
  for (let i = 0; i < 30; i++) await docs.put({ _id: `r${i}`, org: 'o', flag: i % 3 === 0, tags: i % 2 === 0 ? ['p', `t${i}`] : 'q' })
  await first.close()
  // What rule 1 left: the fields marked opaque, their columns empty, no element rows and no rule recorded.
  const raw = new Database(file)
  raw.exec(`UPDATE _paths SET plain = 0 WHERE path IN ('flag', 'tags'); UPDATE "c_kinds" SET "f_flag" = NULL, "f_tags" = NULL;
    DROP TABLE IF EXISTS "m_kinds"; DELETE FROM _rules`)
  raw.close()

  const reopened = new SqliteReadStore({ file })
  t.teardown(() => reopened.close())
  const again = reopened.collection<Doc>(spec)
  t.ok(exact(reopened, { org: 'o', flag: true }), 'the boolean is a column again')
  t.ok(exact(reopened, { tags: 'p' }), 'the array field is found by its elements')
  t.equal(await again.count({ org: 'o', flag: true }), 10)
  t.equal(await again.count({ tags: 'p' }), 15)
  t.equal(await again.count({ $or: [{ tags: 'q' }, { flag: true }] }), 20)
})

t.test('text ranges keep booleans out, as MongoDB compares values of the bound\'s type only', async (t: Test) => {
  const memory = new MemoryReadStore()
  const sqlite = new SqliteReadStore({ file: ':memory:' })
  t.teardown(() => sqlite.close())
  for (const store of [memory, sqlite]) {
    for (const [i, mixed] of ['a', 'm', 'z', true, false, 5, null].entries()) await store.collection<Doc>(spec).put({ _id: `m${i}`, mixed })
  }
  for (const f of [{ mixed: { $gt: 'b' } }, { mixed: { $gte: '' } }, { mixed: { $lt: 'n' } }, { mixed: { $gt: 1 } }, { mixed: { $ne: true } }, { mixed: { $in: [false, 'z'] } }]) {
    t.ok(exact(sqlite, f), `${JSON.stringify(f)} goes to SQL`)
    t.same(await idsOf(sqlite, f, { sort: { _id: 1 } }), await idsOf(memory, f, { sort: { _id: 1 } }), JSON.stringify(f))
  }
})

t.test('a failed write rolls the open transaction back and ends the store; reopened, it holds the last commit with its field kinds', async (t) => {
  const file = path.join(tempDir(), 'read-store.sqlite')
  const store = new SqliteReadStore({ file })
  const docs = store.collection<Doc>(spec)
  for (let i = 0; i < 50; i++) await docs.put({ _id: `s${i}`, org: 'o', tags: i % 2 === 0 ? 'x' : 'y' })
  await store.setCheckpoint('p', 50)
  store.commit()

  await docs.put({ _id: 'arrays', org: 'o', tags: ['x', 'z'] })
  await store.setCheckpoint('p', 60)
  // A document JSON cannot write fails the batch after the first document moved `tags` to multikey in the same transaction.
  await docs.put({ _id: 'unwritable', org: 'o', big: 10n })
  await t.rejects(docs.count({}), TypeError, 'the write fails')
  await t.rejects(docs.count({ tags: 'x' }), { code: 'SERVICE_UNAVAILABLE', status: 503, details: { reason: 'READ_STORE_FAILED' } }, 'every later read is refused')
  await t.rejects(docs.put({ _id: 'later', org: 'o' }), { code: 'SERVICE_UNAVAILABLE' }, 'and every write')
  await t.rejects(store.ping(), { code: 'SERVICE_UNAVAILABLE' }, 'health sees the store down')
  await store.close()

  const reopened = new SqliteReadStore({ file })
  t.teardown(() => reopened.close())
  const again = reopened.collection<Doc>(spec)
  t.equal(await reopened.getCheckpoint('p'), 50, 'the checkpoint of the last commit')
  t.equal(await again.get('arrays'), null, 'no document of the failed batch')
  t.ok(exact(reopened, { tags: 'x' }) && reopened.explainQuery(spec, {}, { sort: { tags: 1 } }).sortedInJavaScript === false, '`tags` is a plain column again')
  t.equal(await again.count({ tags: 'x' }), 25)
  await again.put({ _id: 'arrays', org: 'o', tags: ['x', 'z'] })
  t.equal(await again.count({ tags: 'x' }), 26, 'and moves to multikey when the batch is projected again')
})

t.test('a stream goes on finding its documents when a write between its pages turns the field it filters on opaque', async (t) => {
  const memory = new MemoryReadStore()
  const sqlite = new SqliteReadStore({ file: ':memory:', pageSize: 3 })
  t.teardown(() => sqlite.close())
  const seen: Record<string, string[]> = {}
  for (const [name, store] of [['memory', memory], ['sqlite', sqlite]] as const) {
    const docs = store.collection<Doc>(spec)
    for (let i = 0; i < 10; i++) await docs.put({ _id: `d${i}`, tags: ['x', `t${i}`] })
    const ids: string[] = []
    for await (const doc of docs.stream({ tags: 'x' })) {
      ids.push(doc._id)
      if (ids.length === 1) {
        // Another projection's write, applied at the next query (or the commit timer): the element rows of `tags` go.
        await docs.put({ _id: 'other', tags: [{ deep: 1 }] })
        await docs.count({ _id: 'other' })
      }
    }
    seen[name] = ids.sort()
  }
  t.equal(seen['sqlite']?.length, 10)
  t.same(seen['sqlite'], seen['memory'])
})

t.test('element rows follow writes made outside this code (an earlier release on the same file): triggers keep them', async (t) => {
  const file = path.join(tempDir(), 'read-store.sqlite')
  const first = new SqliteReadStore({ file })
  const docs = first.collection<Doc>(spec)
  for (let i = 0; i < 10; i++) await docs.put({ _id: `e${i}`, org: 'o', tags: ['x', `t${i}`] })
  await first.close()

  // What an earlier release writes: the row and its columns, nothing of the element table.
  const raw = new Database(file)
  raw.prepare('UPDATE "c_kinds" SET doc = ? WHERE _id = ?').run(JSON.stringify({ _id: 'e1', org: 'o', tags: ['y'] }), 'e1')
  raw.prepare('DELETE FROM "c_kinds" WHERE _id = ?').run('e2')
  raw.prepare('INSERT INTO "c_kinds" (_id, doc) VALUES (?, ?)').run('e10', JSON.stringify({ _id: 'e10', org: 'o', tags: ['x', true] }))
  raw.close()

  const reopened = new SqliteReadStore({ file })
  t.teardown(() => reopened.close())
  const again = reopened.collection<Doc>(spec)
  t.ok(exact(reopened, { tags: 'x' }))
  t.same((await again.find({ tags: 'x' }, { sort: { _id: 1 } })).map((d) => d._id), ['e0', 'e10', 'e3', 'e4', 'e5', 'e6', 'e7', 'e8', 'e9'])
  t.same((await again.find({ tags: true })).map((d) => d._id), ['e10'], 'a boolean element')
  t.same((await again.find({ tags: 'y' })).map((d) => d._id), ['e1'])
  t.equal(await again.count({ tags: 't2' }), 0, 'nothing left of the deleted row')
})

import t from 'tap'
import { documentMatcher, sortDocuments } from '../../src/projections/documentQuery.js'
import { MemoryReadStore } from '../../src/projections/memoryStore.js'
import type { CollectionSpec, Filter, Sort } from '../../src/projections/readStore.js'

interface Order {
  _id: string
  organizationId?: string | null | string[]
  status: string
  createdAt?: string | number | null | { at: string }
  amount: number
}

const spec: CollectionSpec = { name: 'orders', indexes: [{ organizationId: 1, createdAt: 1 }, { status: 1 }] }

/** A small seeded generator, so a failure replays the same operations. */
const random = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let x = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x
  return ((x ^ (x >>> 14)) >>> 0) / 4294967296
}

const pick = <T>(next: () => number, values: readonly T[]): T => values[Math.floor(next() * values.length)] as T

/** What the store must answer: every document filtered as MongoDB would, sorted with `_id` breaking ties, then paged. */
const expected = (docs: Iterable<Order>, filter: Filter, sort: Sort, skip: number, limit: number): string[] => {
  const matches = documentMatcher(filter)
  const total: Sort = '_id' in sort ? sort : { ...sort, _id: Object.values(sort).at(-1) ?? 1 }
  return sortDocuments([...docs].filter(matches), total).slice(skip, skip + limit).map((doc) => doc._id)
}

const sorts: Sort[] = [{ createdAt: 1, _id: 1 }, { createdAt: -1, _id: -1 }, { createdAt: 1 }, { amount: -1, createdAt: 1 }, { _id: -1 }]
const filters = (org: string): Filter[] => [{ organizationId: org }, { organizationId: org, status: 'paid' }, { status: 'open' }, {}, { organizationId: org, amount: { $gte: 50 } }]

t.test('sorted pages read from kept orders match sorting every match, through inserts, changes of the sorted value, moves between organizations and deletes', async (t) => {
  const next = random(20261124)
  const store = new MemoryReadStore({ orderedFrom: 0 })
  const orders = store.collection<Order>(spec)
  const reference = new Map<string, Order>()
  const times = ['2026-01-01', '2026-01-02', '2026-01-03', null, undefined, 7] as const
  let mismatches = 0
  let pages = 0
  let wrongCounts = 0
  for (let step = 0; step < 1500; step++) {
    const roll = next()
    const existing = [...reference.keys()]
    if (roll < 0.15 && existing.length > 0) {
      const id = pick(next, existing)
      await orders.delete(id)
      reference.delete(id)
    } else {
      const id = roll < 0.5 && existing.length > 0 ? pick(next, existing) : `o${step}`
      const createdAt = pick(next, times)
      const doc: Order = { _id: id, organizationId: pick(next, ['org-a', 'org-b', null]), status: pick(next, ['open', 'paid']), amount: Math.floor(next() * 100) }
      if (createdAt !== undefined) doc.createdAt = createdAt
      await orders.put(doc)
      reference.set(id, doc)
    }
    if (step % 25 !== 0) continue
    for (const sort of sorts) {
      for (const filter of filters(pick(next, ['org-a', 'org-b']))) {
        const skip = pick(next, [0, 0, 3, 40])
        const limit = pick(next, [1, 10, 50])
        const found = (await orders.find(filter, { sort, skip, limit })).map((doc) => doc._id)
        pages += 1
        if (JSON.stringify(found) !== JSON.stringify(expected(reference.values(), filter, sort, skip, limit))) mismatches += 1
      }
    }
    for (const filter of [...filters('org-a'), { organizationId: 'org-b', status: 'open' }, { status: 'paid', amount: 3 }]) {
      if (await orders.count(filter) !== [...reference.values()].filter(documentMatcher(filter)).length) wrongCounts += 1
    }
  }
  t.equal(mismatches, 0, `each of the ${pages} pages is what sorting every match gives`)
  t.equal(wrongCounts, 0, 'each count, of one equality, of several (kept counts) or with a range, is the number of matches')
  const page = await orders.find({ organizationId: 'org-a' }, { sort: { createdAt: -1, _id: -1 }, limit: 5 })
  t.same(page, page.map((doc) => reference.get(doc._id)), 'each document read is the version stored last')
})

t.test('a document holding an array or object where an order looks is still found, and sorted as MongoDB sorts it', async (t) => {
  const store = new MemoryReadStore({ orderedFrom: 0 })
  const orders = store.collection<Order>(spec)
  await orders.put({ _id: 'a', organizationId: 'org', status: 'open', createdAt: '2026-01-02', amount: 1 })
  await orders.put({ _id: 'b', organizationId: 'org', status: 'open', createdAt: '2026-01-01', amount: 1 })
  const sort: Sort = { createdAt: 1, _id: 1 }
  t.same((await orders.find({ organizationId: 'org' }, { sort })).map((d) => d._id), ['b', 'a'], 'the kept order before')
  await orders.put({ _id: 'c', organizationId: ['org', 'other'], status: 'open', createdAt: '2026-01-00', amount: 1 })
  t.same((await orders.find({ organizationId: 'org' }, { sort })).map((d) => d._id), ['c', 'b', 'a'], 'an array of organizations is matched by each element')
  await orders.put({ _id: 'd', organizationId: 'org', status: 'open', createdAt: { at: '2026' }, amount: 1 })
  const all = [...['a', 'b', 'c', 'd']].map((id) => id)
  const found = (await orders.find({ status: 'open' }, { sort })).map((d) => d._id)
  t.same([...found].sort(), all, 'an object in the sorted field is still found')
  t.same(found.slice(0, 3), ['c', 'b', 'a'], 'strings before objects, as in MongoDB')
  await orders.delete('c')
  await orders.delete('d')
  t.same((await orders.find({ organizationId: 'org' }, { sort: { createdAt: -1, _id: -1 } })).map((d) => d._id), ['a', 'b'], 'answers stay right once they are gone')
})

t.test('a count of one indexed equality is the number of documents holding the value, arrays included', async (t) => {
  const orders = new MemoryReadStore().collection<Order>(spec)
  await orders.put({ _id: 'a', organizationId: 'org', status: 'open', amount: 1 })
  await orders.put({ _id: 'b', organizationId: ['org', 'org'], status: 'open', amount: 1 })
  await orders.put({ _id: 'c', organizationId: 'other', status: 'paid', amount: 1 })
  await orders.put({ _id: 'c', organizationId: 'org', status: 'paid', amount: 1 })
  await orders.put({ _id: 'd', organizationId: 'org', status: 'paid', amount: 1 })
  await orders.delete('d')
  t.equal(await orders.count({ organizationId: 'org' }), 3)
  t.equal(await orders.count({ organizationId: 'other' }), 0)
  t.equal(await orders.count({ status: 'paid' }), 1)
  t.equal(await orders.count({ organizationId: 'org', status: 'open' }), 2, 'two equalities are still tested document by document')
})

t.test('counts of several equalities stay right once a document holds an array where they are kept', async (t) => {
  const orders = new MemoryReadStore({ orderedFrom: 0 }).collection<Order>(spec)
  await orders.put({ _id: 'a', organizationId: 'org', status: 'open', amount: 1 })
  await orders.put({ _id: 'b', organizationId: 'org', status: 'paid', amount: 1 })
  t.equal(await orders.count({ organizationId: 'org', status: 'open' }), 1)
  await orders.put({ _id: 'c', organizationId: ['org', 'other'], status: 'open', amount: 1 })
  t.equal(await orders.count({ organizationId: 'org', status: 'open' }), 2, 'the array is matched by its element')
  t.equal(await orders.count({ status: 'open', organizationId: 'other' }), 1)
  await orders.put({ _id: 'b', organizationId: 'org', status: 'open', amount: 1 })
  t.equal(await orders.count({ organizationId: 'org', status: 'open' }), 3, 'and changes after it are counted')
  t.equal(await orders.count({ organizationId: 'org', status: Number.NaN }), 0)
})

t.test('a count of one equality does not take an element of a nested array, as MongoDB does not', async (t) => {
  const orders = new MemoryReadStore().collection<Omit<Order, 'organizationId'> & { organizationId: string | string[][] }>(spec)
  await orders.put({ _id: 'a', organizationId: 'org', status: 'open', amount: 1 })
  await orders.put({ _id: 'b', organizationId: [['org']], status: 'open', amount: 1 })
  t.same((await orders.find({ organizationId: 'org' })).map((d) => d._id), ['a'])
  t.equal(await orders.count({ organizationId: 'org' }), 1)
})

t.test('infinite and NaN amounts in a sorted field never corrupt the kept order', async (t) => {
  const store = new MemoryReadStore({ orderedFrom: 0 })
  const orders = store.collection<Order>(spec)
  const sort: Sort = { amount: 1, _id: 1 }
  for (let i = 0; i < 30; i++) await orders.put({ _id: `d${i}`, organizationId: 'org', status: 'open', amount: i })
  t.same((await orders.find({ organizationId: 'org' }, { sort, limit: 3 })).map((d) => d._id), ['d0', 'd1', 'd2'], 'the order is kept')
  for (const [i, amount] of [Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, Number.NaN].entries()) {
    await orders.put({ _id: `x${i}`, organizationId: 'org', status: 'open', amount })
  }
  await orders.delete('x1')
  await orders.put({ _id: 'd3', organizationId: 'org', status: 'open', amount: 300 })
  const found = (await orders.find({ organizationId: 'org' }, { sort })).map((d) => d._id)
  t.same([...found].sort(), [...Array.from({ length: 30 }, (_, i) => `d${i}`), 'x0', 'x2', 'x3'].sort(), 'each document once, the deleted one gone')
  t.ok(found.indexOf('d3') > found.indexOf('d29'), 'a replaced document is found where its new value puts it')
})

t.test('orders are built for the groups queries read: a group written to before it is first read is read whole', async (t) => {
  const store = new MemoryReadStore({ orderedFrom: 0 })
  const orders = store.collection<Order>(spec)
  const sort: Sort = { createdAt: -1, _id: -1 }
  const page = async (org: string) => (await orders.find({ organizationId: org }, { sort })).map((d) => d._id)
  await orders.put({ _id: 'a1', organizationId: 'org-a', status: 'open', createdAt: '2026-01-01', amount: 1 })
  t.same(await page('org-a'), ['a1'])
  await orders.put({ _id: 'b1', organizationId: 'org-b', status: 'open', createdAt: '2026-01-02', amount: 1 })
  await orders.put({ _id: 'b2', organizationId: 'org-b', status: 'open', createdAt: '2026-01-01', amount: 1 })
  await orders.put({ _id: 'a2', organizationId: 'org-a', status: 'open', createdAt: '2026-01-03', amount: 1 })
  t.same(await page('org-b'), ['b1', 'b2'], 'a group first read after its writes')
  t.same(await page('org-a'), ['a2', 'a1'], 'a group read before keeps up with its writes')
  await orders.put({ _id: 'a1', organizationId: 'org-b', status: 'open', createdAt: '2026-01-05', amount: 1 })
  await orders.delete('a2')
  t.same(await page('org-a'), [], 'a group emptied')
  t.same(await page('org-b'), ['a1', 'b1', 'b2'], 'a document moved into a group already read')
  await orders.put({ _id: 'a3', organizationId: 'org-a', status: 'open', createdAt: '2026-01-04', amount: 1 })
  t.same(await page('org-a'), ['a3'], 'an emptied group filled again')
})

t.test('a rebuild that empties the store forgets its kept orders and builds them again from what it holds', async (t) => {
  const store = new MemoryReadStore({ orderedFrom: 0 })
  const orders = store.collection<Order>(spec)
  for (const id of ['a', 'b', 'c']) await orders.put({ _id: id, organizationId: 'org', status: 'open', createdAt: `2026-01-0${id === 'a' ? 3 : id === 'b' ? 2 : 1}`, amount: 1 })
  t.same((await orders.find({ organizationId: 'org' }, { sort: { createdAt: 1, _id: 1 } })).map((d) => d._id), ['c', 'b', 'a'])
  store.clear()
  await orders.put({ _id: 'x', organizationId: 'org', status: 'open', createdAt: '2026-02-01', amount: 1 })
  t.same((await orders.find({ organizationId: 'org' }, { sort: { createdAt: 1, _id: 1 } })).map((d) => d._id), ['x'])
})

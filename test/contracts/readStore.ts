import type { Test } from 'tap'
import type { CollectionSpec, ReadStore } from '../../src/projections/readStore.js'
import { newId } from '../../src/shared/ids.js'

interface Loan {
  _id: string
  _position?: number
  organizationId: string
  amount: number
  status: string
  name: string
  tags: string[]
  holders?: Array<{ id: string }>
}

const loan = (overrides: Partial<Loan>): Loan => ({
  _id: newId(), organizationId: 'org-a', amount: 100, status: 'open', name: 'Loan', tags: [], ...overrides,
})

const collect = async <T>(iterable: AsyncIterable<T>) => {
  const out: T[] = []
  for await (const item of iterable) out.push(item)
  return out
}

/** What every ReadStore adapter must do alike. `open` gives an empty store (a fresh database). */
export const readStoreContract = (t: Test, open: () => Promise<ReadStore>) => {
  const spec = (): CollectionSpec => ({ name: `loans_${newId().slice(-8)}`, indexes: [{ organizationId: 1 }, { status: 1 }] })

  t.test('puts, gets, replaces and deletes by _id', async (t) => {
    const store = await open()
    const loans = store.collection<Loan>(spec())
    const doc = loan({ name: 'first' })
    await loans.put(doc)
    t.same(await loans.get(doc._id), doc)
    await loans.put({ ...doc, name: 'second' })
    t.equal((await loans.get(doc._id))?.name, 'second', 'put replaces')
    t.equal(await loans.count(), 1)
    await loans.delete(doc._id)
    t.equal(await loans.get(doc._id), null)
  })

  t.test('finds with the MongoDB query language, sorted and paged', async (t) => {
    const store = await open()
    const loans = store.collection<Loan>(spec())
    const docs = [
      loan({ amount: 300, status: 'open', name: 'Álvaro Pérez', tags: ['vip'] }),
      loan({ amount: 100, status: 'closed', name: 'beatriz' }),
      loan({ amount: 200, status: 'open', name: 'Carlos', organizationId: 'org-b' }),
      loan({ amount: 400, status: 'open', name: 'Diana' }),
    ]
    for (const d of docs) await loans.put(d)
    const names = (found: Loan[]) => found.map((d) => d.name)
    t.same(names(await loans.find({ organizationId: 'org-a' }, { sort: { amount: 1 } })), ['beatriz', 'Álvaro Pérez', 'Diana'])
    t.same(names(await loans.find({ amount: { $gte: 200, $lt: 400 } }, { sort: { amount: -1 } })), ['Álvaro Pérez', 'Carlos'])
    t.same(names(await loans.find({ status: { $in: ['closed'] } })), ['beatriz'])
    t.same(names(await loans.find({ name: { $regex: 'ARLO', $options: 'i' } })), ['Carlos'])
    t.same(names(await loans.find({ tags: 'vip' })), ['Álvaro Pérez'], 'matches inside arrays')
    t.same(names(await loans.find({ $or: [{ amount: 100 }, { amount: 400 }] }, { sort: { amount: 1 } })), ['beatriz', 'Diana'])
    t.same(names(await loans.find({}, { sort: { amount: 1 }, skip: 1, limit: 2 })), ['Carlos', 'Álvaro Pérez'])
    t.same(names(await loans.find({}, { sort: { amount: 1 }, skip: 1, limit: 0 })), ['Carlos', 'Álvaro Pérez', 'Diana'], 'a limit of 0 is none, as in MongoDB')
    t.equal((await loans.find({ status: 'open' }, { limit: 0 })).length, 3)
    t.equal((await collect(loans.stream({}, { limit: 0 }))).length, 4)
    t.equal(await loans.count({ organizationId: 'org-a', status: 'open' }), 2)
    t.equal((await loans.findOne({ organizationId: 'org-b' }))?.name, 'Carlos')
    t.equal(await loans.findOne({ organizationId: 'org-z' }), null)
  })

  t.test('strings order by code point, as UTF-8 bytes do: a character above U+FFFF after U+E000–U+FFFF', async (t) => {
    const store = await open()
    const loans = store.collection<Loan>({ name: `loans_${newId().slice(-8)}`, indexes: [{ organizationId: 1, name: 1, _id: 1 }] })
    const inCodePointOrder = ['a', 'é', '\uE000', '\uFF21 full-width', '\u{1F600} emoji', '\u{20000} CJK extension B']
    for (const name of [...inCodePointOrder].reverse()) await loans.put(loan({ name }))
    const names = (found: Loan[]) => found.map((d) => d.name)
    t.same(names(await loans.find({ organizationId: 'org-a' }, { sort: { name: 1, _id: 1 } })), inCodePointOrder)
    t.same(names(await loans.find({}, { sort: { name: -1 } })), [...inCodePointOrder].reverse())
    const above = { name: { $gt: '\uFF21 full-width' } }
    t.same(names(await loans.find(above, { sort: { name: 1 } })), inCodePointOrder.slice(4))
    t.equal(await loans.count(above), 2, 'count agrees with find')
    t.same(names(await loans.find({ organizationId: 'org-a', name: { $lt: '\u{1F600}' } }, { sort: { name: 1, _id: 1 } })), inCodePointOrder.slice(0, 4))
  })

  t.test('equality filters follow MongoDB: arrays contain, dotted paths cross arrays of objects, booleans and nested fields', async (t) => {
    const store = await open()
    const orders = store.collection<{ _id: string; active: boolean; lines: Array<{ sku: string }>; debtor: { city: string } }>(spec())
    await orders.put({ _id: 'a', active: true, lines: [{ sku: 'x' }, { sku: 'y' }], debtor: { city: 'Medellín' } })
    await orders.put({ _id: 'b', active: false, lines: [{ sku: 'z' }], debtor: { city: 'Cali' } })
    const ids = async (filter: Record<string, unknown>) => (await orders.find(filter, { sort: { _id: 1 } })).map((d) => d._id)
    t.same(await ids({ 'lines.sku': 'y' }), ['a'], 'a path through an array of objects')
    t.same(await ids({ active: false }), ['b'])
    t.same(await ids({ 'debtor.city': 'Cali', active: false }), ['b'])
    t.same(await ids({ 'debtor.city': 'Cali', active: true }), [])
    t.equal(await orders.count({ 'lines.sku': 'z' }), 1)
  })

  t.test('streams matching documents without building an array', async (t) => {
    const store = await open()
    const loans = store.collection<Loan>(spec())
    for (let i = 0; i < 25; i++) await loans.put(loan({ amount: i, organizationId: i % 2 === 0 ? 'even' : 'odd' }))
    const even = await collect(loans.stream({ organizationId: 'even' }))
    t.equal(even.length, 13)
    const sorted = await collect(loans.stream({}, { sort: { amount: -1 }, limit: 3 }))
    t.same(sorted.map((d) => d.amount), [24, 23, 22])
  })

  t.test('an index keeps up with documents that change their indexed value', async (t) => {
    const store = await open()
    const loans = store.collection<Loan>(spec())
    const doc = loan({ status: 'open' })
    await loans.put(doc)
    await loans.put({ ...doc, status: 'closed' })
    t.equal(await loans.count({ status: 'open' }), 0)
    t.equal(await loans.count({ status: 'closed' }), 1)
  })

  t.test('an indexed array field is found by any of its elements, also beside another indexed equality', async (t) => {
    const store = await open()
    const loans = store.collection<Loan>({ name: `loans_${newId().slice(-8)}`, indexes: [{ organizationId: 1 }, { tags: 1 }, { 'holders.id': 1 }] })
    const shared = loan({ tags: ['ana', 'beto'] })
    await loans.put(shared)
    await loans.put(loan({ tags: ['beto'] }))
    await loans.put(loan({ holders: [{ id: 'h1' }, { id: 'h2' }] }))
    t.equal(await loans.count({ organizationId: 'org-a', tags: 'ana' }), 1)
    t.equal(await loans.count({ organizationId: 'org-a', tags: 'beto', status: { $ne: 'closed' } }), 2)
    t.equal(await loans.count({ 'holders.id': 'h2' }), 1, 'a dotted path through an array of objects')
    await loans.put({ ...shared, tags: ['beto'] })
    t.equal(await loans.count({ tags: 'ana' }), 0, 'an element taken out of the array leaves the index')
    t.equal(await loans.count({ tags: 'beto' }), 2)
  })

  t.test('filters mean what MongoDB means: missing fields, nulls, types, arrays and nested fields', async (t) => {
    const store = await open()
    interface Row { _id: string; _position?: number; organizationId: string; n?: number | string | null; tags?: string[]; at?: { day: string } }
    const rows = store.collection<Row>({ name: `rows_${newId().slice(-8)}`, indexes: [{ organizationId: 1 }] })
    const put = (id: string, fields: Omit<Row, '_id' | 'organizationId'>) => rows.put({ _id: id, organizationId: 'o', ...fields })
    await put('missing', {})
    await put('null', { n: null })
    await put('one', { n: 1, tags: ['a', 'b'], at: { day: '2026-01-02' } })
    await put('two', { n: 2, tags: ['c'], at: { day: '2026-01-03' } })
    await put('text', { n: '3' })
    const ids = async (filter: Record<string, unknown>) => (await rows.find(filter, { sort: { _id: 1 } })).map((r) => r._id)
    t.same(await ids({ n: null }), ['missing', 'null'], 'null matches a missing field')
    t.same(await ids({ n: { $ne: null } }), ['one', 'text', 'two'])
    t.same(await ids({ n: { $gte: 1 } }), ['one', 'two'], 'ranges compare values of the same type only')
    t.same(await ids({ n: { $lt: '4' } }), ['text'])
    t.same(await ids({ n: { $in: [null, 2] } }), ['missing', 'null', 'two'])
    t.same(await ids({ n: { $nin: [1, 2] } }), ['missing', 'null', 'text'])
    t.same(await ids({ n: { $exists: false } }), ['missing'])
    t.same(await ids({ tags: 'b' }), ['one'], 'equality looks inside arrays')
    t.same(await ids({ tags: { $in: ['c', 'z'] } }), ['two'])
    t.same(await ids({ 'at.day': { $gte: '2026-01-03' } }), ['two'], 'dotted paths reach nested fields')
    t.same(await ids({ $or: [{ n: 1 }, { n: '3' }], organizationId: 'o' }), ['one', 'text'])
    t.same(await ids({ $nor: [{ n: 1 }, { n: null }] }), ['text', 'two'])
    t.equal(await rows.count({ organizationId: 'o', n: { $gt: 0, $lt: 2 } }), 1)
  })

  t.test('deletes many by filter', async (t) => {
    const store = await open()
    const loans = store.collection<Loan>(spec())
    for (const status of ['open', 'open', 'closed']) await loans.put(loan({ status }))
    t.equal(await loans.deleteMany({ status: 'open' }), 2)
    t.equal(await loans.count(), 1)
  })

  t.test('keeps a checkpoint per projection', async (t) => {
    const store = await open()
    const name = `projection-${newId()}`
    t.equal(await store.getCheckpoint(name), 0)
    await store.setCheckpoint(name, 42)
    t.equal(await store.getCheckpoint(name), 42)
  })

  t.test('keeps the version of each projection whose documents it holds', async (t) => {
    const store = await open()
    const name = `projection-${newId()}`
    t.equal(await store.getProjectionVersion(name), null, 'none recorded yet')
    await store.setProjectionVersion(name, 1)
    await store.setProjectionVersion(name, 3)
    t.equal(await store.getProjectionVersion(name), 3)
    t.equal(await store.getProjectionVersion(`${name}-other`), null, 'per projection')
  })

  t.test('a lease has one holder until it is released or runs out; its holder renews it', async (t) => {
    const store = await open()
    const name = `lease-${newId()}`
    const at = (seconds: number) => new Date(Date.UTC(2026, 10, 23, 12, 0, seconds))
    t.equal(await store.acquireLease(name, 'a', at(0), 10_000), true, 'a free lease is taken')
    t.equal(await store.acquireLease(name, 'b', at(5), 10_000), false, 'not by another holder while it runs')
    t.equal(await store.acquireLease(name, 'a', at(8), 10_000), true, 'its holder renews it, to 18 s')
    t.equal(await store.acquireLease(name, 'b', at(12), 10_000), false, 'the renewal holds past the first expiry')
    t.equal(await store.acquireLease(`${name}-other`, 'b', at(12), 10_000), true, 'per name')
    await store.releaseLease(name, 'b')
    t.equal(await store.acquireLease(name, 'b', at(13), 10_000), false, 'only its holder releases it')
    t.equal(await store.acquireLease(name, 'b', at(18), 10_000), true, 'a lease that ran out is taken by another, as when its holder died')
    t.equal(await store.acquireLease(name, 'a', at(19), 10_000), false, 'and the former holder no longer holds it')
    await store.releaseLease(name, 'b')
    t.equal(await store.acquireLease(name, 'a', at(19), 10_000), true, 'a released lease is free at once')
  })

  t.test('drop empties the named collections only', async (t) => {
    const store = await open()
    const a = spec()
    const b = spec()
    await store.collection<Loan>(a).put(loan({}))
    await store.collection<Loan>(b).put(loan({}))
    await store.drop([a.name])
    t.equal(await store.collection<Loan>(a).count(), 0)
    t.equal(await store.collection<Loan>(b).count(), 1)
  })
}

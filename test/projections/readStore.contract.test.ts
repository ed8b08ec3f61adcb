import t from 'tap'
import { MemoryReadStore } from '../../src/projections/memoryStore.js'
import { MongoReadStore } from '../../src/projections/mongoStore.js'
import { applyAt } from '../../src/projections/projection.js'
import type { ReadStore } from '../../src/projections/readStore.js'
import { SqliteReadStore } from '../../src/projections/sqliteStore.js'
import { newId } from '../../src/shared/ids.js'
import { readStoreContract } from '../contracts/readStore.js'

t.test('embedded read store', async (t) => {
  readStoreContract(t, async () => new MemoryReadStore())

  t.test('refuses changes made in place to a stored document', async (t) => {
    const store = new MemoryReadStore()
    const docs = store.collection<{ _id: string; items: number[] }>('frozen')
    await docs.put({ _id: 'a', items: [1] })
    const stored = await docs.get('a')
    t.throws(() => stored?.items.push(2), TypeError, 'stored documents are frozen')
  })

  t.test('hands out frozen documents from every read, however they were stored', async (t) => {
    const store = new MemoryReadStore()
    const docs = store.collection<{ _id: string; group: string; items: number[] }>({ name: 'handed', indexes: [{ group: 1 }] })
    const given = { _id: 'a', group: 'g', items: [1] }
    await docs.put(given)
    await applyAt(docs, 'b', 1, () => ({ _id: 'b', group: 'g', items: [2] }))
    const found = await docs.find({ group: 'g' }, { sort: { _id: 1 } })
    const one = await docs.findOne({ _id: 'b' })
    const streamed: Array<{ items: number[] }> = []
    for await (const doc of docs.stream({ group: 'g' })) streamed.push(doc)
    for (const doc of [...found, one, ...streamed]) t.throws(() => doc?.items.push(3), TypeError, 'a handed-out document is frozen')
    t.same((await docs.get('a'))?.items, [1], 'the stored document is unchanged')
  })

  t.test('the projection guard replaces a document without changing the version it was given or any frozen answer', async (t) => {
    const store = new MemoryReadStore()
    const docs = store.collection<{ _id: string; _position?: number; n: number }>('guarded')
    await applyAt(docs, 'a', 1, () => ({ _id: 'a', n: 1 }))
    const first = await docs.get('a')
    await applyAt(docs, 'a', 2, (current) => current)
    const frozen = Object.freeze({ _id: 'a', n: 3 })
    await applyAt(docs, 'a', 3, () => frozen)
    t.same(first, { _id: 'a', n: 1, _position: 1 }, 'the version handed out before stays as it was')
    t.same(frozen, { _id: 'a', n: 3 }, 'a frozen answer is copied, not stamped')
    t.same(await docs.get('a'), { _id: 'a', n: 3, _position: 3 })
    await applyAt(docs, 'a', 2, () => ({ _id: 'a', n: 99 }))
    t.same((await docs.get('a'))?.n, 3, 'an event at an older position changes nothing')
  })
})

t.test('embedded read store keeping sort orders from the first document', async (t) => {
  readStoreContract(t, async () => new MemoryReadStore({ orderedFrom: 0 }))
})

t.test('SQLite read store', async (t) => {
  const stores: ReadStore[] = []
  t.teardown(async () => { for (const s of stores) await s.close() })
  readStoreContract(t, async () => {
    const store = new SqliteReadStore({ file: ':memory:' })
    stores.push(store)
    return store
  })
})

const mongoUrl = process.env['MONGODB_URL']
t.test('MongoDB read store', { skip: mongoUrl === undefined ? 'MONGODB_URL is not set: no MongoDB server to run the contract against' : false }, async (t) => {
  const stores: ReadStore[] = []
  t.teardown(async () => { for (const s of stores) await s.close() })
  readStoreContract(t, async () => {
    const store = await MongoReadStore.connect(mongoUrl ?? '', `credit_test_${newId().slice(-8)}`)
    stores.push(store)
    return store
  })
})

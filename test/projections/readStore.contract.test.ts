import t from 'tap'
import { MemoryReadStore } from '../../src/projections/memoryStore.js'
import { MongoReadStore } from '../../src/projections/mongoStore.js'
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
    const store = await MongoReadStore.connect(mongoUrl ?? '', `credit_test_${newId().slice(0, 8)}`)
    stores.push(store)
    return store
  })
})

import path from 'node:path'
import t from 'tap'
import { EventStoreDbEventStore } from '../../src/events/eventstoredb.js'
import { SqliteEventStore } from '../../src/events/sqlite.js'
import type { EventStore } from '../../src/events/store.js'
import { eventStoreContract } from '../contracts/eventStore.js'
import { tempDir } from '../helpers/config.js'

t.test('embedded SQLite event store', async (t) => {
  const stores: EventStore[] = []
  t.teardown(async () => { for (const s of stores) await s.close() })
  const file = path.join(tempDir(), 'events.sqlite')
  eventStoreContract(t, async () => {
    const store = new SqliteEventStore({ file, synchronous: 'NORMAL' })
    stores.push(store)
    return store
  })
})

t.test('embedded SQLite event store committing in a writer thread', async (t) => {
  // One store for every test of the contract (their streams never collide): each store starts a writer thread, a third of a second.
  let store: SqliteEventStore | undefined
  t.teardown(async () => { await store?.close() })
  const file = path.join(tempDir(), 'events.sqlite')
  eventStoreContract(t, async () => {
    store ??= new SqliteEventStore({ file, synchronous: 'NORMAL', writer: 'worker' })
    return store
  })
})

t.test('embedded SQLite event store reading the log ahead in a thread for every subscription behind the head', async (t) => {
  const stores: EventStore[] = []
  t.teardown(async () => { for (const s of stores) await s.close() })
  const file = path.join(tempDir(), 'events.sqlite')
  eventStoreContract(t, async () => {
    const store = new SqliteEventStore({ file, synchronous: 'NORMAL', readAheadFrom: 1 })
    stores.push(store)
    return store
  })
})

const eventStoreUrl = process.env['EVENTSTORE_URL']
t.test('EventStoreDB event store', { skip: eventStoreUrl === undefined ? 'EVENTSTORE_URL is not set: no EventStoreDB server to run the contract against' : false }, async (t) => {
  const stores: EventStore[] = []
  t.teardown(async () => { for (const s of stores) await s.close() })
  eventStoreContract(t, async () => {
    const store = new EventStoreDbEventStore(eventStoreUrl ?? '')
    stores.push(store)
    return store
  })
})

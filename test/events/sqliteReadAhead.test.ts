import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import type { RecordedEvent } from '../../src/events/catalogue.js'
import { SqliteEventStore } from '../../src/events/sqlite.js'
import { LogReadAhead } from '../../src/events/sqliteReadAhead.js'
import { createRuntime } from '../../src/runtime.js'
import { loadConfig } from '../../src/shared/config.js'
import { newId } from '../../src/shared/ids.js'
import { tempDir, testConfig } from '../helpers/config.js'

const event = (n: number) => ({
  id: newId(), type: 'OrganizationRenamed', data: { organizationId: `o${n % 7}`, name: `Name "${n}" \\ ñ` },
  metadata: { organizationId: null, actorId: null, correlationId: `c${n}`, causationId: null, occurredAt: '2026-01-01T00:00:00.000Z', schemaVersion: 1 },
})

/** A store whose log holds `count` events over a few streams, read ahead by any subscription starting 100 or more behind. */
const seeded = async (count: number, dir = tempDir()) => {
  const file = path.join(dir, 'events.sqlite')
  const store = new SqliteEventStore({ file, pageSize: 50, readAheadFrom: 100 })
  const revisions = new Map<string, number>()
  for (let n = 0; n < count; n += 4) {
    const streamId = `organization-s${n % 9}`
    const result = await store.append(streamId, [event(n), event(n + 1), event(n + 2), event(n + 3)], revisions.get(streamId) ?? 'no_stream')
    revisions.set(streamId, result.revision)
  }
  return { store, file, dir }
}

const readInThread = async (store: SqliteEventStore) => {
  const events: RecordedEvent[] = []
  for await (const e of store.readAll()) events.push(e)
  return events
}


t.test('a subscription far behind the head reads ahead in a thread, yields what a read in the thread yields, then turns live', async (t) => {
  const { store } = await seeded(1_000)
  t.teardown(() => store.close())
  const expected = await readInThread(store)
  const subscription = store.subscribe(0)
  const received: RecordedEvent[] = []
  let threadsWhileReading = 0
  for await (const e of subscription) {
    received.push(e)
    if (received.length === 500) threadsWhileReading = store.readAheadThreads
    if (received.length === 1_000) break
  }
  t.equal(threadsWhileReading, 1, 'a reading thread ran while the log was caught up')
  t.same(received, expected, 'the same events, in log order, with the same fields')
  t.same(received.map((e) => Object.keys(e)), expected.map((e) => Object.keys(e)), 'and the same keys in the same order')

  const live = store.subscribe(received.at(-1)?.position ?? 0)
  const next = (async () => { for await (const e of live) return e.id; return undefined })()
  const appended = event(1_000)
  await store.append('organization-live', [appended], 'no_stream')
  t.equal(await next, appended.id, 'a subscription near the head reads in the thread, live')
  await live.close()
  await subscription.close()
  t.equal(store.readAheadThreads, 0, 'no reading thread is left')
})

t.test('a subscription from the head or to some types never starts a thread', async (t) => {
  const { store } = await seeded(400)
  t.teardown(() => store.close())
  const typed = store.subscribe(0, { types: ['OrganizationRenamed'] })
  let count = 0
  for await (const _ of typed) if (++count === 400) break
  t.equal(count, 400)
  t.equal(store.readAheadThreads, 0)
  await typed.close()
})

t.test('a subscription closed while reading ahead ends its thread, whoever stops pulling', async (t) => {
  const { store } = await seeded(2_000)
  const subscription = store.subscribe(0)
  let count = 0
  for await (const _ of subscription) if (++count === 120) break
  await subscription.close()
  const abandoned = store.subscribe(0)[Symbol.asyncIterator]()
  await abandoned.next()
  t.equal(store.readAheadThreads, 1, 'the second subscription reads ahead, and the first one\'s thread has ended')
  // Its consumer never pulls again: closing the store ends the subscription and its thread.
  await store.close()
  t.equal(store.readAheadThreads, 0)
})

t.test('when the thread cannot read the log, the subscription reads it itself', async (t) => {
  const { store, dir } = await seeded(1_000)
  t.teardown(() => store.close())
  const expected = await readInThread(store)
  // The store keeps its open connection; a new connection (the thread's) finds no file at the old path.
  fs.renameSync(dir, `${dir}-moved`)
  const subscription = store.subscribe(0)
  const received: RecordedEvent[] = []
  for await (const e of subscription) if (received.push(e) === 1_000) break
  await subscription.close()
  t.same(received, expected)
})

t.test('the read-ahead gives pages in order through the head it was given, and stops at it', async (t) => {
  const { store, file } = await seeded(1_000)
  t.teardown(() => store.close())
  const ahead = new LogReadAhead(file, 200, 700, 64)
  const positions: number[] = []
  for (let rows = await ahead.next(); rows !== null; rows = await ahead.next()) {
    t.ok(rows.length <= 64)
    positions.push(...rows.map((row) => row[0]))
  }
  await ahead.close()
  t.same(positions, Array.from({ length: 500 }, (_, i) => 201 + i))
  await t.rejects(new LogReadAhead(path.join(tempDir(), 'missing.sqlite'), 0, 10, 64).next(), 'a log it cannot open fails the read')
})

t.test('the service reads ahead from SQLITE_READ_AHEAD_FROM events behind, and never with 0', async (t) => {
  const threadsWhileCatchingUp = async (setting: string) => {
    const { store, dir } = await seeded(1_000)
    await store.close()
    const runtime = await createRuntime(testConfig({ dataDir: dir, sqliteReadAheadFrom: loadConfig({ SQLITE_READ_AHEAD_FROM: setting }).sqliteReadAheadFrom }))
    t.teardown(() => runtime.close())
    const eventStore = runtime.eventStore
    if (!(eventStore instanceof SqliteEventStore)) throw new Error('the embedded event store was expected')
    const subscription = eventStore.subscribe(0)
    let read = 0
    let threads = 0
    for await (const _ of subscription) if (++read === 500) { threads = eventStore.readAheadThreads; break }
    await subscription.close()
    return threads
  }
  t.ok(await threadsWhileCatchingUp('100') >= 1, 'a thread reads for the subscription 1,000 events behind')
  t.equal(await threadsWhileCatchingUp('0'), 0, 'none with 0, for any subscription')
})

import path from 'node:path'
import t from 'tap'
import type { RecordedEvent } from '../../src/events/catalogue.js'
import { SqliteEventStore } from '../../src/events/sqlite.js'
import { CommittedTail } from '../../src/events/sqliteTail.js'
import type { EventSubscription } from '../../src/events/store.js'
import { newId } from '../../src/shared/ids.js'
import { tempDir } from '../helpers/config.js'

const event = (type = 'OrganizationActivated') => ({
  id: newId(), type, data: { organizationId: 'o', nested: { kept: ['a', 'b'] } },
  metadata: { organizationId: null, actorId: null, correlationId: 'c', causationId: null, occurredAt: '2026-01-01T00:00:00.000Z', schemaVersion: 1 },
})

const recorded = (position: number, type = 'A') => ({ position, type })

const positions = (read: { events: Array<{ position: number }> } | null) => read?.events.map((e) => e.position) ?? null

/** The next `count` events of a subscription, leaving it open (a `break` out of `for await` would close it). */
const take = async (subscription: EventSubscription, count: number): Promise<RecordedEvent[]> => {
  const iterator = subscription[Symbol.asyncIterator]()
  const seen: RecordedEvent[] = []
  while (seen.length < count) {
    const next = await iterator.next()
    if (next.done === true) break
    seen.push(next.value)
  }
  return seen
}

t.test('the tail answers only for positions it holds the next event of, and starts again at a gap', async (t) => {
  const tail = new CommittedTail<{ position: number; type: string }>(8)
  t.equal(tail.after(0, null, 10), null, 'empty: read the log')
  for (const p of [5, 6, 7]) tail.add(recorded(p, p === 6 ? 'B' : 'A'))
  t.same(positions(tail.after(4, null, 10)), [5, 6, 7], 'from just before its first event')
  t.same(tail.after(3, null, 10), null, 'position 4 is not held: read the log')
  t.same(tail.after(5, new Set(['A']), 10), { events: [recorded(7)], through: 7 }, 'only the asked types, looking through the last')
  t.same(tail.after(7, null, 10), { events: [], through: 7 }, 'at its last: nothing newer here')
  t.equal(tail.after(8, null, 10), null, 'past its last: read the log')
  t.same(tail.after(4, null, 2), { events: [recorded(5), recorded(6, 'B')], through: 6 }, 'a limited read says how far it looked')
  tail.add(recorded(9))
  t.equal(tail.after(4, null, 10), null, 'a gap (8 committed elsewhere) drops what came before it')
  t.same(positions(tail.after(8, null, 10)), [9])
})

t.test('the tail keeps between its capacity and twice it, dropping the oldest', async (t) => {
  const tail = new CommittedTail<{ position: number; type: string }>(3)
  for (let p = 1; p <= 5; p++) tail.add(recorded(p))
  t.same(positions(tail.after(0, null, 10)), [1, 2, 3, 4, 5])
  tail.add(recorded(6))
  t.equal(tail.after(2, null, 10), null, 'the oldest were dropped')
  t.same(positions(tail.after(3, null, 10)), [4, 5, 6])
})

t.test('the tail keeps at most twice its byte budget, dropping the oldest down to it; an event larger than that is not kept', async (t) => {
  const tail = new CommittedTail<{ position: number; type: string }>(100, 1000)
  for (let p = 1; p <= 3; p++) tail.add(recorded(p), 600)
  t.same(positions(tail.after(0, null, 10)), [1, 2, 3], '1,800 bytes: under twice the budget')
  tail.add(recorded(4), 600)
  t.equal(tail.after(0, null, 10), null, 'past it, the oldest were dropped')
  t.same(positions(tail.after(3, null, 10)), [4], 'down to the budget: the newest that fit in it')
  tail.add(recorded(5), 5000)
  t.equal(tail.after(4, null, 10), null, 'an event past twice the budget leaves nothing: subscribers read the log')
  tail.add(recorded(6), 10)
  t.same(positions(tail.after(5, null, 10)), [6], 'and the tail goes on from the next')
})

t.test('live subscribers get what a read of the log gives, parsed once, frozen and shared between them', { timeout: 10_000 }, async (t) => {
  const store = new SqliteEventStore({ file: path.join(tempDir(), 'events.sqlite') })
  t.teardown(() => store.close())
  const first = store.subscribe(0)
  const second = store.subscribe(0)
  const seenByFirst = take(first, 4)
  const seenBySecond = take(second, 4)
  await Promise.all([store.append('organization-a', [event(), event()], 'no_stream'), store.append('organization-b', [event()], 'no_stream')])
  await store.append('organization-a', [event()], 1)
  const [a, b] = await Promise.all([seenByFirst, seenBySecond])
  const logged: RecordedEvent[] = []
  for await (const e of store.readAll()) logged.push(e)
  t.same(a, logged, 'the same events, fields and order as the log')
  t.ok(a.every((e, i) => e === b[i]), 'one object per event for every subscriber')
  t.ok(a.every((e) => Object.isFrozen(e) && Object.isFrozen(e.data) && Object.isFrozen(e.metadata)), 'frozen, so no subscriber can change it for another')
  await first.close()
  await second.close()
})

t.test('without a tail (recentEvents 0) every subscriber reads and parses the log itself', { timeout: 10_000 }, async (t) => {
  const store = new SqliteEventStore({ file: path.join(tempDir(), 'events.sqlite'), recentEvents: 0 })
  t.teardown(() => store.close())
  const first = store.subscribe(0)
  const second = store.subscribe(0)
  const seen = Promise.all([take(first, 2), take(second, 2)])
  await store.append('organization-a', [event(), event()], 'no_stream')
  const [a, b] = await seen
  t.same(a, b)
  t.ok(a.every((e, i) => e !== b[i] && !Object.isFrozen(e)))
  await first.close()
  await second.close()
})

t.test('events another connection commits between or after this store\'s commits reach its subscribers in log order', { timeout: 10_000 }, async (t) => {
  const file = path.join(tempDir(), 'events.sqlite')
  const store = new SqliteEventStore({ file, pollIntervalMs: 20 })
  const otherProcess = new SqliteEventStore({ file })
  t.teardown(async () => { await store.close(); await otherProcess.close() })
  const subscription = store.subscribe(0)
  await store.append('organization-1', [event()], 'no_stream')
  t.same((await take(subscription, 1)).map((e) => e.streamId), ['organization-1'], 'from the tail')
  await otherProcess.append('organization-2', [event()], 'no_stream')
  await store.append('organization-3', [event()], 'no_stream')
  t.same((await take(subscription, 2)).map((e) => e.streamId), ['organization-2', 'organization-3'], 'the gap is read from the log')
  await otherProcess.append('organization-4', [event()], 'no_stream')
  t.same((await take(subscription, 1)).map((e) => e.streamId), ['organization-4'], 'a commit after the tail\'s last is found by polling')
  await store.append('organization-5', [event()], 'no_stream')
  t.same((await take(subscription, 1)).map((e) => [e.streamId, e.position]), [['organization-5', 5]])
  await subscription.close()
})

t.test('a re-sent append reaches subscribers once', { timeout: 10_000 }, async (t) => {
  const store = new SqliteEventStore({ file: path.join(tempDir(), 'events.sqlite') })
  t.teardown(() => store.close())
  const subscription = store.subscribe(0)
  const sent = [event()]
  await store.append('organization-once', sent, 'no_stream')
  await store.append('organization-once', sent, 'no_stream')
  await store.append('organization-then', [event()], 'no_stream')
  t.same((await take(subscription, 2)).map((e) => [e.streamId, e.position]), [['organization-once', 1], ['organization-then', 2]])
  await subscription.close()
})

t.test('a subscriber further behind than the tail reads the log, then joins the tail', { timeout: 10_000 }, async (t) => {
  const store = new SqliteEventStore({ file: path.join(tempDir(), 'events.sqlite'), recentEvents: 4, pageSize: 3 })
  t.teardown(() => store.close())
  for (let i = 0; i < 20; i++) await store.append(`organization-${i}`, [event(i % 2 === 0 ? 'A' : 'B')], 'no_stream')
  const all = store.subscribe(0)
  const typed = store.subscribe(0, { types: ['A'] })
  t.same((await take(all, 20)).map((e) => e.position), Array.from({ length: 20 }, (_, i) => i + 1))
  t.same((await take(typed, 10)).map((e) => e.position), Array.from({ length: 10 }, (_, i) => 2 * i + 1))
  const live = Promise.all([take(all, 2), take(typed, 1)])
  await store.append('organization-live', [event('B'), event('A')], 'no_stream')
  const [fromAll, fromTyped] = await live
  t.same(fromAll.map((e) => e.position), [21, 22])
  t.same(fromTyped.map((e) => [e.position, e.type]), [[22, 'A']])
  t.equal(fromTyped[0], fromAll[1], 'live events come from the tail')
  await all.close()
  await typed.close()
})

import path from 'node:path'
import t from 'tap'
import { SqliteEventStore } from '../../src/events/sqlite.js'
import { newId } from '../../src/shared/ids.js'
import { tempDir } from '../helpers/config.js'

const event = () => ({
  id: newId(), type: 'OrganizationActivated', data: { organizationId: 'o' },
  metadata: { organizationId: null, actorId: null, correlationId: 'c', causationId: null, occurredAt: '2026-01-01T00:00:00.000Z', schemaVersion: 1 },
})

t.test('keeps every appended event across a reopen, with the same positions', async (t) => {
  const file = path.join(tempDir(), 'events.sqlite')
  const first = new SqliteEventStore({ file })
  const appended = await first.append('organization-x', [event(), event()], 'no_stream')
  await first.close()
  const second = new SqliteEventStore({ file })
  t.teardown(() => second.close())
  t.equal(await second.headPosition(), appended.position)
  t.equal(await second.streamRevision('organization-x'), 1)
  const next = await second.append('organization-x', [event()], 1)
  t.ok(next.position > appended.position, 'positions keep growing after a reopen')
})

t.test('a subscription sees events another process appends to the same file', async (t) => {
  const file = path.join(tempDir(), 'events.sqlite')
  const reader = new SqliteEventStore({ file, pollIntervalMs: 20 })
  const writer = new SqliteEventStore({ file })
  t.teardown(async () => { await reader.close(); await writer.close() })
  const subscription = reader.subscribe(0)
  const first = (async () => {
    for await (const e of subscription) return e.streamId
    return undefined
  })()
  await writer.append('organization-y', [event()], 'no_stream')
  t.equal(await first, 'organization-y', 'picked up by polling, not by an in-process signal')
  await subscription.close()
})

t.test('appends in the same turn share a commit, yet a refused or failing one changes nothing and spares the others', async (t) => {
  const store = new SqliteEventStore({ file: path.join(tempDir(), 'events.sqlite') })
  t.teardown(() => store.close())
  const taken = event()
  await store.append('organization-taken', [taken], 'no_stream')
  const good = Array.from({ length: 40 }, (_, i) => store.append(`organization-g${i}`, [event(), event()], 'no_stream'))
  const wrongRevision = store.append('organization-taken', [event()], 7)
  // The second event reuses an existing id: the insert fails after the first event was written in the savepoint.
  const halfFailing = store.append('organization-half', [event(), { ...event(), id: taken.id }], 'no_stream')
  const results = await Promise.allSettled([...good, wrongRevision, halfFailing])
  t.equal(results.slice(0, 40).filter((r) => r.status === 'fulfilled').length, 40, 'every valid append went through')
  t.equal(results[40]?.status, 'rejected')
  t.equal(results[41]?.status, 'rejected')
  t.equal(await store.streamRevision('organization-half'), 'no_stream', 'nothing of the failing append remains')
  t.equal(await store.streamRevision('organization-taken'), 0)
  t.equal(await store.streamRevision('organization-g39'), 1)
})

t.test('a subscription by types yields only those types, in log order, from the stored ones to the live ones', async (t) => {
  const store = new SqliteEventStore({ file: path.join(tempDir(), 'events.sqlite'), pageSize: 2 })
  t.teardown(() => store.close())
  const typed = (type: string) => ({ ...event(), type })
  for (const [i, type] of ['A', 'B', 'B', 'B', 'A', 'B', 'B'].entries()) await store.append(`organization-${i}`, [typed(type)], 'no_stream')
  const subscription = store.subscribe(0, { types: ['A'] })
  const seen: string[] = []
  const done = (async () => {
    for await (const e of subscription) {
      seen.push(e.streamId)
      if (seen.length === 3) return
    }
  })()
  await store.append('organization-live-b', [typed('B')], 'no_stream')
  await store.append('organization-live-a', [typed('A')], 'no_stream')
  await done
  await subscription.close()
  t.same(seen, ['organization-0', 'organization-4', 'organization-live-a'])
})

t.test('vouches for a stream\'s last revision only while no other connection has written', async (t) => {
  const file = path.join(tempDir(), 'events.sqlite')
  const store = new SqliteEventStore({ file })
  const otherProcess = new SqliteEventStore({ file })
  t.teardown(async () => { await store.close(); await otherProcess.close() })
  await store.append('organization-k', [event(), event()], 'no_stream')
  t.ok(store.knownCurrent('organization-k', 1), 'its own append')
  t.notOk(store.knownCurrent('organization-k', 0), 'an older revision is not current')
  t.notOk(store.knownCurrent('organization-unknown', 0), 'a stream it never saw')
  await otherProcess.append('organization-elsewhere', [event()], 'no_stream')
  t.notOk(store.knownCurrent('organization-k', 1), 'after another connection committed, even to another stream, it does not know')
  for await (const read of store.readStream('organization-k')) t.equal(read.streamId, 'organization-k')
  t.ok(store.knownCurrent('organization-k', 1), 'reading the stream to its end makes it known again')
  await t.rejects(store.append('organization-k', [event()], 0))
  t.notOk(store.knownCurrent('organization-k', 1), 'a refused append forgets what it knew')
})

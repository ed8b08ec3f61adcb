import { firstValueFrom, take, toArray } from 'rxjs'
import type { Test } from 'tap'
import type { RecordedEvent } from '../../src/events/catalogue.js'
import { WrongExpectedRevisionError, type EventStore } from '../../src/events/store.js'
import type { NewEvent } from '../../src/events/types.js'
import { newId } from '../../src/shared/ids.js'

const event = (name: string, extra: Partial<NewEvent['metadata']> = {}): NewEvent => ({
  id: newId(),
  type: 'OrganizationRenamed',
  data: { organizationId: 'o', name },
  metadata: {
    organizationId: 'org-1', actorId: 'actor-1', correlationId: 'corr-1', causationId: null,
    occurredAt: '2026-01-01T00:00:00.000Z', schemaVersion: 1, ...extra,
  },
})

const collect = async (iterable: AsyncIterable<RecordedEvent>) => {
  const out: RecordedEvent[] = []
  for await (const e of iterable) out.push(e)
  return out
}

const nameOf = (e: RecordedEvent) => (e.type === 'OrganizationRenamed' ? e.data.name : '?')

/**
 * The behaviour every EventStore adapter must share. `open` gives a store
 * whose streams do not collide with other runs (stream names are random).
 */
export const eventStoreContract = (t: Test, open: () => Promise<EventStore>) => {
  const stream = () => `organization-${newId()}`

  t.test('appends to a new stream with no_stream and numbers events from revision 0', async (t) => {
    const store = await open()
    const s = stream()
    const result = await store.append(s, [event('a'), event('b')], 'no_stream')
    t.equal(result.revision, 1)
    const events = await collect(store.readStream(s))
    t.same(events.map((e) => e.revision), [0, 1])
    t.same(events.map(nameOf), ['a', 'b'])
    t.ok((events[0]?.position ?? 0) < (events[1]?.position ?? 0), 'positions grow')
    t.equal(result.position, events[1]?.position, 'append reports the position of its last event')
  })

  t.test('keeps metadata and ids exactly', async (t) => {
    const store = await open()
    const s = stream()
    const sent = event('a', { causationId: 'cause-1', schemaVersion: 1 })
    await store.append(s, [sent], 'no_stream')
    const [read] = await collect(store.readStream(s))
    t.equal(read?.id, sent.id)
    t.equal(read?.streamId, s)
    t.same(read?.metadata, sent.metadata)
  })

  t.test('rejects a wrong expected revision like EventStoreDB', async (t) => {
    const store = await open()
    const s = stream()
    await store.append(s, [event('a')], 'no_stream')
    await t.rejects(store.append(s, [event('b')], 'no_stream'), WrongExpectedRevisionError, 'no_stream on an existing stream')
    await t.rejects(store.append(s, [event('b')], 5), WrongExpectedRevisionError, 'a revision the stream is not at')
    await t.rejects(store.append(stream(), [event('b')], 'stream_exists'), WrongExpectedRevisionError, 'stream_exists on a missing stream')
    await t.rejects(store.append(stream(), [event('b')], 0), WrongExpectedRevisionError, 'an exact revision on a missing stream')
    const after = await collect(store.readStream(s))
    t.equal(after.length, 1, 'nothing was appended by the refused calls')
    t.equal((await store.append(s, [event('b')], 0)).revision, 1, 'the right revision appends')
    t.equal((await store.append(s, [event('c')], 'any')).revision, 2, 'any appends')
    t.equal((await store.append(s, [event('d')], 'stream_exists')).revision, 3, 'stream_exists appends')
  })

  t.test('lets exactly one of two concurrent appends at the same revision through', async (t) => {
    const store = await open()
    const s = stream()
    await store.append(s, [event('a')], 'no_stream')
    const results = await Promise.allSettled([store.append(s, [event('x')], 0), store.append(s, [event('y')], 0)])
    t.equal(results.filter((r) => r.status === 'fulfilled').length, 1)
    t.equal(results.filter((r) => r.status === 'rejected' && r.reason instanceof WrongExpectedRevisionError).length, 1)
  })

  t.test('treats a re-sent append with the same event ids as already done', async (t) => {
    const store = await open()
    const s = stream()
    const batch = [event('a'), event('b')]
    const first = await store.append(s, batch, 'no_stream')
    const again = await store.append(s, batch, 'no_stream')
    t.same(again, first)
    t.equal((await collect(store.readStream(s))).length, 2)
  })

  t.test('reads a stream backwards, from a revision, and a bounded count', async (t) => {
    const store = await open()
    const s = stream()
    await store.append(s, ['a', 'b', 'c', 'd'].map((n) => event(n)), 'no_stream')
    t.same((await collect(store.readStream(s, { direction: 'backwards' }))).map(nameOf), ['d', 'c', 'b', 'a'])
    t.same((await collect(store.readStream(s, { fromRevision: 2 }))).map(nameOf), ['c', 'd'])
    t.same((await collect(store.readStream(s, { direction: 'backwards', fromRevision: 1 }))).map(nameOf), ['b', 'a'])
    t.same((await collect(store.readStream(s, { maxCount: 2 }))).map(nameOf), ['a', 'b'])
    t.same(await collect(store.readStream(stream())), [], 'a missing stream reads as empty')
  })

  t.test('reads the global log from a position, forwards and backwards', async (t) => {
    const store = await open()
    const before = await store.headPosition()
    const s = stream()
    await store.append(s, [event('a'), event('b'), event('c')], 'no_stream')
    const mine = (events: RecordedEvent[]) => events.filter((e) => e.streamId === s).map(nameOf)
    t.same(mine(await collect(store.readAll({ after: before }))), ['a', 'b', 'c'])
    const all = await collect(store.readAll({ after: before }))
    const second = all.find((e) => e.streamId === s && nameOf(e) === 'b')
    t.same(mine(await collect(store.readAll({ after: second?.position ?? 0 }))), ['c'], 'after is exclusive')
    t.same(mine(await collect(store.readAll({ direction: 'backwards', maxCount: 3 }))), ['c', 'b', 'a'])
    t.equal(await store.headPosition(), all[all.length - 1]?.position, 'head is the last position')
  })

  t.test('reports stream revisions', async (t) => {
    const store = await open()
    const s = stream()
    t.equal(await store.streamRevision(s), 'no_stream')
    await store.append(s, [event('a'), event('b')], 'no_stream')
    t.equal(await store.streamRevision(s), 1)
  })

  t.test('a subscription catches up from a checkpoint and then turns live', async (t) => {
    const store = await open()
    const s = stream()
    const checkpoint = await store.headPosition()
    await store.append(s, [event('a'), event('b')], 'no_stream')
    const subscription = store.subscribe(checkpoint)
    const seen: string[] = []
    const done = (async () => {
      for await (const e of subscription) {
        if (e.streamId !== s) continue
        seen.push(nameOf(e))
        if (seen.length === 3) break
      }
    })()
    await new Promise((resolve) => setTimeout(resolve, 50))
    await store.append(s, [event('c')], 1)
    await done
    await subscription.close()
    t.same(seen, ['a', 'b', 'c'], 'events after the checkpoint, then the live one')
  })

  t.test('the Observable form delivers catch-up and live events and stops when unsubscribed', async (t) => {
    const store = await open()
    const head = await store.headPosition()
    const s = stream()
    const received = firstValueFrom(store.subscribeToAll(head).pipe(take(2), toArray()))
    await store.append(s, [event('live-1')], 'no_stream')
    await store.append(s, [event('live-2')], 0)
    t.same((await received).map(nameOf), ['live-1', 'live-2'])
  })
}

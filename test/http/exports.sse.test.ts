import { PassThrough } from 'node:stream'
import { EventSource } from 'eventsource'
import t from 'tap'
import { ManualClock } from '../../src/shared/clock.js'
import { SseChannel } from '../../src/http/exportStream.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { createOrganization, fixtureDataSet, jobSettled, memberToken, postExport } from '../helpers/exports.js'

interface Update { id: string; status: string; type: string; progress: { rows: number; totalRows: number | null; percent: number | null } }
interface Received { eventId: string; update: Update }

/** An EventSource client over real HTTP, collecting `export.updated` events. */
const subscribe = (base: string, token: string, organizationId: string, options: { path?: string; lastEventId?: string } = {}) => {
  const received: Received[] = []
  const waiters: Array<{ test: (r: Received[]) => boolean; resolve: () => void }> = []
  const source = new EventSource(`${base}${options.path ?? '/v1/exports/sse'}`, {
    fetch: (url, init) => fetch(url, {
      ...init,
      headers: { ...init.headers, authorization: `Bearer ${token}`, 'organization-id': organizationId, ...(options.lastEventId === undefined ? {} : { 'last-event-id': options.lastEventId }) },
    }),
  })
  source.addEventListener('export.updated', (event) => {
    received.push({ eventId: event.lastEventId, update: JSON.parse(event.data) })
    for (const waiter of [...waiters]) {
      if (waiter.test(received)) {
        waiters.splice(waiters.indexOf(waiter), 1)
        waiter.resolve()
      }
    }
  })
  const opened = new Promise<void>((resolve, reject) => {
    source.onopen = () => resolve()
    source.onerror = (error) => reject(new Error(`event stream failed: ${error.code ?? ''} ${error.message ?? ''}`))
  })
  const until = (test: (r: Received[]) => boolean) =>
    test(received) ? Promise.resolve() : new Promise<void>((resolve) => { waiters.push({ test, resolve }) })
  return { source, received, opened, until }
}

const listen = async (t: Parameters<typeof createTestApp>[0], options: { heartbeatMs?: number } = {}) => {
  const clock = new ManualClock('2026-03-10T09:00:00.000Z')
  const svc = await createTestApp(t, {
    clock,
    config: { exportsSseHeartbeatMs: options.heartbeatMs ?? 60_000, exportsProgressEveryRows: 2 },
    beforeStart: (runtime) => runtime.exports.dataSets.register(fixtureDataSet('receivables', 5)),
  })
  const address = await svc.app.listen({ port: 0, host: '127.0.0.1' })
  return { svc, address }
}

const doneOf = (id: string) => (received: Received[]) => received.some((r) => r.update.id === id && r.update.status === 'done')

const exportOf = async (svc: TestApp, organizationId: string) => {
  const id: string = (await postExport(svc, { type: 'receivables' }, { organizationId })).json().data.orderID
  await jobSettled(svc.runtime, id)
  return id
}

t.test('subscribers get their own organization\'s export.updated events, in order, with ids', async (t) => {
  const { svc, address } = await listen(t)
  const other = await createOrganization(svc, 'Other lender')
  const mine = subscribe(address, await memberToken(svc, svc.organizationId, ['ReadExport', 'ReadOrder']), svc.organizationId)
  const theirs = subscribe(address, await memberToken(svc, other, ['ReadExport', 'ReadOrder']), other)
  t.teardown(() => { mine.source.close(); theirs.source.close() })
  await Promise.all([mine.opened, theirs.opened])

  const id = await exportOf(svc, svc.organizationId)
  await mine.until(doneOf(id))
  const otherId = await exportOf(svc, other)
  await theirs.until(doneOf(otherId))

  t.same(mine.received.map((r) => r.update.status), ['queued', 'running', 'running', 'running', 'running', 'done'])
  t.same(mine.received[0]?.update, { id, status: 'queued', type: 'receivables', progress: { rows: 0, totalRows: null, percent: null } })
  t.same(mine.received.at(-1)?.update, { id, status: 'done', type: 'receivables', progress: { rows: 5, totalRows: 5, percent: 100 } })
  t.same(mine.received.map((r) => r.update.progress.rows), [0, 0, 0, 2, 4, 5])
  const ids = mine.received.map((r) => Number(r.eventId))
  t.ok(ids.every((n, i) => Number.isInteger(n) && (i === 0 || n > (ids[i - 1] ?? 0))), 'ids are increasing global positions')
  t.ok(mine.received.every((r) => r.update.id === id), 'no event of the other organization')
  t.ok(theirs.received.every((r) => r.update.id === otherId), 'and none of ours there')
})

t.test('a client reconnecting with Last-Event-ID gets what it missed, then live events', async (t) => {
  const { svc, address } = await listen(t)
  const token = await memberToken(svc, svc.organizationId, ['ReadExport', 'ReadOrder'])
  const first = subscribe(address, token, svc.organizationId)
  await first.opened
  const seen = await exportOf(svc, svc.organizationId)
  await first.until(doneOf(seen))
  const lastEventId = first.received.at(-1)?.eventId ?? ''
  first.source.close()

  const missed = await exportOf(svc, svc.organizationId)
  const again = subscribe(address, token, svc.organizationId, { lastEventId })
  t.teardown(() => again.source.close())
  await again.opened
  await again.until(doneOf(missed))
  t.same(again.received[0]?.update, { id: missed, status: 'done', type: 'receivables', progress: { rows: 5, totalRows: 5, percent: 100 } },
    'the current state of the job that changed while away')
  t.notOk(again.received.some((r) => r.update.id === seen), 'nothing it had already seen')
  const live = await exportOf(svc, svc.organizationId)
  await again.until(doneOf(live))
  t.ok(again.received.some((r) => r.update.id === live && r.update.status === 'queued'), 'then live events')
})

t.test('the stream is text/event-stream with a heartbeat comment; it needs ReadExport and ReadOrder', async (t) => {
  const { svc, address } = await listen(t, { heartbeatMs: 20 })
  const token = await memberToken(svc, svc.organizationId, ['ReadExport', 'ReadOrder'])
  const response = await fetch(`${address}/v1/exports/sse`, { headers: { authorization: `Bearer ${token}`, 'organization-id': svc.organizationId } })
  t.equal(response.status, 200)
  t.equal(response.headers.get('content-type'), 'text/event-stream; charset=utf-8')
  t.equal(response.headers.get('cache-control'), 'no-cache, no-transform')
  const reader = response.body?.getReader()
  let text = ''
  while (reader !== undefined && !text.includes(': heartbeat\n\n')) {
    const chunk = await reader.read()
    if (chunk.done) break
    text += Buffer.from(chunk.value).toString('utf8')
  }
  await reader?.cancel()
  t.match(text, /^retry: 5000\n\n/)
  t.match(text, /: heartbeat\n\n/)

  const noOrder = await memberToken(svc, svc.organizationId, ['ReadExport'])
  const refused = await fetch(`${address}/v1/exports/sse`, { headers: { authorization: `Bearer ${noOrder}`, 'organization-id': svc.organizationId } })
  t.equal(refused.status, 403)
  t.match(await refused.json(), { data: { code: 'FORBIDDEN', permission: 'ReadOrder' } })
})

t.test('the legacy stream sends the same events, with deprecation headers', async (t) => {
  const { svc, address } = await listen(t)
  const token = await memberToken(svc, svc.organizationId, ['ReadExport', 'ReadOrder'])
  const legacy = subscribe(address, token, svc.organizationId, { path: '/v1/export/orders/receivables/sse' })
  const canonical = subscribe(address, token, svc.organizationId)
  t.teardown(() => { legacy.source.close(); canonical.source.close() })
  await Promise.all([legacy.opened, canonical.opened])
  const id = await exportOf(svc, svc.organizationId)
  await Promise.all([legacy.until(doneOf(id)), canonical.until(doneOf(id))])
  t.same(legacy.received, canonical.received)
  const raw = await fetch(`${address}/v1/export/orders/receivables/sse`, { headers: { authorization: `Bearer ${token}`, 'organization-id': svc.organizationId } })
  t.equal(raw.headers.get('deprecation'), 'true')
  t.equal(raw.headers.get('link'), '</v1/exports/sse>; rel="successor-version"')
  await raw.body?.cancel()
})

t.test('the stream ends when the server closes', async (t) => {
  const { svc, address } = await listen(t)
  const response = await fetch(`${address}/v1/exports/sse`, { headers: { authorization: `Bearer ${svc.adminToken}`, 'organization-id': svc.organizationId } })
  const reader = response.body?.getReader()
  const closing = svc.close()
  let done = false
  while (reader !== undefined && !done) done = (await reader.read()).done
  await closing
  t.ok(done, 'the response ended')
})

t.test('a client that cannot keep up is dropped instead of buffered', async (t) => {
  const unread = new PassThrough({ highWaterMark: 64 })
  let dropped = 0
  const channel = new SseChannel(unread, 1024, () => { dropped += 1 })
  let sent = 0
  while (channel.send(sent + 1, 'export.updated', { id: 'x', status: 'running', payload: 'y'.repeat(100) })) sent += 1
  t.ok(channel.isClosed, 'the channel closed itself')
  t.equal(dropped, 1)
  t.ok(sent < 20, `${sent} events were buffered before the drop`)
  t.ok(unread.writableLength < 1024 + 200, 'the buffer stayed bounded')
})

import { PassThrough } from 'node:stream'
import { EventSource } from 'eventsource'
import { filter, firstValueFrom } from 'rxjs'
import t from 'tap'
import { organizationAggregate } from '../../src/commands/organization.js'
import { defineDataSet, type DataSet } from '../../src/exports/dataSets.js'
import { ManualClock } from '../../src/shared/clock.js'
import { SseChannel } from '../../src/http/exportStream.js'
import { ExportJobError } from '../../src/processes/exportRunner.js'
import type { Runtime } from '../../src/runtime.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { createOrganization, fixtureColumns, fixtureDataSet, fixtureRow, jobEvent, jobSettled, memberToken, postExport } from '../helpers/exports.js'
import { addClient, addMember, roleTemplateWith } from '../helpers/members.js'

interface Update {
  id: string; status: string; type: string; progress: { rows: number; totalRows: number | null; percent: number | null }; error?: string; expiredAt?: string
}
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

const listen = async (
  t: Parameters<typeof createTestApp>[0],
  options: { heartbeatMs?: number; progressEveryRows?: number; dataSets?: (runtime: Runtime) => DataSet[] } = {},
) => {
  const clock = new ManualClock('2026-03-10T09:00:00.000Z')
  const svc = await createTestApp(t, {
    clock,
    config: { exportsSseHeartbeatMs: options.heartbeatMs ?? 60_000, exportsProgressEveryRows: options.progressEveryRows ?? 2 },
    beforeStart: (runtime) => {
      runtime.exports.dataSets.register(fixtureDataSet('receivables', 5))
      for (const dataSet of options.dataSets?.(runtime) ?? []) runtime.exports.dataSets.register(dataSet)
    },
  })
  const address = await svc.app.listen({ port: 0, host: '127.0.0.1' })
  return { svc, clock, address }
}

/** What a member needs to follow the stream and see receivables jobs on it. */
const FOLLOWER = ['ReadExport', 'ReadOrder', 'ReadReceivables'] as const
const LEGACY_SSE = '/v1/export/orders/receivables/sse'

const doneOf = (id: string) => (received: Received[]) => received.some((r) => r.update.id === id && r.update.status === 'done')

const exportOf = async (svc: TestApp, organizationId: string) => {
  const id: string = (await postExport(svc, { type: 'receivables' }, { organizationId })).json().data.orderID
  await jobSettled(svc.runtime, id)
  return id
}

t.test('subscribers get their own organization\'s export.updated events, in order, with ids', async (t) => {
  const { svc, address } = await listen(t)
  const other = await createOrganization(svc, 'Other lender')
  const mine = subscribe(address, await memberToken(svc, svc.organizationId, FOLLOWER), svc.organizationId)
  const theirs = subscribe(address, await memberToken(svc, other, FOLLOWER), other)
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
  const token = await memberToken(svc, svc.organizationId, FOLLOWER)
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
  const token = await memberToken(svc, svc.organizationId, FOLLOWER)
  const legacy = subscribe(address, token, svc.organizationId, { path: LEGACY_SSE })
  const canonical = subscribe(address, token, svc.organizationId)
  t.teardown(() => { legacy.source.close(); canonical.source.close() })
  await Promise.all([legacy.opened, canonical.opened])
  const id = await exportOf(svc, svc.organizationId)
  await Promise.all([legacy.until(doneOf(id)), canonical.until(doneOf(id))])
  t.same(legacy.received, canonical.received)
  const raw = await fetch(`${address}${LEGACY_SSE}`, { headers: { authorization: `Bearer ${token}`, 'organization-id': svc.organizationId } })
  t.equal(raw.headers.get('deprecation'), 'true')
  t.equal(raw.headers.get('link'), '</v1/exports/sse>; rel="successor-version"')
  await raw.body?.cancel()
})

t.test('the stream and its catch-up carry only jobs of the types GET /v1/exports lists to the caller', async (t) => {
  const { svc, address } = await listen(t, { dataSets: () => [fixtureDataSet('debtors', 3)] })
  const token = await memberToken(svc, svc.organizationId, FOLLOWER)
  const live = subscribe(address, token, svc.organizationId)
  const legacy = subscribe(address, token, svc.organizationId, { path: LEGACY_SSE })
  t.teardown(() => { live.source.close(); legacy.source.close() })
  await Promise.all([live.opened, legacy.opened])
  const debtors: string = (await postExport(svc, { type: 'debtors' })).json().data.orderID
  await jobSettled(svc.runtime, debtors)
  const receivables = await exportOf(svc, svc.organizationId)
  await Promise.all([live.until(doneOf(receivables)), legacy.until(doneOf(receivables))])

  const listed = await svc.call({ method: 'GET', url: '/v1/exports', token, organizationId: svc.organizationId })
  t.same(listed.json().data.map((job: { orderID: string }) => job.orderID), [receivables], 'the list hides the debtors job (ReadChildEntity)')
  t.same([...new Set(live.received.map((r) => r.update.id))], [receivables], 'so do live events')
  t.same([...new Set(legacy.received.map((r) => r.update.id))], [receivables], 'and the legacy stream')
  const again = subscribe(address, token, svc.organizationId, { lastEventId: '0' })
  t.teardown(() => again.source.close())
  await again.opened
  await again.until(doneOf(receivables))
  t.same(again.received.map((r) => r.update.id), [receivables], 'and the Last-Event-ID catch-up')
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
  t.ok(unread.destroyed, 'the stream is destroyed, not ended behind the unread bytes')
  t.notOk(channel.send(sent + 2, 'export.updated', {}), 'nothing more is written')
})

const RETENTION_END = '2026-03-17T09:00:00.000Z'

/** A job done and then expired with its file deleted by the expiry job, followed live by a member. */
const expiredWhileFollowed = async (t: Parameters<typeof createTestApp>[0]) => {
  const { svc, clock, address } = await listen(t)
  const live = subscribe(address, await memberToken(svc, svc.organizationId, FOLLOWER), svc.organizationId)
  t.teardown(() => live.source.close())
  await live.opened
  const id = await exportOf(svc, svc.organizationId)
  await live.until(doneOf(id))
  const doneEventId = live.received.at(-1)?.eventId ?? ''
  clock.set('2026-03-17T09:10:00.000Z')
  const expired = jobEvent(svc.runtime, id, 'ExportExpired')
  const deleted = jobEvent(svc.runtime, id, 'ExportFileDeleted')
  await svc.runtime.scheduler.runNow('exportExpiry')
  const [expiredAt, deletedAt] = (await Promise.all([expired, deleted])).map((event) => String(event.position))
  await live.until((received) => received.some((r) => r.eventId === deletedAt))
  // Tokens live an hour on the moved clock: get one valid now.
  const token = await svc.clientToken(svc.config.adminClientId ?? '', svc.config.adminClientSecret ?? '')
  const job = await svc.call({ method: 'GET', url: `/v1/exports/${id}`, token, organizationId: svc.organizationId })
  return { svc, address, id, live, token, doneEventId, job: job.json().data, expired: live.received.find((r) => r.eventId === expiredAt),
    deleted: live.received.find((r) => r.eventId === deletedAt) }
}

t.test('a live client sees an expired job keep its rows and learns when it expired', async (t) => {
  const { id, job, expired } = await expiredWhileFollowed(t)
  t.same(expired?.update, { id, status: 'done', type: 'receivables', progress: { rows: 5, totalRows: 5, percent: 100 }, expiredAt: RETENTION_END })
  t.same(expired?.update.progress, job.progress, 'the rows GET /v1/exports/{id} shows')
  t.equal(job.expiredAt, RETENTION_END)
})

t.test('a live client sees a job whose file was deleted keep its rows and its expiry, as a reconnecting client does', async (t) => {
  const { svc, address, id, live, token, doneEventId, deleted } = await expiredWhileFollowed(t)
  t.same(deleted?.update, { id, status: 'done', type: 'receivables', progress: { rows: 5, totalRows: 5, percent: 100 }, expiredAt: RETENTION_END })
  t.same(live.received.map((r) => r.update.status), ['queued', 'running', 'running', 'running', 'running', 'done', 'done', 'done'])

  const again = subscribe(address, token, svc.organizationId, { lastEventId: doneEventId })
  t.teardown(() => again.source.close())
  await again.opened
  await again.until((received) => received.length > 0)
  t.same(again.received[0], deleted, 'the catch-up sends the same id and data')
})

t.test('a failed job\'s live event shows the rows it had written, as the read model has them', async (t) => {
  const failAfterProgress = (runtime: Runtime) => defineDataSet({
    type: 'payments',
    description: 'fails once 200 rows are recorded',
    columns: fixtureColumns,
    async *rows(_body, context) {
      const recorded = firstValueFrom(runtime.hub.events$.pipe(filter((event) => event.type === 'ExportProgressed' && event.data.rows === 200)))
      // A full batch reaches the runner, which records progress at 100 and 200 rows, before the source breaks.
      for (let i = 0; i < 256; i++) yield fixtureRow(i, context.organizationId)
      await recorded
      throw new ExportJobError('the source went away')
    },
    async count() {
      return 300
    },
  })
  const { svc, address } = await listen(t, { progressEveryRows: 100, dataSets: (runtime) => [failAfterProgress(runtime)] })
  const live = subscribe(address, await memberToken(svc, svc.organizationId, FOLLOWER), svc.organizationId)
  t.teardown(() => live.source.close())
  await live.opened
  const id: string = (await postExport(svc, { type: 'payments' })).json().data.orderID
  const doc = await jobSettled(svc.runtime, id)
  t.equal(doc.status, 'failed')
  await live.until((received) => received.some((r) => r.update.status === 'failed'))

  const failed = live.received.at(-1)
  t.same(failed?.update, {
    id, status: 'failed', type: 'payments', progress: { rows: 200, totalRows: 300, percent: 66 }, error: 'the source went away',
  })
  const job = await svc.call({ method: 'GET', url: `/v1/exports/${id}`, token: svc.adminToken, organizationId: svc.organizationId })
  t.same(failed?.update.progress, job.json().data.progress, 'the progress GET /v1/exports/{id} shows')
})

t.test('a live event waiting on a slow read model is not overtaken by later events', async (t) => {
  const { svc, clock, address } = await listen(t)
  const live = subscribe(address, await memberToken(svc, svc.organizationId, FOLLOWER), svc.organizationId)
  t.teardown(() => live.source.close())
  await live.opened
  const first = await exportOf(svc, svc.organizationId)
  await live.until(doneOf(first))

  const jobs = svc.runtime.queries.exportJobs
  const get = jobs.get
  jobs.get = async (organizationId, orderId) => {
    await new Promise((resolve) => setTimeout(resolve, 300))
    return get(organizationId, orderId)
  }
  t.teardown(() => { jobs.get = get })
  clock.set('2026-03-17T09:10:00.000Z')
  const deleted = jobEvent(svc.runtime, first, 'ExportFileDeleted')
  await svc.runtime.scheduler.runNow('exportExpiry')
  await deleted
  const token = await svc.clientToken(svc.config.adminClientId ?? '', svc.config.adminClientSecret ?? '')
  const second: string = (await postExport(svc, { type: 'receivables' }, { token })).json().data.orderID
  await jobSettled(svc.runtime, second)
  await live.until(doneOf(second))

  t.same(live.received.map((r) => r.update.id), [...Array<string>(8).fill(first), ...Array<string>(6).fill(second)])
  t.same(live.received.slice(6, 8).map((r) => r.update.expiredAt), [RETENTION_END, RETENTION_END], 'read from the job, after the wait')
  const ids = live.received.map((r) => Number(r.eventId))
  t.ok(ids.every((n, i) => i === 0 || n > (ids[i - 1] ?? 0)), 'ids increase: sent in the order of the log')
})

/** A raw stream over real HTTP; `ended` settles with everything received when the server closes it. */
const rawStream = async (address: string, token: string, organizationId: string, path = '/v1/exports/sse') => {
  const response = await fetch(`${address}${path}`, { headers: { authorization: `Bearer ${token}`, 'organization-id': organizationId } })
  const reader = response.body?.getReader()
  if (response.status !== 200 || reader === undefined) throw new Error(`stream refused: ${response.status}`)
  let text = ''
  const ended = (async () => {
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) text += Buffer.from(chunk.value).toString('utf8')
    return text
  })()
  return { ended, received: () => text, cancel: () => reader.cancel() }
}

/** Bytes arrive over TCP, which no event marks: polled, bounded by the test's timeout. */
const until = async (check: () => boolean) => {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 10))
}

const reconnect = async (address: string, token: string, organizationId: string) => {
  const response = await fetch(`${address}/v1/exports/sse`, { headers: { authorization: `Bearer ${token}`, 'organization-id': organizationId } })
  const body: { data: { code: string } } = JSON.parse(await response.text())
  return { status: response.status, code: body.data.code }
}

t.test('a stream ends when the access it was opened with ends, and its reconnection is refused', async (t) => {
  const { svc, address } = await listen(t)
  const org = await createOrganization(svc, 'Streams')
  const admin = (method: 'POST' | 'PUT', url: string, payload?: object) =>
    svc.call({ method, url: `/v1${url}`, token: svc.adminToken, ...(payload === undefined ? {} : { payload }) })

  const deactivated = await addMember(svc, org, 'stream.deactivated', FOLLOWER)
  const stream = await rawStream(address, deactivated.token, org)
  const other = await addMember(svc, org, 'stream.bystander', FOLLOWER)
  const id = await exportOf(svc, org)
  await until(() => stream.received().includes(id))
  t.pass('an identity event of someone else left the stream open: it still got a later job')
  t.equal((await admin('POST', `/organization/${org}/users/${deactivated.userId}/deactivate`)).statusCode, 200)
  await stream.ended
  t.same(await reconnect(address, deactivated.token, org), { status: 401, code: 'INVALID_TOKEN' }, 'deactivating the user')

  const narrowed = await rawStream(address, other.token, org)
  const readsOnly = await roleTemplateWith(svc, org, ['ReadExport', 'ReadOrder'])
  t.equal((await admin('PUT', `/organization/${org}/users/${other.userId}/role`, { roleTemplateId: readsOnly })).statusCode, 200)
  await narrowed.ended
  const again = await rawStream(address, other.token, org)
  t.pass('a role that narrows the job types ends the stream; the reconnection opens with the new role')

  const third = await addMember(svc, org, 'stream.organization', FOLLOWER)
  const ofOrganization = await rawStream(address, third.token, org)
  t.equal((await admin('POST', `/organizations/${org}/deactivate`, { reason: 'closing streams' })).statusCode, 200)
  await Promise.all([ofOrganization.ended, again.ended])
  t.same(await reconnect(address, third.token, org), { status: 403, code: 'ORGANIZATION_INACTIVE' }, 'deactivating the organization')
})

t.test('the legacy stream ends with its access too: a password reset ends a user\'s, a revocation a client\'s', async (t) => {
  const { svc, address } = await listen(t)
  const org = await createOrganization(svc, 'Legacy streams')
  const user = await addMember(svc, org, 'legacy.stream', FOLLOWER)
  const client = await addClient(svc, org, 'legacy stream client', FOLLOWER)
  const ofUser = await rawStream(address, user.token, org, LEGACY_SSE)
  const ofClient = await rawStream(address, client.token, org, LEGACY_SSE)
  const reset = await svc.call({
    method: 'POST', url: `/v1/organization/${org}/users/${user.userId}/password`, token: svc.adminToken, payload: { newPassword: 'an0ther-Passw0rd!' },
  })
  t.equal(reset.statusCode, 204)
  await ofUser.ended
  const id = await exportOf(svc, org)
  await until(() => ofClient.received().includes(id))
  t.pass('the client\'s stream stayed open: the reset concerned another principal')
  t.equal((await svc.call({ method: 'POST', url: `/v1/organization/${org}/clients/${client.userId}/revoke`, token: svc.adminToken })).statusCode, 200)
  await ofClient.ended
  t.same(await reconnect(address, client.token, org), { status: 401, code: 'INVALID_TOKEN' })
})

t.test('a stream ends at the next heartbeat after its access token expires', async (t) => {
  const { svc, clock, address } = await listen(t, { heartbeatMs: 20 })
  const token = await memberToken(svc, svc.organizationId, FOLLOWER)
  const stream = await rawStream(address, token, svc.organizationId)
  await until(() => stream.received().includes(': heartbeat'))
  clock.advance(svc.config.accessTokenTtl * 1000 + 1000)
  await stream.ended
  t.same(await reconnect(address, token, svc.organizationId), { status: 401, code: 'TOKEN_EXPIRED' })
})

t.test('a stream stays open when its access cannot be read for a moment, and still ends when the access does', async (t) => {
  const { svc, address } = await listen(t)
  const token = await memberToken(svc, svc.organizationId, FOLLOWER)
  const stream = await rawStream(address, token, svc.organizationId)
  const principals = svc.runtime.queries.principals
  const client = principals.client
  principals.client = async () => { throw new Error('read store unavailable') }
  const renamed = await svc.runtime.commands.execute(organizationAggregate, svc.organizationId, { type: 'RenameOrganization', name: 'Renamed' },
    { organizationId: svc.organizationId, actorId: 'test', correlationId: 'test' })
  await svc.runtime.settle(renamed.position)
  await new Promise((resolve) => setImmediate(resolve))
  principals.client = client
  const id = await exportOf(svc, svc.organizationId)
  await until(() => stream.received().includes(id))
  t.pass('the failed check left the stream open: it got a later job')
  const deactivated = await svc.runtime.commands.execute(organizationAggregate, svc.organizationId, { type: 'DeactivateOrganization', reason: 'test' },
    { organizationId: svc.organizationId, actorId: 'test', correlationId: 'test' })
  await svc.runtime.settle(deactivated.position)
  await stream.ended
  t.pass('and ended when the organization was deactivated')
})

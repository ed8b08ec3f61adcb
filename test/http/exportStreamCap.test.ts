import t from 'tap'
import { StreamCounts } from '../../src/http/exportStream.js'
import { ManualClock } from '../../src/shared/clock.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { createOrganization } from '../helpers/exports.js'
import { addClient, addMember, type Member } from '../helpers/members.js'

const CANONICAL = '/v1/exports/sse'
const LEGACY = '/v1/export/orders/receivables/sse'
const FOLLOWER = ['ReadExport', 'ReadOrder'] as const
const CAP = 2

interface Refusal { status: string; data: { code: string; message: string; limit: number; retryAfter: number } }

/** Streams over app.inject never end: a listening server, the cap at 2, and a clock the token-expiry test moves. */
const listen = async (t: Parameters<typeof createTestApp>[0], options: { heartbeatMs?: number } = {}) => {
  const clock = new ManualClock('2026-03-10T09:00:00.000Z')
  const svc = await createTestApp(t, { clock, config: { exportsSseMaxStreamsPerPrincipal: CAP, exportsSseHeartbeatMs: options.heartbeatMs ?? 60_000 } })
  const address = await svc.app.listen({ port: 0, host: '127.0.0.1' })
  return { svc, clock, address, counts: svc.app.exportStreams }
}

/** A stream request over real HTTP; `close` aborts it as a client going away does. */
const open = async (t: Parameters<typeof createTestApp>[0], address: string, token: string, organizationId: string, path = CANONICAL) => {
  const controller = new AbortController()
  const response = await fetch(`${address}${path}`, {
    headers: { authorization: `Bearer ${token}`, 'organization-id': organizationId }, signal: controller.signal,
  })
  const close = () => controller.abort()
  t.teardown(close)
  return { response, close }
}

/** The server learns of a client going away over TCP, which no event here marks: polled, bounded by the test's timeout. */
const until = async (check: () => boolean) => {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 10))
}

const member = (svc: TestApp, organizationId: string, name: string): Promise<Member> => addMember(svc, organizationId, name, FOLLOWER)
const user = (m: Member) => ({ kind: 'user' as const, id: m.userId })

t.test('a principal\'s stream beyond the cap is refused with 429 in the envelope, while another principal of the organization still gets one', async (t) => {
  const { svc, address, counts } = await listen(t)
  const org = await createOrganization(svc, 'Capped streams')
  const [greedy, colleague] = await Promise.all([member(svc, org, 'stream.greedy'), member(svc, org, 'stream.colleague')])

  for (let i = 0; i < CAP; i++) t.equal((await open(t, address, greedy.token, org)).response.status, 200, `stream ${i + 1} opens`)
  const refused = (await open(t, address, greedy.token, org)).response
  t.equal(refused.status, 429)
  t.match(refused.headers.get('content-type'), /^application\/json/, 'the envelope, not an event stream')
  t.equal(refused.headers.get('retry-after'), '30')
  const body: Refusal = JSON.parse(await refused.text())
  t.match(body, { status: 'fail', data: { code: 'EXPORT_STREAM_LIMIT_REACHED', limit: CAP, retryAfter: 30 } })
  t.match(body.data.message, /already holds 2 open export event streams/)
  t.match(body.data.message, /EXPORTS_SSE_MAX_STREAMS_PER_PRINCIPAL/)
  t.equal(counts.countOf(user(greedy)), CAP, 'the refusal took no slot')

  const other = await open(t, address, colleague.token, org)
  t.equal(other.response.status, 200, 'a colleague in the same organization is counted apart')
  t.equal(other.response.headers.get('content-type'), 'text/event-stream; charset=utf-8')
})

t.test('a user and a client are each counted as the principal their token names', async (t) => {
  const { svc, address, counts } = await listen(t)
  const org = await createOrganization(svc, 'Client streams')
  const client = await addClient(svc, org, 'stream client', FOLLOWER)
  for (let i = 0; i < CAP; i++) t.equal((await open(t, address, client.token, org)).response.status, 200)
  t.equal((await open(t, address, client.token, org)).response.status, 429)
  t.equal(counts.countOf({ kind: 'client', id: client.userId }), CAP)
  t.equal((await open(t, address, svc.adminToken, org)).response.status, 200, 'the administrator client is another principal')
})

t.test('closing a stream frees its slot once: a new one is accepted, one more still refused', async (t) => {
  const { svc, address, counts } = await listen(t)
  const org = await createOrganization(svc, 'Reopened streams')
  const reader = await member(svc, org, 'stream.reader')
  const first = await open(t, address, reader.token, org)
  await open(t, address, reader.token, org)
  t.equal((await open(t, address, reader.token, org)).response.status, 429)

  first.close()
  await until(() => counts.countOf(user(reader)) < CAP)
  t.equal(counts.countOf(user(reader)), 1, 'the response and its stream both closed, and the slot was freed once')
  t.equal((await open(t, address, reader.token, org)).response.status, 200, 'a new stream is accepted')
  t.equal((await open(t, address, reader.token, org)).response.status, 429, 'and the cap holds again')
})

t.test('a principal whose streams all closed leaves no count behind, and may open as many again', async (t) => {
  const { svc, address, counts } = await listen(t)
  const org = await createOrganization(svc, 'Drained streams')
  const reader = await member(svc, org, 'stream.drained')
  const streams = [await open(t, address, reader.token, org), await open(t, address, reader.token, org)]
  t.equal(counts.size, 1)
  for (const stream of streams) stream.close()
  await until(() => counts.size === 0)
  t.equal(counts.countOf(user(reader)), 0, 'its entry is gone from the map')

  const again = [await open(t, address, reader.token, org), await open(t, address, reader.token, org)]
  t.same(again.map((stream) => stream.response.status), [200, 200])
  t.equal((await open(t, address, reader.token, org)).response.status, 429)
})

t.test('the legacy stream shares the count with the canonical one', async (t) => {
  const { svc, address, counts } = await listen(t)
  const org = await createOrganization(svc, 'Legacy streams')
  const reader = await member(svc, org, 'stream.legacy')
  const canonical = await open(t, address, reader.token, org)
  const legacy = await open(t, address, reader.token, org, LEGACY)
  t.same([canonical.response.status, legacy.response.status], [200, 200])
  t.equal(counts.countOf(user(reader)), 2, 'one of each counts two')

  const legacyRefused = (await open(t, address, reader.token, org, LEGACY)).response
  t.equal(legacyRefused.status, 429)
  t.equal(legacyRefused.headers.get('deprecation'), 'true', 'still answered as a legacy route')
  t.match(await legacyRefused.json(), { status: 'fail', data: { code: 'EXPORT_STREAM_LIMIT_REACHED', limit: CAP } })
  t.equal((await open(t, address, reader.token, org)).response.status, 429, 'the canonical route is refused too')

  legacy.close()
  await until(() => counts.countOf(user(reader)) === 1)
  t.equal((await open(t, address, reader.token, org)).response.status, 200, 'a legacy stream\'s slot goes back to the canonical route')
})

t.test('streams the server ends free their slots: at the token\'s expiry, and at shutdown', async (t) => {
  const { svc, clock, address, counts } = await listen(t, { heartbeatMs: 20 })
  const org = await createOrganization(svc, 'Ended streams')
  const reader = await member(svc, org, 'stream.expiring')
  await open(t, address, reader.token, org)
  await open(t, address, reader.token, org, LEGACY)
  t.equal(counts.countOf(user(reader)), 2)
  clock.advance(svc.config.accessTokenTtl * 1000 + 1000)
  await until(() => counts.countOf(user(reader)) === 0)
  t.equal(counts.size, 0, 'both ended at the heartbeat after the expiry, and nothing is left')

  const token = await svc.clientToken(svc.config.adminClientId ?? '', svc.config.adminClientSecret ?? '')
  await open(t, address, token, org)
  await open(t, address, token, org, LEGACY)
  t.equal(counts.size, 1)
  await svc.close()
  t.equal(counts.size, 0, 'the server closing ended them all')
})

t.test('a slot released twice (its response and its stream both closing) counts once, and the last release drops the principal\'s entry', async (t) => {
  const counts = new StreamCounts(2)
  const holder = { kind: 'user' as const, id: 'u-1' }
  const first = counts.acquire(holder)
  const second = counts.acquire(holder)
  t.equal(counts.acquire(holder), null, 'refused at the cap')
  first?.()
  first?.()
  t.equal(counts.countOf(holder), 1)
  t.equal(counts.countOf({ kind: 'client', id: 'u-1' }), 0, 'a client of the same id is another principal')
  second?.()
  t.equal(counts.size, 0, 'no entry left for a principal with no stream')
})

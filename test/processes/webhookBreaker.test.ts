import t from 'tap'
import { ManualClock } from '../../src/shared/clock.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { firing, type Firing } from '../helpers/firing.js'
import { createOrganization } from '../helpers/lending.js'
import { startSink, type Sink } from '../helpers/sink.js'

const breakerApp = (t: Parameters<typeof createTestApp>[0]) => createTestApp(t, {
  clock: new ManualClock('2026-11-24T10:00:00.000Z'),
  config: { webhookAllowPrivateNetworks: true, webhookTimeoutMs: 300, webhookBreakerTimeouts: 2, webhookBreakerOpenSeconds: 1 },
})

/** A webhook of the firing's organization to a URL of `sink`, on a line of its own, and a way to fire it once and read its send. */
const hookOn = async (f: Firing, sink: Sink, body: Record<string, unknown> = {}) => {
  const id = (await f.api('POST', '/webhook', { tag: 'erp', url: `${sink.url}/hook`, requestBody: '{}', ...body })).json().data.ID
  const line = await f.line({ onDeliveredWebhooks: [id] })
  return {
    id,
    async fire() {
      const credit = await f.l.disbursedCredit({ creditLineId: line })
      const [send] = await f.settled(credit.ID, 1)
      return { credit, send }
    },
  }
}

const hookRequests = (sink: Sink) => sink.requests.filter((r) => r.path === '/hook').length

t.test('a webhook whose destination keeps timing out has its automatic sends fail at once, others unaffected, until one tried later answers', async (t) => {
  const dead = await startSink(t)
  dead.route('/hook', { hang: true })
  const healthy = await startSink(t)
  const svc = await breakerApp(t)
  const f = await firing(svc, healthy)
  const deadHook = (await f.api('POST', '/webhook', { tag: 'dead', url: `${dead.url}/hook`, requestBody: '{}' })).json().data.ID
  const healthyHook = await f.webhook({ tag: 'healthy', path: '/hook', requestBody: '{}' })
  const line = await f.line({ onDeliveredWebhooks: [deadHook, healthyHook] })
  /** One disbursement on the line, and its two sends once both have an outcome. */
  const fire = async () => {
    const credit = await f.l.disbursedCredit({ creditLineId: line })
    const sends = await f.settled(credit.ID, 2)
    const of = (webhookId: string) => sends.find((s) => s.webhookId === webhookId)
    return { credit, dead: of(deadHook), healthy: of(healthyHook) }
  }

  for (const n of [1, 2]) {
    const firing = await fire()
    t.match(firing.dead, { status: 'failed', error: { code: 'TIMEOUT' } }, `timeout ${n} of 2`)
    t.match(firing.healthy, { status: 'delivered' })
  }
  t.equal(dead.requests.length, 2)

  const refused = await fire()
  t.match(refused.dead, {
    status: 'failed', response: null,
    error: {
      code: 'DESTINATION_UNAVAILABLE',
      message: new RegExp(`^not sent: ${dead.url} did not answer within 300 ms 2 times in a row, .* until 2026-11-24T10:00:0[01]\\.\\d{3}Z, when one is tried again`),
    },
  }, 'the third is refused without a request')
  t.match(refused.healthy, { status: 'delivered' }, 'another webhook of the same line is sent as ever')
  t.equal(dead.requests.length, 2, 'nothing reached the dead destination')

  await new Promise((resolve) => setTimeout(resolve, 1000))
  const probe = await fire()
  t.match(probe.dead, { status: 'failed', error: { code: 'TIMEOUT' } }, 'its time up, one send is tried again')
  t.equal(dead.requests.length, 3)
  t.match((await fire()).dead, { error: { code: 'DESTINATION_UNAVAILABLE' } }, 'and having timed out, the breaker is open again')
  t.equal(dead.requests.length, 3)

  dead.route('/hook', { status: 200 })
  const resent = await f.api('POST', `/webhook/${deadHook}/request`, { creditID: refused.credit.ID, logID: refused.dead?._id })
  t.equal(resent.statusCode, 200)
  t.match(resent.json().data, { outcome: 'delivered' }, 'a manual re-send goes through an open breaker')
  t.equal(dead.requests.length, 4)
  t.match((await fire()).dead, { status: 'delivered' }, 'and its answer closed it: automatic sends go again at once')
  t.equal(dead.requests.length, 5)
})

t.test('a token endpoint answering on the same host does not hide a webhook URL that times out, and an open breaker asks for no token', async (t) => {
  const partner = await startSink(t)
  partner.route('/token', { body: { access_token: 'partner-token' } })
  partner.route('/hook', { hang: true })
  const svc = await breakerApp(t)
  const f = await firing(svc, partner)
  const hook = await hookOn(f, partner, { authEnabled: true, authUrl: `${partner.url}/token`, authRequestBody: '{}' })
  for (const n of [1, 2]) t.match((await hook.fire()).send, { error: { code: 'TIMEOUT' }, auth: { response: { status: 200 } } }, `timeout ${n}, its token answered`)
  t.match((await hook.fire()).send, { error: { code: 'DESTINATION_UNAVAILABLE' }, auth: null })
  t.same(partner.requests.map((r) => r.path), ['/token', '/hook', '/token', '/hook'], 'the refused send made no token request')
})

t.test('one organization\'s webhook timing out never opens another organization\'s, nor do test sends open any', async (t) => {
  const shared = await startSink(t)
  shared.route('/hook', { hang: true })
  const svc: TestApp = await breakerApp(t)
  const a = await firing(svc, shared)
  const b = await firing(svc, shared, await createOrganization(svc, 'Other lender'))
  const hookA = await hookOn(a, shared)
  const hookB = await hookOn(b, shared)
  for (let i = 0; i < 3; i++) {
    const tested = await a.api('POST', '/webhook-test?send=true', { webhookID: hookA.id, url: `${shared.url}/hook`, tag: 'erp', requestBody: '{}' })
    t.match(tested.json().data, { outcome: 'failed', error: { code: 'TIMEOUT' } }, `test send ${i + 1} timed out`)
  }
  t.match((await hookA.fire()).send, { error: { code: 'TIMEOUT' } }, 'test sends opened nothing')
  t.match((await hookA.fire()).send, { error: { code: 'TIMEOUT' } })
  t.match((await hookA.fire()).send, { error: { code: 'DESTINATION_UNAVAILABLE' } }, 'organization A\'s own timeouts did')
  t.match((await hookB.fire()).send, { error: { code: 'TIMEOUT' } }, 'organization B\'s webhook to the same URL is still tried')
  t.equal(hookRequests(shared), 3 + 2 + 1)
})

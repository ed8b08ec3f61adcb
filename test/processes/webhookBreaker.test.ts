import t from 'tap'
import { ManualClock } from '../../src/shared/clock.js'
import { createTestApp } from '../helpers/app.js'
import { firing } from '../helpers/firing.js'
import { startSink } from '../helpers/sink.js'

t.test('a destination that keeps timing out has its automatic sends fail at once, others unaffected, until one tried later answers', async (t) => {
  const dead = await startSink(t)
  dead.route('/hook', { hang: true })
  const healthy = await startSink(t)
  const clock = new ManualClock('2026-11-24T10:00:00.000Z')
  const svc = await createTestApp(t, {
    clock,
    config: { webhookAllowPrivateNetworks: true, webhookTimeoutMs: 300, webhookBreakerTimeouts: 2, webhookBreakerOpenSeconds: 60 },
  })
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
    error: { code: 'DESTINATION_UNAVAILABLE', message: new RegExp(`${dead.url} did not answer within 300 ms 2 times in a row.*until 2026-11-24T10:01:00\\.000Z, when one is tried again`) },
  }, 'the third is refused without a request')
  t.match(refused.healthy, { status: 'delivered' }, 'another destination of the same line is sent as ever')
  t.equal(dead.requests.length, 2, 'nothing reached the dead destination')

  clock.advance(60_000)
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

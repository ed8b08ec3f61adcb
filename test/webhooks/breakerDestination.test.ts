import t from 'tap'
import { createTestApp } from '../helpers/app.js'
import { firing } from '../helpers/firing.js'
import { startSink } from '../helpers/sink.js'

const breakerApp = (t: Parameters<typeof createTestApp>[0]) => createTestApp(t, {
  config: { webhookAllowPrivateNetworks: true, webhookTimeoutMs: 300, webhookBreakerTimeouts: 2, webhookBreakerOpenSeconds: 60 },
})

t.test('a webhook moved to a destination that answers is sent there at once; the breaker and its message stay with the one that timed out', async (t) => {
  const dead = await startSink(t)
  dead.route('/hook', { hang: true })
  const good = await startSink(t)
  const svc = await breakerApp(t)
  const f = await firing(svc, good)
  const hook = (await f.api('POST', '/webhook', { tag: 'erp', url: `${dead.url}/hook`, requestBody: '{}' })).json().data.ID
  const line = await f.line({ onDeliveredWebhooks: [hook] })
  const fire = async () => {
    const credit = await f.l.disbursedCredit({ creditLineId: line })
    const [send] = await f.settled(credit.ID, 1)
    return send
  }
  const moveTo = async (url: string) => t.equal((await f.api('PUT', `/webhook/${hook}`, { url })).statusCode, 200, `moved to ${url}`)
  const refusedAt = (url: string) => ({ error: { code: 'DESTINATION_UNAVAILABLE', message: new RegExp(`^not sent: ${url} did not answer within 300 ms 2 times in a row`) } })

  t.match(await fire(), { error: { code: 'TIMEOUT' } })
  t.match(await fire(), { error: { code: 'TIMEOUT' } })
  t.match(await fire(), refusedAt(dead.url), 'open: refused, naming the destination that timed out')

  await moveTo(`${good.url}/hook`)
  t.match(await fire(), { status: 'delivered', error: null }, 'the new destination was never asked: it gets the send')
  t.equal(good.requests.filter((r) => r.path === '/hook').length, 1)

  await moveTo(`${dead.url}/hook`)
  t.match(await fire(), refusedAt(dead.url), 'moved back within the period, the old destination\'s breaker is still open')
  t.equal(dead.requests.length, 2, 'the dead destination was asked only the first two times')
})

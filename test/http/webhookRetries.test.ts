import http from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { ManualClock } from '../../src/shared/clock.js'
import type { WebhookSendDoc } from '../../src/projections/webhookSends.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { firing, type Firing } from '../helpers/firing.js'
import { startSink } from '../helpers/sink.js'

const secret = `whsec_${Buffer.alloc(32, 9).toString('base64')}`

const setup = async (t: Parameters<typeof createTestApp>[0], config: Record<string, unknown> = {}) => {
  const clock = new ManualClock('2026-03-02T12:00:00.000Z')
  const sink = await startSink(t)
  const svc = await createTestApp(t, { clock, config: { webhookAllowPrivateNetworks: true, accessTokenTtl: 30 * 86_400, ...config } })
  return { clock, sink, svc, f: await firing(svc, sink) }
}

/** A credit on a line whose disbursement fires the webhook; answers the credit's id. */
const disbursedWith = async (f: Firing, hook: string): Promise<string> => (await f.l.disbursedCredit({ creditLineId: await f.line({ onDeliveredWebhooks: [hook] }) })).ID

const retriesRun = (svc: TestApp) => svc.runtime.scheduler.runNow('webhookRetries')

/** The credit's sends with an outcome, oldest first, once there are `count` and the log's head is projected (a retry is scheduled in the outcome's append). */
const sendsOf = async (f: Firing, creditId: string, count: number): Promise<WebhookSendDoc[]> => {
  await f.settled(creditId, count)
  const { runtime } = f.l.svc
  await runtime.settle(await runtime.eventStore.headPosition())
  return (await f.sendsOf(creditId)).filter((s) => s.status !== 'started').reverse()
}

const logOf = async (f: Firing, hook: string, id: string) => {
  const page = (await f.api('GET', `/webhook/${hook}/logs`)).json().data
  return page.find((log: { ID: string }) => log.ID === id)
}

t.test('a send the destination answered 503 is retried a minute later under its own log, with the same message id, and delivered', async (t) => {
  const { clock, sink, svc, f } = await setup(t)
  sink.route('/erp', { status: 503, body: { error: 'maintenance' } })
  const hook = await f.webhook({ tag: 'erp', path: '/erp', requestBody: '{"credit": {{ .Credit.ID | quote }}}', signingSecret: secret })
  const creditId = await disbursedWith(f, hook)
  const [failed] = await sendsOf(f, creditId, 1)
  if (failed === undefined) throw new Error('no send')
  t.match(failed, { status: 'failed', error: { code: 'HTTP_STATUS' }, retry: { attempt: 1 } })
  t.equal(failed.retry?.dueAt, new Date(Date.parse(failed.completedAt ?? '') + 60_000).toISOString(), 'due a minute after the failure')
  sink.route('/erp', { status: 200 })

  await retriesRun(svc)
  t.equal(sink.requests.length, 1, 'not before its time')
  clock.advance(61_000)
  await retriesRun(svc)
  const [, retried] = await sendsOf(f, creditId, 2)
  t.match(retried, { _id: failed.retry?.sendId, status: 'delivered', trigger: { type: 'CreditDisbursed', attempt: 1, originalSendId: failed._id } })
  t.equal(sink.requests.length, 2)
  t.equal(sink.requests[1]?.headers['webhook-id'], sink.requests[0]?.headers['webhook-id'], 'the receiver can tell it is the same message')
  t.equal(sink.requests[1]?.body, sink.requests[0]?.body)

  await retriesRun(svc)
  clock.advance(3_600_000)
  await retriesRun(svc)
  await f.quiesce()
  t.equal(f.received().length, 2, 'released once: later runs send nothing more')

  const shown = await logOf(f, hook, failed._id)
  t.match(shown, { trigger: { attempt: 0, retryOf: null }, retry: { ID: retried?._id, attempt: 1, dueAt: failed.retry?.dueAt } })
  t.match(await logOf(f, hook, retried?._id ?? ''), { trigger: { type: 'CreditDisbursed', attempt: 1, retryOf: failed._id }, retry: null })
  const resent = await f.api('POST', `/webhook/${hook}/request`, { creditID: creditId, logID: retried?._id })
  t.equal(resent.statusCode, 200, resent.body)
  t.equal(sink.requests.at(-1)?.headers['webhook-id'], sink.requests[0]?.headers['webhook-id'], 'a manual re-send of the retry repeats the first message too')
})

t.test('a refused connection is retried; an answer that may have been acted on is not', async (t) => {
  const { clock, sink, svc, f } = await setup(t)
  const closed = http.createServer()
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
  const { port } = closed.address() as AddressInfo
  await new Promise<void>((resolve) => closed.close(() => resolve()))
  const gone = (await f.api('POST', '/webhook', { tag: 'gone', url: `http://127.0.0.1:${port}/hook`, requestBody: '{}' })).json().data.ID
  const refusedCredit = await disbursedWith(f, gone)
  const [refused] = await sendsOf(f, refusedCredit, 1)
  t.match(refused, { status: 'failed', error: { code: 'CONNECTION_FAILED' }, retry: { attempt: 1 } }, 'nothing reached it: safe to send again')

  sink.route('/broken', { status: 500 })
  const broken = await f.webhook({ tag: 'broken', path: '/broken', requestBody: '{}' })
  const brokenCredit = await disbursedWith(f, broken)
  const [answered] = await sendsOf(f, brokenCredit, 1)
  t.match(answered, { status: 'failed', error: { code: 'HTTP_STATUS' } })
  t.equal(answered?.retry, undefined, 'a 500 may have been acted on: a person re-sends it')

  clock.advance(61_000)
  await retriesRun(svc)
  const sends = await sendsOf(f, refusedCredit, 2)
  t.match(sends[1], { status: 'failed', error: { code: 'CONNECTION_FAILED' }, trigger: { attempt: 1 }, retry: { attempt: 2 } }, 'still refused: another retry')
  t.equal(Date.parse(sends[1]?.retry?.dueAt ?? '') - Date.parse(sends[1]?.completedAt ?? ''), 300_000, 'five minutes later')
  t.same((await f.sendsOf(brokenCredit)).length, 1)
})

t.test('retries stop at WEBHOOK_RETRY_ATTEMPTS, and a webhook archived meanwhile is not retried', async (t) => {
  const { clock, sink, svc, f } = await setup(t, { webhookRetryAttempts: 1 })
  sink.route('/erp', { status: 429 })
  const hook = await f.webhook({ tag: 'erp', path: '/erp', requestBody: '{}' })
  const creditId = await disbursedWith(f, hook)
  await sendsOf(f, creditId, 1)
  clock.advance(61_000)
  await retriesRun(svc)
  const [, last] = await sendsOf(f, creditId, 2)
  t.match(last, { status: 'failed', trigger: { attempt: 1 } })
  t.equal(last?.retry, undefined, 'the one retry allowed failed too: nothing more is scheduled')

  sink.route('/other', { status: 503 })
  sink.route('/kept', { status: 503 })
  const other = await f.webhook({ tag: 'other', path: '/other', requestBody: '{}' })
  const kept = await f.webhook({ tag: 'kept', path: '/kept', requestBody: '{}' })
  const otherCredit = await disbursedWith(f, other)
  t.match((await sendsOf(f, otherCredit, 1))[0], { retry: { attempt: 1 } })
  clock.advance(1_000)
  const keptCredit = await disbursedWith(f, kept)
  await sendsOf(f, keptCredit, 1)
  t.equal((await f.api('DELETE', `/webhook/${other}`)).statusCode, 200)
  sink.route('/other', { status: 200 })
  sink.route('/kept', { status: 200 })
  clock.advance(61_000)
  await retriesRun(svc)
  // The archived webhook's retry fell due first, so it was released and handled before the kept one's, which is sent.
  t.match((await sendsOf(f, keptCredit, 2))[1], { status: 'delivered', trigger: { attempt: 1 } })
  t.equal((await f.sendsOf(otherCredit)).length, 1, 'archived: its retry is dropped')
  t.equal(sink.requests.filter((r) => r.path === '/other').length, 1)
})

t.test('WEBHOOK_RETRY_ATTEMPTS=0 schedules nothing', async (t) => {
  const { sink, f } = await setup(t, { webhookRetryAttempts: 0 })
  sink.route('/erp', { status: 503 })
  const creditId = await disbursedWith(f, await f.webhook({ tag: 'erp', path: '/erp', requestBody: '{}' }))
  const [failed] = await sendsOf(f, creditId, 1)
  t.equal(failed?.retry, undefined)
})


import t from 'tap'
import { webhookSendAggregate } from '../../src/commands/webhookSend.js'
import type { RecordedEvent } from '../../src/events/catalogue.js'
import { firingSendId, webhookFiringProcess } from '../../src/processes/webhookFiring.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { firing } from '../helpers/firing.js'
import { startSink, type Sink } from '../helpers/sink.js'

/** The firing process does not run in these apps: each test hands it a batch itself, or restarts with it. */
const quietApp = (t: Parameters<typeof createTestApp>[0]) =>
  createTestApp(t, { config: { webhookAllowPrivateNetworks: true, processesEnabled: false } })

const disbursementOf = async (svc: TestApp, creditId: string): Promise<RecordedEvent> => {
  for await (const event of svc.runtime.history(`credit-${creditId}`)) if (event.type === 'CreditDisbursed') return event
  throw new Error('the credit was not disbursed')
}

const creditOf = (body: string | undefined): unknown => (JSON.parse(body ?? '{}') as { credit?: unknown }).credit
const pathsFor = (sink: Sink, creditId: string) => sink.requests.filter((r) => creditOf(r.body) === creditId).map((r) => r.path)

t.test('a batch fires every trigger\'s webhooks once, and inside it each trigger\'s fromWebhook reader goes after its own writer', async (t) => {
  const sink = await startSink(t)
  sink.route('/crm', { body: { loan: { id: 'L-77' } } })
  const svc = await quietApp(t)
  const f = await firing(svc, sink)
  const writer = await f.webhook({ tag: 'crm', path: '/crm', requestBody: '{"credit": {{ .Credit.ID | quote }}}', responseQueries: { loanId: '$.loan.id' } })
  const reader = await f.webhook({ tag: 'ledger', path: '/ledger', requestBody: '{"credit": {{ .Credit.ID | quote }}, "loan": {{ fromWebhook "crm" "loanId" | toJson }}}' })
  const line = await f.line({ onDeliveredWebhooks: [reader, writer] })
  const credits = [await f.l.disbursedCredit({ creditLineId: line }), await f.l.disbursedCredit({ creditLineId: line }), await f.l.disbursedCredit({ creditLineId: line })]
  const triggers = await Promise.all(credits.map((credit) => disbursementOf(svc, credit.ID)))

  t.same(await webhookFiringProcess.handleBatch(triggers, svc.runtime), { failedAt: null })
  await svc.runtime.webhooks.drain()
  for (const credit of credits) {
    t.same(pathsFor(sink, credit.ID), ['/crm', '/ledger'], 'the reader of this credit left after its writer')
    t.same(JSON.parse(sink.requests.find((r) => r.path === '/ledger' && creditOf(r.body) === credit.ID)?.body ?? ''), { credit: credit.ID, loan: 'L-77' })
    t.same((await f.settled(credit.ID, 2)).map((s) => s.status), ['delivered', 'delivered'])
  }

  t.same(await webhookFiringProcess.handleBatch(triggers, svc.runtime), { failedAt: null }, 'the same batch again')
  await svc.runtime.webhooks.drain()
  t.equal(sink.requests.length, 6, 'a redelivered batch sends nothing')
})

t.test('a batch whose middle trigger fails: the others go out, it is reported, and its redelivery with the rest sends only what was missing', async (t) => {
  const sink = await startSink(t)
  const svc = await quietApp(t)
  const f = await firing(svc, sink)
  const hook = await f.webhook({ tag: 'a', path: '/a', requestBody: '{"credit": {{ .Credit.ID | quote }}}' })
  const healthyLine = await f.line({ onDeliveredWebhooks: [hook] })
  const brokenLine = await f.line({ onDeliveredWebhooks: [hook] })
  const credits = [
    await f.l.disbursedCredit({ creditLineId: healthyLine }),
    await f.l.disbursedCredit({ creditLineId: brokenLine }),
    await f.l.disbursedCredit({ creditLineId: healthyLine }),
  ]
  const triggers = await Promise.all(credits.map((credit) => disbursementOf(svc, credit.ID)))
  // The read of the middle trigger's credit line fails once, as a read store that is briefly unavailable would.
  const { directory } = svc.runtime.webhooks
  const links = directory.links.bind(directory)
  let failures = 1
  directory.links = async (id) => {
    if (id === brokenLine && failures-- > 0) throw new Error('read store unavailable')
    return links(id)
  }

  const outcome = await webhookFiringProcess.handleBatch(triggers, svc.runtime)
  await svc.runtime.webhooks.drain()
  t.match(outcome, { failedAt: 1, error: { message: 'read store unavailable' } })
  t.same(credits.map((credit) => pathsFor(sink, credit.ID).length), [1, 0, 1], 'the triggers before and after the failed one went out')

  t.same(await webhookFiringProcess.handleBatch(triggers.slice(1), svc.runtime), { failedAt: null }, 'the supervisor redelivers from the failed trigger on')
  await svc.runtime.webhooks.drain()
  t.same(credits.map((credit) => pathsFor(sink, credit.ID).length), [1, 1, 1], 'each trigger went out exactly once')
})

t.test('a crash after a batch\'s starts were recorded and before their sends: those stay unknown and unsent, the rest of the batch goes out once', async (t) => {
  const sink = await startSink(t)
  const first = await quietApp(t)
  const before = await firing(first, sink)
  const hook = await before.webhook({ tag: 'a', path: '/a', requestBody: '{"credit": {{ .Credit.ID | quote }}}' })
  const line = await before.line({ onDeliveredWebhooks: [hook] })
  const credits = [await before.l.disbursedCredit({ creditLineId: line }), await before.l.disbursedCredit({ creditLineId: line }), await before.l.disbursedCredit({ creditLineId: line })]
  const triggers = await Promise.all(credits.map((credit) => disbursementOf(first, credit.ID)))
  // What the firing writes for the first two triggers of the batch before their requests leave; then the process dies.
  const crashed = triggers.slice(0, 2)
  await Promise.all(crashed.map((trigger, index) => {
    const sendId = firingSendId(trigger.id, hook)
    return first.runtime.commands.execute(webhookSendAggregate, sendId, {
      type: 'StartWebhookSend', sendId, organizationId: first.organizationId, webhookId: hook, tag: 'a',
      trigger: { type: 'CreditDisbursed', eventId: trigger.id, logId: null }, creditId: credits[index]!.ID, orderId: null,
      request: { method: 'POST', url: `${sink.url}/a`, headers: {}, body: '{}', bodyBytes: 2, bodyTruncated: false }, now: new Date().toISOString(),
    }, { organizationId: first.organizationId, actorId: null, correlationId: trigger.id, causationId: trigger.id })
  }))
  await first.close()

  const restarted = await createTestApp(t, { config: { ...first.config, processesEnabled: true } })
  const after = await firing(restarted, sink)
  const sends = await Promise.all(credits.map((credit) => after.settled(credit.ID, 1)))
  await after.quiesce()
  t.same(after.received().map((r) => creditOf(r.body)), [credits[2]!.ID], 'only the trigger whose start was not recorded went out')
  t.same(sends.map((s) => s.map((send) => send.status)), [['unknown'], ['unknown'], ['delivered']])
  t.same(sends.map((s) => s[0]?._id), triggers.map((trigger) => firingSendId(trigger.id, hook)))
})

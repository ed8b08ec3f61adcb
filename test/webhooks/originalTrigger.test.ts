import t from 'tap'
import { newId } from '../../src/shared/ids.js'
import { emptyTemplateContext } from '../../src/templates/context.js'
import { configurationDefaults } from '../../src/webhooks/configuration.js'
import { WebhookSender } from '../../src/webhooks/sender.js'
import { createTestApp } from '../helpers/app.js'
import { firing } from '../helpers/firing.js'
import { startSink } from '../helpers/sink.js'

const testApp = (t: Parameters<typeof createTestApp>[0]) => createTestApp(t, { config: { webhookAllowPrivateNetworks: true } })

const secret = `whsec_${Buffer.alloc(32, 5).toString('base64')}`

/** A signed webhook whose body is the trigger's original type, sent once (to a destination answering 503) for a disbursed credit. */
const signedWebhookSentOnce = async (t: Parameters<typeof createTestApp>[0]) => {
  const sink = await startSink(t)
  sink.route('/erp', { status: 503 })
  const svc = await testApp(t)
  const f = await firing(svc, sink)
  const hook = await f.webhook({ tag: 'erp', path: '/erp', requestBody: '{{ .Trigger.OriginalType }}', signingSecret: secret })
  const credit = await f.l.disbursedCredit({ creditLineId: await f.line({ onDeliveredWebhooks: [hook] }) })
  const [automatic] = await f.settled(credit.ID, 1)
  if (automatic === undefined) throw new Error('no automatic send')
  return { sink, svc, f, hook, credit, automatic }
}

t.test('every re-send of a long chain of re-sends renders the original trigger type and carries the original send id as webhook-id', async (t) => {
  const { sink, svc, f, hook, credit, automatic } = await signedWebhookSentOnce(t)
  let logID = automatic._id
  for (let n = 1; n <= 25; n++) {
    const resent = await f.api('POST', `/webhook/${hook}/request`, { creditID: credit.ID, logID })
    t.equal(resent.statusCode, 200, `re-send ${n}`)
    logID = resent.json().data.logID
  }
  const received = sink.requests.slice(1)
  t.equal(received.length, 25)
  t.same(received.map((r) => r.body), Array(25).fill('CreditDisbursed'), 'each re-send names the automatic send\'s type')
  t.same(received.map((r) => r.headers['webhook-id']), Array(25).fill(automatic._id), 'each re-send is signed with the original send\'s id')
  const last = await svc.runtime.queries.webhookSends.get(svc.organizationId, logID)
  t.match(last?.trigger, { type: 'manual', originalSendId: automatic._id, originalType: 'CreditDisbursed' }, 'recorded on the manual send when it starts')
})

t.test('a manual send recorded before chains kept their origin is followed back to the send that started the chain', async (t) => {
  const { sink, svc, f, hook, credit, automatic } = await signedWebhookSentOnce(t)
  const older = newId()
  await new WebhookSender(svc.runtime).send({
    sendId: older, organizationId: svc.organizationId, webhookId: hook,
    configuration: { ...configurationDefaults, tag: 'erp', url: `${sink.url}/erp`, requestBody: 'older', signingSecret: null },
    context: emptyTemplateContext(), fromWebhook: () => null,
    trigger: { type: 'manual', eventId: null, logId: automatic._id }, creditId: credit.ID, orderId: null,
    commandContext: { organizationId: svc.organizationId, actorId: 'test', correlationId: older },
  })
  const resent = await f.api('POST', `/webhook/${hook}/request`, { creditID: credit.ID, logID: older })
  t.equal(resent.statusCode, 200, resent.body)
  t.equal(sink.requests.at(-1)?.body, 'CreditDisbursed')
  t.equal(sink.requests.at(-1)?.headers['webhook-id'], automatic._id)
  const recorded = await svc.runtime.queries.webhookSends.get(svc.organizationId, resent.json().data.logID)
  t.match(recorded?.trigger, { type: 'manual', logId: older, originalSendId: automatic._id, originalType: 'CreditDisbursed' })
})

t.test('a test send renders .Trigger.OriginalType as its type, test, as every send that is not a re-send does', async (t) => {
  const sink = await startSink(t)
  const svc = await testApp(t)
  const f = await firing(svc, sink)
  const requestBody = '{{ .Trigger.Type }}/{{ .Trigger.OriginalType }}'
  const rendered = await f.api('POST', '/webhook-test?send=false', { url: `${sink.url}/h`, requestBody })
  t.equal(rendered.json().data.request?.body, 'test/test', rendered.body)
  const sent = await f.api('POST', '/webhook-test', { url: `${sink.url}/h`, requestBody })
  t.equal(sent.json().data.outcome, 'delivered', sent.body)
  t.equal(sink.requests.at(-1)?.body, 'test/test')
})

import { Webhook } from 'standardwebhooks'
import t from 'tap'
import { webhookAggregate } from '../../src/commands/webhook.js'
import { newId } from '../../src/shared/ids.js'
import { emptyTemplateContext } from '../../src/templates/context.js'
import { configurationDefaults, unsealed } from '../../src/webhooks/configuration.js'
import { WebhookSender } from '../../src/webhooks/sender.js'
import { organizationApi } from '../helpers/api.js'
import { createTestApp } from '../helpers/app.js'
import { startSink, type SinkRequest } from '../helpers/sink.js'

const api = organizationApi

const testApp = (t: Parameters<typeof createTestApp>[0]) => createTestApp(t, { config: { webhookAllowPrivateNetworks: true } })

const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`
const body = '{"credit": {{ .Credit.ID | toJson }}}'

/** What a Standard Webhooks receiver reads: one value per header, as Node joins repeated ones. */
const signatureOf = (received: SinkRequest) => ({
  'webhook-id': String(received.headers['webhook-id']),
  'webhook-timestamp': String(received.headers['webhook-timestamp']),
  'webhook-signature': String(received.headers['webhook-signature']),
})

t.test('a signed webhook may not name webhook-id, webhook-timestamp or webhook-signature in any case, at create, update and test', async (t) => {
  const sink = await startSink(t)
  const svc = await testApp(t)
  const call = api(svc)
  const signed = (await call('POST', '/webhook', { tag: 's', url: `${sink.url}/h`, signingSecret: secret })).json().data.ID
  for (const requestHeader of ['{"Webhook-Id": "mine"}', '{"WEBHOOK-TIMESTAMP": "1"}', '{"webhook-signature": "v1,x"}', '{"X-Other": "a", "Webhook-Id": "mine"}']) {
    const created = await call('POST', '/webhook', { tag: 's', url: `${sink.url}/h`, requestHeader, signingSecret: secret })
    t.equal(created.statusCode, 400, requestHeader)
    t.equal(created.json().data.code, 'VALIDATION_ERROR', requestHeader)
    t.match(created.json().data.errors, [{ field: 'body.requestHeader', message: /renders headers that cannot be sent: webhook-\w+ is set by the service on a signed webhook/i }], requestHeader)
    const updated = await call('PUT', `/webhook/${signed}`, { requestHeader })
    t.equal(updated.statusCode, 400, `update ${requestHeader}`)
    t.match(updated.json().data.errors, [{ field: 'body.requestHeader' }], `update ${requestHeader}`)
    const tested = await call('POST', '/webhook-test', { url: `${sink.url}/h`, requestHeader, signingSecret: secret })
    t.equal(tested.statusCode, 400, `test ${requestHeader}`)
    t.match(tested.json().data.errors, [{ field: 'body.requestHeader' }], `test ${requestHeader}`)
    const testedStored = await call('POST', '/webhook-test', { webhookID: signed, requestHeader })
    t.equal(testedStored.statusCode, 400, `test of the stored signed webhook ${requestHeader}`)
  }
  const authHeader = await call('POST', '/webhook', {
    tag: 's', url: `${sink.url}/h`, signingSecret: secret, authEnabled: true, authUrl: `${sink.url}/token`, authHeader: 'Webhook-Signature',
  })
  t.match(authHeader.json().data.errors, [{ field: 'body.authHeader', message: /Webhook-Signature is set by the service on a signed webhook .*cannot carry the token/ }])
  t.equal(sink.requests.length, 0, 'nothing was sent')
})

t.test('without a signing secret those names are the configuration\'s own and sent once; adding a secret is refused while the header is there', async (t) => {
  const sink = await startSink(t)
  const svc = await testApp(t)
  const call = api(svc)
  const created = await call('POST', '/webhook', { tag: 'u', url: `${sink.url}/h`, requestHeader: '{"Webhook-Id": "mine"}' })
  t.equal(created.statusCode, 201, created.body)
  const id = created.json().data.ID
  t.equal((await call('POST', '/webhook-test', { webhookID: id })).json().data.outcome, 'delivered')
  t.equal(sink.requests[0]?.headers['webhook-id'], 'mine', 'nothing is added without a secret')
  t.equal(sink.requests[0]?.headers['webhook-signature'], undefined)

  const adding = await call('PUT', `/webhook/${id}`, { signingSecret: secret })
  t.equal(adding.statusCode, 400, 'a secret cannot be added while requestHeader names webhook-id')
  t.match(adding.json().data.errors, [{ field: 'body.requestHeader', message: /Webhook-Id is set by the service on a signed webhook/ }])
  const fixed = await call('PUT', `/webhook/${id}`, { signingSecret: secret, requestHeader: '{"X-Own-Id": "mine"}' })
  t.equal(fixed.statusCode, 200, 'the secret is added with the header dropped in the same update')
  t.equal(fixed.json().data.signingEnabled, true)
  const removing = await call('PUT', `/webhook/${id}`, { signingSecret: null, requestHeader: '{"Webhook-Id": "mine"}' })
  t.equal(removing.statusCode, 200, 'removing the secret gives the names back to the configuration')
})

t.test('a signed send drops rendered headers of the signing names in any case, so the receiver gets one webhook-id and verifies', async (t) => {
  const sink = await startSink(t)
  const svc = await testApp(t)
  const call = api(svc)
  // A name rendered from data is only known at send time: validation sees X-Other against the empty credit.
  const named = await call('POST', '/webhook-test', {
    url: `${sink.url}/h`, requestBody: body, signingSecret: secret,
    requestHeader: '{ {{ fromWebhook "crm" "header" | default "X-Other" | toJson }}: "mine", "X-Kept": "yes" }', fromWebhook: { crm: { header: 'Webhook-Id' } },
  })
  t.equal(named.statusCode, 200, named.body)
  const data = named.json().data
  t.equal(data.outcome, 'delivered')
  t.notOk(Object.keys(data.request.headers).includes('Webhook-Id'), 'the answer shows the request as sent')
  const received = sink.requests[0]
  if (received === undefined) return t.fail('nothing received')
  t.equal(received.headers['webhook-id'], data.logID, 'one webhook-id, the send\'s')
  t.equal(received.headers['x-kept'], 'yes', 'other headers are kept')
  t.doesNotThrow(() => new Webhook(secret).verify(received.body, signatureOf(received)))

  const preview = await call('POST', '/webhook-test?send=false', {
    url: `${sink.url}/h`, requestBody: body, signingSecret: secret,
    requestHeader: '{ {{ fromWebhook "crm" "header" | default "X-Other" | toJson }}: "mine" }', fromWebhook: { crm: { header: 'WEBHOOK-SIGNATURE' } },
  })
  t.same(Object.keys(preview.json().data.request.headers).filter((h) => h.toLowerCase().startsWith('webhook-')).sort(), ['webhook-id', 'webhook-signature', 'webhook-timestamp'])
})

t.test('a signed webhook stored before the names were refused still sends one verifiable signature', async (t) => {
  const sink = await startSink(t)
  const svc = await testApp(t)
  const { runtime, organizationId } = svc
  const webhookId = newId()
  const commandContext = { organizationId, actorId: 'test', correlationId: newId() }
  const configuration = {
    ...configurationDefaults, tag: 'legacy', url: `${sink.url}/h`, requestBody: body,
    requestHeader: '{"Webhook-Id": "mine", "Webhook-Timestamp": "1", "WEBHOOK-SIGNATURE": "v1,forged", "X-Kept": "yes"}',
    signingSecret: runtime.dataKey.encrypt(secret),
  }
  const created = await runtime.commands.execute(webhookAggregate, webhookId, { type: 'CreateWebhook', mayReadScores: true, webhookId, organizationId, configuration, now: runtime.clock.now().toISOString() }, commandContext)
  await runtime.settle(created.position)
  const stored = await runtime.queries.webhooks.get(organizationId, webhookId)
  if (stored === null) return t.fail('the webhook was not stored')

  const sendId = newId()
  const report = await new WebhookSender(runtime).send({
    sendId, organizationId, webhookId, configuration: unsealed(stored.configuration, runtime.dataKey), context: emptyTemplateContext(), fromWebhook: () => null,
    trigger: { type: 'test', eventId: null, logId: null }, creditId: null, orderId: null, commandContext,
  })
  t.equal(report?.outcome, 'delivered')
  const received = sink.requests[0]
  if (received === undefined) return t.fail('nothing received')
  t.equal(received.headers['webhook-id'], sendId)
  t.not(received.headers['webhook-signature'], 'v1,forged')
  t.equal(received.headers['x-kept'], 'yes')
  t.doesNotThrow(() => new Webhook(secret).verify(received.body, signatureOf(received)), 'the receiver verifies it')
})


import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { pino } from 'pino'
import { Webhook } from 'standardwebhooks'
import t from 'tap'
import { webhookSendAggregate } from '../../src/commands/webhookSend.js'
import { createRuntime } from '../../src/runtime.js'
import { newId } from '../../src/shared/ids.js'
import { organizationApi } from '../helpers/api.js'
import { createTestApp } from '../helpers/app.js'
import { startSink } from '../helpers/sink.js'

const api = organizationApi

const testApp = (t: Parameters<typeof createTestApp>[0], config: Parameters<typeof createTestApp>[1] = {}) =>
  createTestApp(t, { config: { webhookAllowPrivateNetworks: true, ...config.config } })

const body = '{"credit": {{ .Credit.ID | toJson }}, "status": {{ .Credit.Status | toJson }}, "trigger": {{ .Trigger.Type | quote }}}'

t.test('a test send renders the empty credit, posts it, and answers with the complete request and response; it is logged', async (t) => {
  const sink = await startSink(t)
  sink.route('/hook', { status: 201, headers: { 'x-answer': 'yes' }, body: { data: { reference: 'R-77' }, items: [1, 2] } })
  const svc = await testApp(t)
  const call = api(svc)
  const response = await call('POST', '/webhook-test', {
    tag: 'erp', url: `${sink.url}/hook`, requestHeader: '{"X-Origin": "credit-service"}', requestBody: body,
    responseQueries: { reference: '$.data.reference', items: '$.items[*]', none: '$.missing' },
  })
  t.equal(response.statusCode, 200)
  const result = response.json().data
  t.match(result, {
    logID: /^[0-9a-f-]{36}$/, outcome: 'delivered', error: null, auth: null,
    request: { method: 'POST', url: `${sink.url}/hook`, headers: { 'X-Origin': 'credit-service', 'Content-Type': 'application/json' }, body: '{"credit": "", "status": "", "trigger": "test"}' },
    response: { status: 201, headers: { 'x-answer': 'yes' }, body: '{"data":{"reference":"R-77"},"items":[1,2]}' },
    responseQueryResults: { reference: 'R-77', items: [1, 2], none: null },
  })
  t.type(result.durationMs, 'number')
  t.equal(sink.requests.length, 1, 'sent once')
  t.match(sink.requests[0], { method: 'POST', path: '/hook', headers: { 'x-origin': 'credit-service', 'content-type': 'application/json' } })
  t.same(JSON.parse(sink.requests[0]?.body ?? ''), { credit: '', status: '', trigger: 'test' })

  const logs = await call('GET', '/webhook-test/logs')
  t.equal(logs.statusCode, 200)
  t.match(logs.json().data, [{ ID: result.logID, webhookID: null, tag: 'erp', status: 'delivered', trigger: { type: 'test' }, response: { status: 201 } }])
})

t.test('send=false only renders, and runs responseQueries over a sample response', async (t) => {
  const sink = await startSink(t)
  const svc = await testApp(t)
  const response = await api(svc)('POST', '/webhook-test?send=false', {
    url: `${sink.url}/hook`, requestBody: body, authEnabled: true, authUrl: `${sink.url}/token`, authRequestBody: '{"client": "x"}',
    responseQueries: { reference: '$.data.reference' }, fromWebhook: { scoring: { score: 700 } },
    sampleResponse: { status: 200, body: { data: { reference: 'S-1' } } },
  })
  t.equal(response.statusCode, 200)
  t.match(response.json().data, {
    request: { method: 'POST', url: `${sink.url}/hook`, headers: { Authorization: 'Bearer <token>' } },
    auth: { method: 'POST', url: `${sink.url}/token`, body: '{"client": "x"}' },
    responseQueryResults: { reference: 'S-1' }, error: null,
  })
  const rendered = await api(svc)('POST', '/webhook-test?send=false', { url: `${sink.url}/hook`, requestBody: '{{ fromWebhook "scoring" "score" }}', fromWebhook: { scoring: { score: 700 } } })
  t.equal(rendered.json().data.request.body, '700', 'fromWebhook values can be given for the test')
  t.equal(sink.requests.length, 0, 'nothing was sent')
  t.equal((await api(svc)('GET', '/webhook-test/logs')).json().data.length, 0, 'nothing was logged')
})

t.test('JSON nested deeper than 64 levels: a request body is refused, a destination\'s answer is logged but not queried', async (t) => {
  const sink = await startSink(t)
  const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth)
  sink.route('/deep', { status: 200, body: nested(5_000) })
  const svc = await testApp(t)
  const call = api(svc)
  const test = (sample: unknown) => svc.call({
    method: 'POST', url: '/v1/webhook-test?send=false', token: svc.adminToken, organizationId: svc.organizationId,
    headers: { 'content-type': 'application/json' },
    payload: `{"url": "${sink.url}/deep", "responseQueries": {"all": "$"}, "sampleResponse": {"body": ${sample}}}`,
  })
  const refused = await test(nested(5_000))
  t.equal(refused.statusCode, 400)
  t.same(refused.json(), { status: 'fail', data: { code: 'BAD_REQUEST', message: 'the JSON body nests deeper than 64 levels' } })
  t.equal((await test(nested(62))).statusCode, 200, 'a body 64 levels deep is taken')
  t.equal((await test(nested(63))).statusCode, 400, 'one 65 levels deep is not')
  const asText = await test(JSON.stringify(nested(5_000)))
  t.same(asText.json().data.responseQueryResults, { all: null }, 'a sample given as text is parsed, and too deep to query')

  const sent = await call('POST', '/webhook-test', { url: `${sink.url}/deep`, responseQueries: { all: '$' } })
  t.equal(sent.statusCode, 200)
  t.match(sent.json().data, { outcome: 'delivered', responseQueryResults: { all: null } })
  t.match((await call('GET', '/webhook-test/logs')).json().data, [{ ID: sent.json().data.logID, status: 'delivered' }], 'the send is recorded')
})

t.test('a test of a stored webhook uses its configuration (body fields override) and logs under it', async (t) => {
  const sink = await startSink(t)
  const svc = await testApp(t)
  const call = api(svc)
  const id = (await call('POST', '/webhook', { tag: 'stored', url: `${sink.url}/stored`, requestBody: body })).json().data.ID
  const sent = await call('POST', '/webhook-test', { webhookID: id, requestBody: '{"override": true}' })
  t.equal(sent.json().data.outcome, 'delivered')
  t.equal(sink.requests[0]?.path, '/stored')
  t.equal(sink.requests[0]?.body, '{"override": true}')
  const logs = await call('GET', `/webhook/${id}/logs`)
  t.match(logs.json(), { data: [{ webhookID: id, tag: 'stored', status: 'delivered' }], pagination: { total_items: 1 } })
  const stored = await call('GET', `/webhook/${id}`)
  t.equal(stored.json().data.requestBody, body, 'the stored configuration is unchanged')
})

t.test('a 500, a timeout and a refused connection are failed sends, recorded, never retried', async (t) => {
  const sink = await startSink(t)
  sink.route('/error', { status: 500, body: { error: 'boom' } })
  sink.route('/slow', { hang: true })
  const svc = await testApp(t, { config: { webhookTimeoutMs: 300 } })
  const call = api(svc)
  const closed = http.createServer()
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
  const deadPort = (closed.address() as AddressInfo).port
  await new Promise<void>((resolve) => closed.close(() => resolve()))

  const error = (await call('POST', '/webhook-test', { url: `${sink.url}/error`, requestBody: '{}' })).json().data
  t.match(error, { outcome: 'failed', error: { code: 'HTTP_STATUS', message: /500/ }, response: { status: 500, body: '{"error":"boom"}' }, responseQueryResults: {} })
  const timeout = (await call('POST', '/webhook-test', { url: `${sink.url}/slow`, requestBody: '{}' })).json().data
  t.match(timeout, { outcome: 'failed', error: { code: 'TIMEOUT' }, response: null })
  const refused = (await call('POST', '/webhook-test', { url: `http://127.0.0.1:${deadPort}/x`, requestBody: '{}' })).json().data
  t.match(refused, { outcome: 'failed', error: { code: 'CONNECTION_FAILED', message: /ECONNREFUSED/ }, response: null })

  t.equal(sink.requests.filter((r) => r.path === '/error').length, 1, 'the 500 was not retried')
  t.equal(sink.requests.filter((r) => r.path === '/slow').length, 1, 'the timeout was not retried')
  const logs = (await call('GET', '/webhook-test/logs?limit=10')).json().data
  t.same(logs.map((l: { status: string; error: { code: string } }) => [l.status, l.error.code]), [['failed', 'CONNECTION_FAILED'], ['failed', 'TIMEOUT'], ['failed', 'HTTP_STATUS']], 'newest first')
})

t.test('private destinations are refused unless WEBHOOK_ALLOW_PRIVATE_NETWORKS is set; the refusal is a logged failure', async (t) => {
  const sink = await startSink(t)
  const svc = await createTestApp(t)
  const response = await api(svc)('POST', '/webhook-test', { url: `${sink.url}/hook`, requestBody: '{}' })
  t.match(response.json().data, { outcome: 'failed', error: { code: 'DESTINATION_REFUSED', message: /127\.0\.0\.1/ } })
  t.equal(sink.requests.length, 0, 'nothing reached the private address')
  t.equal((await api(svc)('GET', '/webhook-test/logs')).json().data[0].error.code, 'DESTINATION_REFUSED')
})

t.test('a token from the token response body is injected as <tokenType> <token>; credentials are masked in the log', async (t) => {
  const sink = await startSink(t)
  sink.route('/token', { body: { data: { access_token: 'tok-123456' } } })
  const svc = await testApp(t)
  const call = api(svc)
  const result = (await call('POST', '/webhook-test', {
    url: `${sink.url}/hook`, requestBody: '{}', requestHeader: '{"X-Api-Key": "static-key-1"}',
    authEnabled: true, authUrl: `${sink.url}/token`, authMethod: 'POST',
    authRequestBody: '{"client_id": "me", "client_secret": "s3cr3t-value"}', authRequestHeader: '{"X-Client": "credit-service"}',
    tokenSourceKey: 'data.access_token', tokenType: 'Bearer', authHeader: 'Authorization',
  })).json().data
  t.equal(result.outcome, 'delivered')
  const [tokenRequest, hook] = sink.requests
  t.match(tokenRequest, { method: 'POST', path: '/token', headers: { 'x-client': 'credit-service', 'content-type': 'application/json' } })
  t.equal(tokenRequest?.body, '{"client_id": "me", "client_secret": "s3cr3t-value"}')
  t.equal(hook?.headers['authorization'], 'Bearer tok-123456', 'the token reached the destination')
  t.equal(hook?.headers['x-api-key'], 'static-key-1')
  const log = (await call('GET', '/webhook-test/logs')).json().data[0]
  t.equal(log.request.headers.Authorization, 'Bearer ***')
  t.equal(log.request.headers['X-Api-Key'], '***')
  t.match(log.auth, { request: { url: `${sink.url}/token`, body: /"client_secret":"\*\*\*"/ }, response: { status: 200, body: /"access_token":"\*\*\*"/ }, error: null })
  const everything = JSON.stringify(log)
  t.notMatch(everything, /tok-123456|s3cr3t-value|static-key-1/, 'no credential in the log')
  t.notMatch(JSON.stringify(result), /tok-123456|s3cr3t-value/, 'nor in the answer')
})

t.test('a token taken from a response header; a failed token request fails the send without sending it', async (t) => {
  const sink = await startSink(t)
  sink.route('/token', { headers: { 'X-Auth-Token': 'hdr-token-9' }, body: {} })
  sink.route('/denied', { status: 401, body: { error: 'invalid_client' } })
  const svc = await testApp(t)
  const call = api(svc)
  const viaHeader = (await call('POST', '/webhook-test', {
    url: `${sink.url}/hook`, requestBody: '{}', authEnabled: true, authUrl: `${sink.url}/token`, authMethod: 'GET',
    tokenHeader: 'X-Auth-Token', tokenType: '', authHeader: 'X-Token',
  })).json().data
  t.equal(viaHeader.outcome, 'delivered')
  t.equal(sink.requests[0]?.method, 'GET')
  t.equal(sink.requests[1]?.headers['x-token'], 'hdr-token-9', 'an empty tokenType sends the bare token')

  const denied = (await call('POST', '/webhook-test', { url: `${sink.url}/hook`, requestBody: '{}', authEnabled: true, authUrl: `${sink.url}/denied` })).json().data
  t.match(denied, { outcome: 'failed', error: { code: 'AUTH_FAILED', message: /401/ }, request: null, auth: { response: { status: 401 } } })
  const missing = (await call('POST', '/webhook-test', { url: `${sink.url}/hook`, requestBody: '{}', authEnabled: true, authUrl: `${sink.url}/token`, tokenSourceKey: 'nope' })).json().data
  t.match(missing, { outcome: 'failed', error: { code: 'TOKEN_NOT_FOUND' } })
  t.equal(sink.requests.filter((r) => r.path === '/hook').length, 1, 'only the first send reached the destination')
})

t.test('with a signing secret each send carries a valid Standard Webhooks signature', async (t) => {
  const sink = await startSink(t)
  const svc = await testApp(t)
  const secret = `whsec_${Buffer.alloc(32, 3).toString('base64')}`
  const result = (await api(svc)('POST', '/webhook-test', { url: `${sink.url}/hook`, requestBody: body, signingSecret: secret })).json().data
  const received = sink.requests[0]
  if (received === undefined) return t.fail('nothing received')
  t.equal(received.headers['webhook-id'], result.logID)
  const headers = { 'webhook-id': String(received.headers['webhook-id']), 'webhook-timestamp': String(received.headers['webhook-timestamp']), 'webhook-signature': String(received.headers['webhook-signature']) }
  t.doesNotThrow(() => new Webhook(secret).verify(received.body, headers), 'the receiver verifies it with the reference library')
  t.throws(() => new Webhook(`whsec_${Buffer.alloc(32, 4).toString('base64')}`).verify(received.body, headers), 'another secret does not verify')
})

t.test('template errors at send time and header templates that do not render to headers are failed, logged sends', async (t) => {
  const sink = await startSink(t)
  const svc = await testApp(t)
  const call = api(svc)
  const failed = (await call('POST', '/webhook-test', { url: `${sink.url}/hook`, requestBody: '{{ index .Credit.Installments 0 }}' })).json().data
  t.match(failed, { outcome: 'failed', error: { code: 'TEMPLATE_ERROR', message: /requestBody: 1:4: error calling index: index out of range: 0/ }, request: null })
  t.equal(sink.requests.length, 0)
  t.equal((await call('GET', '/webhook-test/logs')).json().data[0].status, 'failed')
  const invalid = await call('POST', '/webhook-test', { url: `${sink.url}/hook`, requestHeader: '{"X": {{ .Credit.Term }}}' })
  t.equal(invalid.statusCode, 400, 'an invalid configuration is refused before sending')
})

t.test('bodies are cut in the log at WEBHOOK_LOG_BODY_MAX_BYTES and kept whole in the answer', async (t) => {
  const sink = await startSink(t)
  sink.route('/big', { body: 'x'.repeat(5000) })
  const svc = await testApp(t, { config: { webhookLogBodyMaxBytes: 1024 } })
  const call = api(svc)
  const result = (await call('POST', '/webhook-test', { url: `${sink.url}/big`, requestBody: '{{ repeat 3000 "é" }}' })).json().data
  t.equal(result.request.body.length, 3000)
  t.equal(result.response.body.length, 5000)
  const log = (await call('GET', '/webhook-test/logs')).json().data[0]
  t.match(log.request, { bodyBytes: 6000, bodyTruncated: true })
  t.equal(Buffer.byteLength(log.request.body), 1024, 'cut on a character boundary')
  t.match(log.response, { bodyBytes: 5000, bodyTruncated: true })
  t.equal(log.response.body.length, 1024)
})

t.test('a send interrupted by a stop is recorded as unknown at the next start, and not sent again', async (t) => {
  const sink = await startSink(t)
  const svc = await testApp(t)
  const sendId = newId()
  await svc.runtime.commands.execute(webhookSendAggregate, sendId, {
    type: 'StartWebhookSend', sendId, organizationId: svc.organizationId, webhookId: null, tag: 'crash', trigger: { type: 'test', eventId: null, logId: null },
    creditId: null, orderId: null, request: { method: 'POST', url: `${sink.url}/hook`, headers: {}, body: '{}', bodyBytes: 2, bodyTruncated: false },
    now: new Date().toISOString(),
  }, { organizationId: svc.organizationId, actorId: null, correlationId: sendId })
  await svc.close()

  const restarted = await createRuntime(svc.config, { logger: pino({ level: 'silent' }) })
  t.teardown(() => restarted.close())
  await restarted.start()
  const log = await restarted.queries.webhookSends.get(svc.organizationId, sendId)
  t.match(log, { status: 'unknown', error: { code: 'OUTCOME_UNKNOWN', message: /not sent again/ }, request: { url: `${sink.url}/hook` } })
  t.equal(sink.requests.length, 0, 'nothing was sent')
  const again = await restarted.commands.execute(webhookSendAggregate, sendId, {
    type: 'StartWebhookSend', sendId, organizationId: svc.organizationId, webhookId: null, tag: 'crash', trigger: { type: 'test', eventId: null, logId: null },
    creditId: null, orderId: null, request: null, now: new Date().toISOString(),
  }, { organizationId: svc.organizationId, actorId: null, correlationId: sendId })
  t.equal(again.events.length, 0, 'the same send cannot start again')
})

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
import { firing } from '../helpers/firing.js'
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
    auth: { method: 'POST', url: `${sink.url}/token`, body: '{"client":"x"}' },
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

/** A body template that passes validation (bodies are only compiled) and whose render overflows the stack: toJson of a list nested 100,000 deep. */
const overflowing = '{{ $x := list }}{{ range 100000 }}{{ $x = list $x }}{{ end }}{{ toJson $x }}'

t.test('a render that overflows the stack is a TEMPLATE_ERROR at /webhook-test: a failed, logged send, and an error in a preview, never a 500', async (t) => {
  const sink = await startSink(t)
  const svc = await testApp(t)
  const call = api(svc)
  const sent = await call('POST', '/webhook-test', { url: `${sink.url}/hook`, requestBody: overflowing })
  t.equal(sent.statusCode, 200)
  t.match(sent.json().data, {
    outcome: 'failed', request: null, error: { code: 'TEMPLATE_ERROR', message: /^requestBody: 1:\d+: render failed: RangeError: Maximum call stack size exceeded/ },
  })
  t.match((await call('GET', '/webhook-test/logs')).json().data, [{ ID: sent.json().data.logID, status: 'failed', error: { code: 'TEMPLATE_ERROR' } }])
  const previewed = await call('POST', '/webhook-test?send=false', { url: `${sink.url}/hook`, requestBody: overflowing })
  t.equal(previewed.statusCode, 200)
  t.match(previewed.json().data, { request: null, error: { code: 'TEMPLATE_ERROR', message: /Maximum call stack size exceeded/ } })
  t.equal(sink.requests.length, 0, 'nothing was sent')
})

t.test('in a firing, a webhook whose render overflows the stack is logged as a failed send; the others are delivered and the trigger is not retried', async (t) => {
  const sink = await startSink(t)
  const svc = await testApp(t)
  const retries: unknown[] = []
  svc.runtime.logger.warn = (...args: unknown[]) => {
    if (args.some((arg) => typeof arg === 'string' && /retrying/.test(arg))) retries.push(args)
  }
  const f = await firing(svc, sink)
  const bad = await f.webhook({ tag: 'bad', path: '/bad', requestBody: overflowing })
  const good = await f.webhook({ tag: 'good', path: '/good', requestBody: '{"id": {{ .Credit.ID | toJson }}}' })
  const credit = await f.l.disbursedCredit({ creditLineId: await f.line({ onDeliveredWebhooks: [bad, good] }) })
  const sends = await f.settled(credit.ID, 2)
  t.match(sends.find((s) => s.webhookId === bad), { status: 'failed', request: null, error: { code: 'TEMPLATE_ERROR', message: /Maximum call stack size exceeded/ } })
  t.match(sends.find((s) => s.webhookId === good), { status: 'delivered' })
  t.same(f.received().map((r) => r.path), ['/good'])
  t.match((await f.api('GET', `/webhook/${bad}/logs`)).json().data, [{ status: 'failed', error: { code: 'TEMPLATE_ERROR' } }], 'in the webhook\'s log')
  t.same(retries, [], 'the trigger was handled once, not retried')
})

/** An answer whose `$..*` repeats a 200 KB string once per level above it, and seven strings of 12,000 characters. */
const largeAnswer = () => {
  let deep: unknown = { pad: 'x'.repeat(200_000) }
  for (let i = 0; i < 60; i++) deep = { n: deep }
  return { ref: 'R-1', chunks: Array.from({ length: 7 }, (_, i) => String(i).repeat(12_000)), deep }
}
const chunkQueries = Object.fromEntries(Array.from({ length: 7 }, (_, i) => [`c${i}`, `$.chunks[${i}]`]))

t.test('a response query result over 16 KiB, or beyond 64 KiB with the results before it, is kept as null and named as cut', async (t) => {
  const sink = await startSink(t)
  sink.route('/large', { body: largeAnswer() })
  const svc = await testApp(t)
  const call = api(svc)
  const responseQueries = { ref: '$.ref', all: '$..*', ...chunkQueries }
  const sent = (await call('POST', '/webhook-test', { url: `${sink.url}/large`, responseQueries })).json().data
  const expected = {
    ref: 'R-1', all: null, c0: '0'.repeat(12_000), c1: '1'.repeat(12_000), c2: '2'.repeat(12_000), c3: '3'.repeat(12_000), c4: '4'.repeat(12_000), c5: null, c6: null,
  }
  t.equal(sent.outcome, 'delivered')
  t.same(sent.responseQueryResults, expected)
  t.same(sent.responseQueryResultsCut, ['all', 'c5', 'c6'])
  const log = await call('GET', '/webhook-test/logs')
  t.ok(log.body.length < 200_000, `the log listing is small (${log.body.length} bytes)`)
  t.match(log.json().data, [{ responseQueryResults: expected, responseQueryResultsCut: ['all', 'c5', 'c6'] }])
  const previewed = (await call('POST', '/webhook-test?send=false', { url: `${sink.url}/large`, responseQueries, sampleResponse: { body: largeAnswer() } })).json().data
  t.same(previewed.responseQueryResults, expected, 'a preview over a sample response is cut the same way')
  t.same(previewed.responseQueryResultsCut, ['all', 'c5', 'c6'])
})

t.test('fromWebhook reads null for a response query result that was cut for its size', async (t) => {
  const sink = await startSink(t)
  sink.route('/writer', { body: largeAnswer() })
  const svc = await testApp(t)
  const f = await firing(svc, sink)
  const writer = await f.webhook({ tag: 'writer', path: '/writer', requestBody: '{}', responseQueries: { ref: '$.ref', all: '$..*' } })
  const reader = await f.webhook({ tag: 'reader', path: '/reader', requestBody: '{{ fromWebhook "writer" "all" | toJson }}|{{ fromWebhook "writer" "ref" }}' })
  const credit = await f.l.disbursedCredit({ creditLineId: await f.line({ onDeliveredWebhooks: [reader, writer] }) })
  const sends = await f.settled(credit.ID, 2)
  t.match(sends.find((s) => s.webhookId === writer), { status: 'delivered', responseQueryResults: { ref: 'R-1', all: null }, responseQueryResultsCut: ['all'] })
  t.equal(f.received().find((r) => r.path === '/reader')?.body, 'null|R-1')
})

t.test('header templates that can never be sent are refused at create, update and test naming the field; at send time they fail as INVALID_HEADERS', async (t) => {
  const sink = await startSink(t)
  const svc = await testApp(t)
  const call = api(svc)
  const unsendable = [
    '{"X-Name": "Pago €5"}', '{"X-Name": "a\\u0001b"}', '{"Content-Length": "1"}', '{"transfer-encoding": "chunked"}', '{"Host": "evil.example"}',
    '{"Connection": "close"}', '{"Keep-Alive": "timeout=5"}', '{"Expect": "100-continue"}', '{"Upgrade": "websocket"}', '{"TE": "trailers"}', '{"Trailer": "X-A"}',
    '{"X-Token": "a", "x-token": "b"}',
  ]
  const id = (await call('POST', '/webhook', { tag: 'h', url: `${sink.url}/h` })).json().data.ID
  for (const requestHeader of unsendable) {
    const created = await call('POST', '/webhook', { tag: 'h', url: `${sink.url}/h`, requestHeader })
    t.equal(created.statusCode, 400, requestHeader)
    t.match(created.json().data.errors, [{ field: 'body.requestHeader', message: /renders headers that cannot be sent: .*(cannot be given|cannot carry|given twice)/ }], requestHeader)
    t.equal((await call('PUT', `/webhook/${id}`, { authEnabled: true, authUrl: `${sink.url}/token`, authRequestHeader: requestHeader })).statusCode, 400, `update ${requestHeader}`)
    t.equal((await call('POST', '/webhook-test', { url: `${sink.url}/h`, requestHeader })).statusCode, 400, `test ${requestHeader}`)
  }
  const reserved = await call('POST', '/webhook', { tag: 'h', url: `${sink.url}/h`, authHeader: 'Host' })
  t.match(reserved.json().data.errors, [{ field: 'body.authHeader', message: /cannot carry the token/ }])
  const fine = await call('POST', '/webhook-test', { url: `${sink.url}/h`, requestHeader: '{"X-Name": "Gómez", "X-Tabbed": "a\\tb"}' })
  t.equal(fine.json().data.outcome, 'delivered', 'tab and Latin-1 characters can be sent')
  t.equal(sink.requests.length, 1)

  const fromData = await call('POST', '/webhook-test', {
    url: `${sink.url}/h`, requestHeader: '{"X-Name": {{ fromWebhook "crm" "name" | default "x" | toJson }}}', fromWebhook: { crm: { name: 'Pago €5' } },
  })
  t.match(fromData.json().data, { outcome: 'failed', request: null, error: { code: 'INVALID_HEADERS', message: /requestHeader renders headers that cannot be sent: X-Name has a character .* \(U\+20AC\)/ } })
  t.equal(sink.requests.length, 1, 'nothing more was sent')
  t.match((await call('GET', '/webhook-test/logs')).json().data[0], { status: 'failed', error: { code: 'INVALID_HEADERS' } })
})

t.test('a test send as an archived webhook answers 409 NOT_ACTIVE and sends nothing, as a re-send does; rendering it with send=false still works', async (t) => {
  const sink = await startSink(t)
  const svc = await testApp(t)
  const call = api(svc)
  const id = (await call('POST', '/webhook', { tag: 'old', url: `${sink.url}/old`, requestBody: body })).json().data.ID
  t.equal((await call('DELETE', `/webhook/${id}`)).statusCode, 200)
  const refused = await call('POST', '/webhook-test', { webhookID: id })
  t.equal(refused.statusCode, 409)
  t.equal(refused.json().data.code, 'NOT_ACTIVE')
  t.equal(sink.requests.length, 0, 'nothing was sent')
  t.equal((await call('GET', `/webhook/${id}/logs`)).json().data.length, 0, 'nothing was logged')
  const previewed = await call('POST', '/webhook-test?send=false', { webhookID: id })
  t.equal(previewed.statusCode, 200)
  t.match(previewed.json().data, { request: { url: `${sink.url}/old` }, error: null })
})

t.test('send=false masks credential headers and secret fields of the token request as the log does; the token header shows <tokenType> <token>', async (t) => {
  const sink = await startSink(t)
  const svc = await testApp(t)
  const previewed = await api(svc)('POST', '/webhook-test?send=false', {
    url: `${sink.url}/hook`, requestBody: '{}', requestHeader: '{"X-Api-Key": "static-key-1", "X-Origin": "crm"}',
    authEnabled: true, authUrl: `${sink.url}/token`, authRequestHeader: '{"X-Client-Secret": "hdr-secret-2"}',
    authRequestBody: '{"client_id": "me", "client_secret": "s3cr3t-value"}', tokenType: 'Bearer',
  })
  t.equal(previewed.statusCode, 200)
  const data = previewed.json().data
  t.match(data.request.headers, { 'X-Api-Key': '***', 'X-Origin': 'crm', Authorization: 'Bearer <token>' })
  t.match(data.auth, { headers: { 'X-Client-Secret': '***' }, body: /"client_id":"me","client_secret":"\*\*\*"/ })
  t.notMatch(previewed.body, /static-key-1|hdr-secret-2|s3cr3t-value/, 'no credential in the answer')
  t.equal(sink.requests.length, 0)
})

t.test('common credential headers are masked in the log and the answer: any name containing auth, key, token, secret, password or signature', async (t) => {
  const sink = await startSink(t)
  const svc = await testApp(t)
  const call = api(svc)
  const credentials = {
    'Ocp-Apim-Subscription-Key': 'k-1', 'X-Access-Key': 'k-2', 'X-Shared-Key': 'k-3', 'X-Auth': 'k-4', 'X-Origin-Secret': 'k-5', 'X-Signature': 'k-6',
    'X-Password': 'k-7', 'X-Session-Token': 'k-8',
  }
  const sent = (await call('POST', '/webhook-test', { url: `${sink.url}/hook`, requestHeader: JSON.stringify({ ...credentials, 'X-Origin': 'crm' }) })).json().data
  const masked = Object.fromEntries(Object.keys(credentials).map((name) => [name, '***']))
  t.match(sent.request.headers, { ...masked, 'X-Origin': 'crm' })
  t.match((await call('GET', '/webhook-test/logs')).json().data[0].request.headers, { ...masked, 'X-Origin': 'crm' })
  t.equal(sink.requests[0]?.headers['ocp-apim-subscription-key'], 'k-1', 'the destination got the credential itself')
})

import t from 'tap'
import { webhookAggregate } from '../../src/commands/webhook.js'
import { organizationApi } from '../helpers/api.js'
import { createTestApp } from '../helpers/app.js'
import { memberToken } from '../helpers/organizations.js'

const api = organizationApi

const valid = {
  tag: 'erp',
  url: 'https://erp.example.com/credits/{{ .Credit.ID }}',
  requestHeader: '{"X-Origin": "credit-service", "X-Credit": {{ .Credit.ID | toJson }}}',
  requestBody: '{"credit": {{ .Credit.ID | toJson }}, "debtor": {{ .Credit.Debtor.Natural.FirstName | toJson }}}',
  responseQueries: { reference: '$.data.reference' },
}

const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`

t.test('create answers 201 with the stored webhook: ID, every field, archived and timestamps; the secret is never shown', async (t) => {
  const svc = await createTestApp(t)
  const call = api(svc)
  const created = await call('POST', '/webhook', { ...valid, signingSecret: secret })
  t.equal(created.statusCode, 201)
  const webhook = created.json().data
  t.match(webhook, {
    ID: /^[0-9a-f-]{36}$/, ...valid, authEnabled: false, authUrl: '', authMethod: 'POST', authRequestBody: '', authRequestHeader: '',
    tokenSourceKey: '', tokenType: 'Bearer', authHeader: 'Authorization', tokenHeader: '', signingEnabled: true, scoresHidden: false, archived: false,
    createdAt: /Z$/, updatedAt: /Z$/, archivedAt: null,
  })
  t.notMatch(created.body, /whsec_/, 'the signing secret is not in the answer')
  const { state } = await svc.runtime.commands.load(webhookAggregate, webhook.ID)
  t.match(state.configuration?.signingSecret, /^v1\./, 'stored sealed with the data key')
  t.notMatch(JSON.stringify(state), /whsec_/)
  const read = await call('GET', `/webhook/${webhook.ID}`)
  t.same(read.json().data, webhook, 'read-your-writes')
})

t.test('invalid configuration answers 400 listing each bad field, templates with line and column', async (t) => {
  const svc = await createTestApp(t)
  const response = await api(svc)('POST', '/webhook', {
    tag: 'bad',
    url: 'ftp://files.example.com/{{ .Credit.ID }}',
    requestHeader: '{"X-Amount": {{ .Credit.Term }}}',
    requestBody: '{\n  "id": {{ .Credit.ID | toJson }},\n  "x": {{ .Credit.Nope }}\n}',
    authEnabled: true,
    authUrl: '{{ if }}',
    authRequestHeader: '["not", "an object"]',
    tokenSourceKey: '$.a[(',
    responseQueries: { ok: '$.a', broken: 'data.reference', unbalanced: '$.a[0' },
    signingSecret: 'not-a-secret',
  })
  t.equal(response.statusCode, 400)
  const { code, errors } = response.json().data
  t.equal(code, 'VALIDATION_ERROR')
  const byField = Object.fromEntries(errors.map((e: { field: string }) => [e.field, e]))
  t.match(byField['body.url'], { message: /http or https/ })
  t.match(byField['body.requestHeader'], { message: /JSON object of header strings/ })
  t.match(byField['body.requestBody'], { message: /line 3, column 11: can't evaluate field Nope in type Credit/, line: 3, column: 11 })
  t.match(byField['body.authUrl'], { message: /missing value for if/, line: 1 })
  t.match(byField['body.authRequestHeader'], { message: /JSON object/ })
  t.match(byField['body.tokenSourceKey'], { message: /unbalanced/ })
  t.match(byField['body.responseQueries.broken'], { message: /must start with \$/ })
  t.match(byField['body.responseQueries.unbalanced'], { message: /unbalanced/ })
  t.notOk(byField['body.responseQueries.ok'])
  t.match(byField['body.signingSecret'], { message: /whsec_/ })
  const list = await api(svc)('GET', '/webhooks')
  t.equal(list.json().pagination.total_items, 0, 'nothing was stored')
})

t.test('a template that tries to reach JavaScript is refused at create and update', async (t) => {
  const svc = await createTestApp(t)
  const call = api(svc)
  for (const requestBody of ['{{ .constructor }}', '{{ process }}', '{{ $.Credit.__proto__ }}', '{{ globalThis.process }}']) {
    const response = await call('POST', '/webhook', { ...valid, requestBody })
    t.equal(response.statusCode, 400, requestBody)
    t.equal(response.json().data.errors[0].field, 'body.requestBody')
  }
  const id = (await call('POST', '/webhook', valid)).json().data.ID
  const update = await call('PUT', `/webhook/${id}`, { requestBody: '{{ call .Credit.ID }}' })
  t.equal(update.statusCode, 400)
  t.match(update.json().data.errors[0], { field: 'body.requestBody', message: /function "call" not defined/ })
})

t.test('update takes any subset; archive keeps it readable, hides it from the list unless asked, and refuses changes', async (t) => {
  const svc = await createTestApp(t)
  const call = api(svc)
  const id = (await call('POST', '/webhook', valid)).json().data.ID
  const updated = await call('PUT', `/webhook/${id}`, { tag: 'erp-2', authEnabled: true, authUrl: 'https://auth.example.com/token', tokenHeader: 'X-Token' })
  t.equal(updated.statusCode, 200)
  t.match(updated.json().data, { tag: 'erp-2', authEnabled: true, authUrl: 'https://auth.example.com/token', tokenHeader: 'X-Token', url: valid.url })
  const noSecret = await call('PUT', `/webhook/${id}`, { signingSecret: secret })
  t.equal(noSecret.json().data.signingEnabled, true)
  t.equal((await call('PUT', `/webhook/${id}`, { signingSecret: null })).json().data.signingEnabled, false, 'null removes the secret')
  t.equal((await call('PUT', `/webhook/${id}`, {})).statusCode, 400, 'an empty update is refused')

  const archived = await call('DELETE', `/webhook/${id}`)
  t.equal(archived.statusCode, 200)
  t.match(archived.json().data, { ID: id, archived: true, archivedAt: /Z$/ })
  t.equal((await call('GET', `/webhook/${id}`)).json().data.archived, true, 'still readable')
  t.equal((await call('GET', '/webhooks')).json().data.length, 0, 'hidden from the list')
  t.same((await call('GET', '/webhooks?includeArchived=true')).json().data.map((w: { ID: string }) => w.ID), [id])
  const change = await call('PUT', `/webhook/${id}`, { tag: 'again' })
  t.equal(change.statusCode, 409)
  t.equal(change.json().data.code, 'NOT_ACTIVE')
  t.equal((await call('DELETE', `/webhook/${id}`)).statusCode, 200, 'archiving twice changes nothing')
})

t.test('lists are paginated and filter by tag', async (t) => {
  const svc = await createTestApp(t)
  const call = api(svc)
  for (const tag of ['a', 'b', 'c']) await call('POST', '/webhook', { ...valid, tag })
  const page = await call('GET', '/webhooks?page=2&limit=2')
  t.same(page.json().pagination, { current_page: 2, total_pages: 2, total_items: 3, items_per_page: 2 })
  t.same(page.json().data.map((w: { tag: string }) => w.tag), ['c'])
  t.same((await call('GET', '/webhooks?tag=b')).json().data.map((w: { tag: string }) => w.tag), ['b'])
})

t.test('unknown ids and other organizations\' webhooks are 404; permissions are required', async (t) => {
  const svc = await createTestApp(t)
  const call = api(svc)
  const id = (await call('POST', '/webhook', valid)).json().data.ID
  const missing = '00000000-0000-4000-8000-000000000000'
  for (const [method, url] of [['GET', `/webhook/${missing}`], ['PUT', `/webhook/${missing}`], ['DELETE', `/webhook/${missing}`], ['GET', `/webhook/${missing}/logs`]] as const) {
    const response = await call(method, url, method === 'PUT' ? { tag: 'x' } : undefined)
    t.equal(response.statusCode, 404, `${method} ${url}`)
    t.equal(response.json().data.code, 'NOT_FOUND')
  }
  const other = (await svc.call({ method: 'POST', url: '/v1/organizations', token: svc.adminToken, payload: { name: 'Other' } })).json().data.organization.id
  const foreign = api(svc, other)
  t.equal((await foreign('GET', `/webhook/${id}`)).statusCode, 404, 'another organization sees nothing')
  t.equal((await foreign('DELETE', `/webhook/${id}`)).statusCode, 404)
  t.equal((await foreign('GET', '/webhooks')).json().data.length, 0)
  const noOrganization = await svc.call({ method: 'GET', url: '/v1/webhooks', token: svc.adminToken })
  t.equal(noOrganization.statusCode, 400, 'the Organization-ID header is required')
})

t.test('a webhook is read with ReadWebhook, its send logs (credit and debtor data) only with ReadCredit as well', async (t) => {
  const svc = await createTestApp(t)
  const id = (await api(svc)('POST', '/webhook', valid)).json().data.ID
  const as = async (permissions: Parameters<typeof memberToken>[2]) => {
    const token = await memberToken(svc, svc.organizationId, permissions)
    return (url: string) => svc.call({ method: 'GET', url: `/v1${url}`, token, organizationId: svc.organizationId })
  }
  const webhookReader = await as(['ReadWebhook'])
  t.equal((await webhookReader(`/webhook/${id}`)).statusCode, 200)
  const logs = await webhookReader(`/webhook/${id}/logs`)
  t.equal(logs.statusCode, 403)
  t.match(logs.json().data, { code: 'FORBIDDEN', permission: 'ReadCredit' })
  t.equal((await (await as(['ReadWebhook', 'ReadCredit']))(`/webhook/${id}/logs`)).statusCode, 200)
  t.match((await (await as(['ReadCredit']))(`/webhook/${id}/logs`)).json().data, { code: 'FORBIDDEN', permission: 'ReadWebhook' })
})

t.test('a string escape beyond Unicode and a pipeline of thousands of stages are 400 syntax errors with line and column at create, update and test, not 500', async (t) => {
  const svc = await createTestApp(t)
  const call = api(svc)
  const id = (await call('POST', '/webhook', valid)).json().data.ID
  const templates: Array<[string, RegExp]> = [
    ['{{ "\\U0011FFFF" }}', /line 1, column 4: escape \\U0011FFFF is not a Unicode code point/],
    ['{{ "\\400" }}', /line 1, column 4: octal escape \\400 is above \\377/],
    [`{{1${'|add1'.repeat(12_000)}}}`, /nested deeper than 100 levels/],
  ]
  for (const [requestBody, message] of templates) {
    const label = requestBody.slice(0, 20)
    for (const [method, url] of [['POST', '/webhook'], ['PUT', `/webhook/${id}`], ['POST', '/webhook-test?send=false']] as const) {
      const response = await call(method, url, { ...(method === 'POST' ? valid : {}), requestBody })
      t.equal(response.statusCode, 400, `${method} ${url} ${label}`)
      t.match(response.json().data.errors, [{ field: 'body.requestBody', message, line: 1 }], `${method} ${url} ${label}`)
    }
  }
})

t.test('recursive descent followed by a bracket is a valid JSONPath for responseQueries and tokenSourceKey; a single dot before a bracket is not', async (t) => {
  const svc = await createTestApp(t)
  const call = api(svc)
  const responseQueries = { byFilter: '$..[?(@.id == 2)].ref', first: '$..[0]', quoted: "$..['ref']" }
  const created = await call('POST', '/webhook', { ...valid, responseQueries, tokenSourceKey: '$..[0].token' })
  t.equal(created.statusCode, 201, created.body)
  const previewed = await call('POST', '/webhook-test?send=false', {
    ...valid, responseQueries, sampleResponse: { body: { data: { items: [{ id: 1, ref: 'A' }, { id: 2, ref: 'B' }] } } },
  })
  t.match(previewed.json().data.responseQueryResults, { byFilter: 'B', first: { id: 1, ref: 'A' }, quoted: ['A', 'B'] })
  const refused = await call('POST', '/webhook', { ...valid, responseQueries: { dotted: '$.data.[items]' }, tokenSourceKey: '$.a.[0]' })
  t.equal(refused.statusCode, 400)
  t.match(refused.json().data.errors, [
    { field: 'body.tokenSourceKey', message: /not a valid JSONPath/ }, { field: 'body.responseQueries.dotted', message: /not a valid JSONPath/ },
  ])
})

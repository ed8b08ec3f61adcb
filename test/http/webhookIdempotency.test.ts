import t from 'tap'
import { keyedWebhookId } from '../../src/commands/webhook.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { createOrganization } from '../helpers/organizations.js'
import { streamEvents } from '../helpers/streams.js'
import { oneCreatedOthersReturned } from '../helpers/idempotency.js'

const erp = {
  tag: 'erp',
  url: 'https://erp.example.com/credits/{{ .Credit.ID }}',
  requestBody: '{"credit": {{ .Credit.ID | toJson }}}',
  authEnabled: true,
  authUrl: 'https://erp.example.com/oauth/token',
  authRequestBody: 'grant_type=password&username=svc&password=hunter2',
}

const webhooksOf = (svc: TestApp, organizationId = svc.organizationId) => ({
  post: (key: string | undefined, payload: object) => svc.call({
    method: 'POST', url: '/v1/webhook', token: svc.adminToken, organizationId, payload, ...(key === undefined ? {} : { headers: { 'idempotency-key': key } }),
  }),
  total: async (): Promise<number> => (await svc.call({ method: 'GET', url: '/v1/webhooks', token: svc.adminToken, organizationId })).json().pagination.total_items,
})

const streamOf = (svc: TestApp, webhookId: string) => streamEvents(svc, 'webhook', webhookId)

t.test('a webhook created with an Idempotency-Key: 201 first, 200 with the webhook as it is now when sent again, 409 for another body', async (t) => {
  const svc = await createTestApp(t)
  const api = webhooksOf(svc)
  const first = await api.post('erp-hook', erp)
  t.equal(first.statusCode, 201)
  const webhook = first.json().data
  t.equal(webhook.ID, keyedWebhookId(svc.organizationId, 'erp-hook'), 'the id derives from the organization and the Key')

  const reordered = Object.fromEntries(Object.entries(erp).reverse())
  const again = await api.post('erp-hook', reordered)
  t.equal(again.statusCode, 200, 'the same body in another key order')
  t.same(again.json(), first.json())

  const archived = await svc.call({ method: 'DELETE', url: `/v1/webhook/${webhook.ID}`, token: svc.adminToken, organizationId: svc.organizationId })
  t.ok(archived.statusCode < 300, `archived (${archived.statusCode})`)
  const afterArchive = await api.post('erp-hook', erp)
  t.equal(afterArchive.statusCode, 200)
  t.equal(afterArchive.json().data.archived, true, 'the webhook as it is now')

  for (const [what, body] of [
    ['another password', { ...erp, authRequestBody: 'grant_type=password&username=svc&password=hunter3' }],
    ['another tag', { ...erp, tag: 'erp-2' }],
    ['a default named', { ...erp, authMethod: 'POST' }],
  ] as const) {
    const reused = await api.post('erp-hook', body)
    t.equal(reused.statusCode, 409, what)
    t.same(reused.json().data, {
      code: 'IDEMPOTENCY_KEY_REUSED', message: 'this Idempotency-Key was already used for a different webhook creation request', key: 'erp-hook', webhookId: webhook.ID,
    })
  }
  const events = await streamOf(svc, webhook.ID)
  t.same(events.map((event) => event.type), ['WebhookCreated', 'WebhookArchived'], 'one creation')
  t.equal(await api.total(), 0, 'archived webhooks are not listed: none other was made')
})

t.test('the request digest is keyed (a body may hold a signing secret): the recorded hash is not the plain SHA-256 of the body', async (t) => {
  const svc = await createTestApp(t)
  const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`
  await webhooksOf(svc).post('erp-digest', { ...erp, signingSecret: secret })
  const [created] = await streamOf(svc, keyedWebhookId(svc.organizationId, 'erp-digest'))
  const { createHash } = await import('node:crypto')
  const { canonical } = await import('../../src/commands/idempotency.js')
  const plain = createHash('sha256').update(JSON.stringify(canonical({ ...erp, signingSecret: secret }))).digest('hex')
  t.match(created?.data, { idempotency: { key: 'erp-digest', requestHash: /^[0-9a-f]{64}$/ } })
  t.not((created?.data as { idempotency: { requestHash: string } }).idempotency.requestHash, plain, 'a guess at a secret in the body cannot be checked against the log')
})

t.test('concurrent creations with one Key make one webhook; another organization\'s Key is its own; no Key, a new webhook each time', async (t) => {
  const svc = await createTestApp(t)
  const api = webhooksOf(svc)
  const racing = await Promise.all(Array.from({ length: 6 }, () => api.post('erp-race', erp)))
  oneCreatedOthersReturned(t, racing)
  t.same([...new Set(racing.map((r) => r.json().data.ID))], [keyedWebhookId(svc.organizationId, 'erp-race')])
  t.same((await streamOf(svc, keyedWebhookId(svc.organizationId, 'erp-race'))).map((event) => event.type), ['WebhookCreated'])

  const other = (await createOrganization(svc, 'Otra S.A.')).id
  const theirs = await webhooksOf(svc, other).post('erp-race', erp)
  t.equal(theirs.statusCode, 201)
  t.equal(theirs.json().data.ID, keyedWebhookId(other, 'erp-race'))

  const plain = await Promise.all([api.post(undefined, erp), api.post(undefined, erp)])
  t.same(plain.map((r) => r.statusCode), [201, 201])
  t.equal(await api.total(), 3)
  t.equal((await api.post('tab\there', erp)).statusCode, 400)
  t.equal((await api.post('erp-bad', { ...erp, url: 'ftp://erp.example.com' })).statusCode, 400)
  t.equal((await api.post('erp-bad', erp)).statusCode, 201, 'a refused creation leaves its Key free')
})

import t from 'tap'
import { recordRequest } from '../../src/webhooks/masking.js'
import { createTestApp } from '../helpers/app.js'
import { firing } from '../helpers/firing.js'
import { startSink } from '../helpers/sink.js'

const testApp = (t: Parameters<typeof createTestApp>[0]) => createTestApp(t, { config: { webhookAllowPrivateNetworks: true } })

const TOKEN = 'echoed-token-xyz'

t.test('a fetched token the destination echoes is masked in the response-query results of the answer, the logs and fromWebhook', async (t) => {
  const sink = await startSink(t)
  sink.route('/token', { body: { access_token: TOKEN } })
  // A gateway or debugging endpoint that answers with the request it received.
  sink.route('/h', { body: { headers: { authorization: `Bearer ${TOKEN}` }, [TOKEN]: [`before ${TOKEN} after`], id: 7 } })
  const svc = await testApp(t)
  const f = await firing(svc, sink)
  const hook = await f.webhook({
    tag: 'gw', path: '/h', requestBody: '{}', authEnabled: true, authUrl: `${sink.url}/token`,
    responseQueries: { auth: '$.headers.authorization', whole: '$', id: '$.id' },
  })
  const masked = { auth: 'Bearer ***', whole: { headers: { authorization: 'Bearer ***' }, '***': ['before *** after'], id: 7 }, id: 7 }

  const tested = await f.api('POST', '/webhook-test', { webhookID: hook })
  t.match(tested.json().data, { outcome: 'delivered' }, tested.body)
  t.same(tested.json().data.responseQueryResults, masked, 'in the answer of a test send')

  const credit = await f.l.disbursedCredit({ creditLineId: await f.line({ onDeliveredWebhooks: [hook] }) })
  const [send] = await f.settled(credit.ID, 1)
  t.match(send, { status: 'delivered' })
  t.same(send?.responseQueryResults, masked, 'in the send record')
  const logs = await f.api('GET', `/webhook/${hook}/logs`)
  t.notMatch(logs.body, TOKEN, 'nowhere in the webhook\'s log')
  t.notMatch((await f.api('GET', `/credits/${credit.ID}/webhook-logs`)).body, TOKEN, 'nowhere in the credit\'s log')
  const stored = await svc.runtime.queries.webhookResponseValues.forCredit(svc.organizationId, credit.ID)
  t.same(stored.get('gw')?.get('auth'), 'Bearer ***', 'what fromWebhook reads')
})

t.test('form fields of a token request named like secrets are masked as the same JSON fields are', async (t) => {
  const rules = { headers: [], secrets: [], maskJsonFields: true, maxBodyBytes: 65_536 }
  const recorded = (body: string) => recordRequest({ method: 'POST', url: 'https://idp.example/token', headers: {}, body }, rules).body
  const secretNames = ['client_secret', 'passwd', 'user_credential', 'api_key', 'client_assertion']
  const sent = Object.fromEntries([['client_id', 'c'], ...secretNames.map((name) => [name, 'eyJhbGciOiJSUzI1NiJ9.e30.c2ln'])])
  const masked = Object.fromEntries([['client_id', 'c'], ...secretNames.map((name) => [name, '***'])])
  t.equal(recorded(JSON.stringify(sent)), JSON.stringify(masked), 'JSON')
  t.equal(recorded(new URLSearchParams(sent).toString()), Object.entries(masked).map(([name, value]) => `${name}=${value}`).join('&'), 'form-encoded (RFC 7523 sends client_assertion so)')
  t.equal(recorded('client%5Fassertion=eyJ.e30.c2ln&grant_type=client_credentials'), 'client%5Fassertion=***&grant_type=client_credentials', 'a name is read as the receiver decodes it')
})

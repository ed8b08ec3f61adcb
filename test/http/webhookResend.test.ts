import t from 'tap'
import { Webhook } from 'standardwebhooks'
import { newId } from '../../src/shared/ids.js'
import { organizationApi } from '../helpers/api.js'
import { createTestApp } from '../helpers/app.js'
import { firing } from '../helpers/firing.js'
import { createOrganization } from '../helpers/lending.js'
import { memberToken } from '../helpers/organizations.js'
import { startSink } from '../helpers/sink.js'

const testApp = (t: Parameters<typeof createTestApp>[0]) => createTestApp(t, { config: { webhookAllowPrivateNetworks: true } })

const body = '{"status": {{ .Credit.Status | quote }}, "outstanding": {{ .Credit.OutstandingBalance | quote }}, "trigger": {{ .Trigger.Type | quote }}, ' +
  '"original": {{ .Trigger.OriginalType | quote }}, "repeats": {{ .Trigger.LogID | quote }}, "order": {{ .Order.ID | quote }}}'

t.test('a failed send is re-sent by hand, rendered against the credit as it is now, logged as a manual send', async (t) => {
  const sink = await startSink(t)
  sink.route('/erp', { status: 503, body: { error: 'maintenance' } })
  const svc = await testApp(t)
  const f = await firing(svc, sink)
  const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`
  const hook = await f.webhook({ tag: 'erp', path: '/erp', requestBody: body, signingSecret: secret })
  const credit = await f.l.disbursedCredit({ creditLineId: await f.line({ onOrderWebhooks: [hook] }) })
  const order = await f.approvedOrder(credit.ID, credit.installments[0]!.ID)
  const [failed] = await f.settled(credit.ID, 1)
  if (failed === undefined) return t.fail('no send')
  t.match(failed, { status: 'failed', error: { code: 'HTTP_STATUS' }, orderId: order.ID })
  const outstandingAtApproval = JSON.parse(sink.requests[0]?.body ?? '').outstanding

  await f.approvedOrder(credit.ID, credit.installments[1]!.ID)
  await f.settled(credit.ID, 2)
  sink.route('/erp', { status: 200, body: { received: true } })
  const resent = await f.api('POST', `/webhook/${hook}/request`, { creditID: credit.ID, logID: failed._id })
  t.equal(resent.statusCode, 200, resent.body)
  const result = resent.json().data
  t.match(result, { outcome: 'delivered', response: { status: 200 }, error: null })
  t.not(result.logID, failed._id, 'a new send with its own log')
  const received = sink.requests.at(-1)
  const rendered = JSON.parse(received?.body ?? '')
  t.match(rendered, { status: 'Desembolsado', trigger: 'manual', original: 'PaymentOrderApproved', repeats: failed._id, order: order.ID })
  t.not(rendered.outstanding, outstandingAtApproval, 'rendered afresh: the second payment shows')
  t.equal(received?.headers['webhook-id'], failed._id, 'the Standard Webhooks message id of the send it repeats, so receivers can deduplicate')
  const headers = { 'webhook-id': String(received?.headers['webhook-id']), 'webhook-timestamp': String(received?.headers['webhook-timestamp']), 'webhook-signature': String(received?.headers['webhook-signature']) }
  t.doesNotThrow(() => new Webhook(secret).verify(received?.body ?? '', headers))

  const again = await f.api('POST', `/webhook/${hook}/request`, { creditID: credit.ID, logID: result.logID })
  t.equal(JSON.parse(sink.requests.at(-1)?.body ?? '').original, 'PaymentOrderApproved', 'a re-send of a re-send names the original trigger')
  t.equal(sink.requests.at(-1)?.headers['webhook-id'], failed._id)

  const logs = await f.api('GET', `/credits/${credit.ID}/webhook-logs`)
  t.equal(logs.statusCode, 200)
  t.match(logs.json(), {
    data: [
      { ID: again.json().data.logID, trigger: { type: 'manual', logID: result.logID } },
      { ID: result.logID, webhookID: hook, status: 'delivered', trigger: { type: 'manual', eventID: null, logID: failed._id }, orderID: order.ID },
      { trigger: { type: 'PaymentOrderApproved' } },
      { ID: failed._id, status: 'failed' },
    ],
    pagination: { total_items: 4 },
  }, 'newest first')
  t.equal((await f.api('GET', `/webhook/${hook}/logs`)).json().data.length, 4, 'the webhook log shows them too')
})

t.test('a re-send names an existing webhook, credit and log of that webhook and credit; an archived webhook is not sent', async (t) => {
  const sink = await startSink(t)
  const svc = await testApp(t)
  const f = await firing(svc, sink)
  const hook = await f.webhook({ tag: 'a', path: '/a', requestBody: '{}' })
  const otherHook = await f.webhook({ tag: 'b', path: '/b', requestBody: '{}' })
  const line = await f.line({ onDeliveredWebhooks: [hook, otherHook] })
  const credit = await f.l.disbursedCredit({ creditLineId: line })
  const other = await f.l.disbursedCredit({ creditLineId: line })
  const logOf = async (creditId: string, webhookId: string) => (await f.settled(creditId, 2)).find((s) => s.webhookId === webhookId)?._id ?? ''
  const log = await logOf(credit.ID, hook)
  await f.settled(other.ID, 2)
  const resend = (webhookId: string, payload: object, api = f.api) => api('POST', `/webhook/${webhookId}/request`, payload)
  const sent = sink.requests.length

  t.equal((await resend(newId(), { creditID: credit.ID, logID: log })).statusCode, 404, 'unknown webhook')
  t.equal((await resend(hook, { creditID: newId(), logID: log })).statusCode, 404, 'unknown credit')
  t.equal((await resend(hook, { creditID: credit.ID, logID: newId() })).statusCode, 404, 'unknown log')
  t.equal((await resend(hook, { creditID: credit.ID, logID: await logOf(credit.ID, otherHook) })).statusCode, 404, 'a log of another webhook')
  t.equal((await resend(hook, { creditID: credit.ID, logID: await logOf(other.ID, hook) })).statusCode, 404, 'a log of another credit')
  t.equal((await resend(hook, { creditID: other.ID, logID: log })).statusCode, 404, 'the log under another credit')
  const elsewhere = organizationApi(svc, await createOrganization(svc, 'Otra S.A.S.'))
  t.equal((await resend(hook, { creditID: credit.ID, logID: log }, elsewhere)).statusCode, 404, 'from another organization')
  t.equal((await elsewhere('GET', `/credits/${credit.ID}/webhook-logs`)).statusCode, 404, 'another organization does not see the credit\'s logs')
  const invalid = await resend(hook, { creditID: 'nope', logID: log, extra: 1 })
  t.equal(invalid.statusCode, 400)
  t.equal(invalid.json().status, 'fail')
  t.equal(sink.requests.length, sent, 'nothing was sent')

  await f.api('DELETE', `/webhook/${hook}`)
  const archived = await resend(hook, { creditID: credit.ID, logID: log })
  t.equal(archived.statusCode, 409)
  t.equal(archived.json().data.code, 'NOT_ACTIVE')
  t.equal(sink.requests.length, sent)
})

t.test('a webhook\'s send logs and a re-send for a credit need ReadCredit besides the webhook permission; the built-in templates keep what they had', async (t) => {
  const sink = await startSink(t)
  const svc = await testApp(t)
  const f = await firing(svc, sink)
  const hook = await f.webhook({ tag: 'crm', path: '/crm', requestBody: '{"debtor": {{ .Credit.Debtor.Natural.FirstName | quote }}}' })
  const credit = await f.l.disbursedCredit({ creditLineId: await f.line({ onDeliveredWebhooks: [hook] }) })
  const [log] = await f.settled(credit.ID, 1)
  if (log === undefined) return t.fail('no send')
  const as = async (role: Parameters<typeof memberToken>[2]) => {
    const token = await memberToken(svc, svc.organizationId, role)
    return {
      logs: () => svc.call({ method: 'GET', url: `/v1/webhook/${hook}/logs`, token, organizationId: svc.organizationId }),
      resend: () => svc.call({ method: 'POST', url: `/v1/webhook/${hook}/request`, token, organizationId: svc.organizationId, payload: { creditID: credit.ID, logID: log._id } }),
    }
  }
  const sent = sink.requests.length

  const hooksOnly = await as(['ReadWebhook', 'WriteWebhook'])
  for (const [name, response] of [['logs', await hooksOnly.logs()], ['re-send', await hooksOnly.resend()]] as const) {
    t.equal(response.statusCode, 403, name)
    t.match(response.json().data, { code: 'FORBIDDEN', permission: 'ReadCredit' }, `${name}: the hook's envelope, naming ReadCredit`)
    t.notMatch(response.body, /Ana/, `${name}: no debtor data`)
  }
  t.equal(sink.requests.length, sent, 'nothing was re-sent')

  const withCredit = await as(['ReadWebhook', 'WriteWebhook', 'ReadCredit'])
  t.equal((await withCredit.logs()).statusCode, 200)
  t.equal((await withCredit.resend()).statusCode, 200)
  const analyst = await as('analyst')
  t.equal((await analyst.logs()).statusCode, 200, 'the Analyst template still reads the logs')
  t.match((await analyst.resend()).json().data, { code: 'FORBIDDEN', permission: 'WriteWebhook' }, 'and still may not re-send')
  const administrator = await as('administrator')
  t.equal((await administrator.logs()).statusCode, 200, 'the Administrator template reads the logs')
  t.equal((await administrator.resend()).statusCode, 200, 'and re-sends')
})

t.test('a credit\'s webhook logs are paginated, newest first', async (t) => {
  const sink = await startSink(t)
  const svc = await testApp(t)
  const f = await firing(svc, sink)
  const hooks = [await f.webhook({ tag: 'a', path: '/a', requestBody: '{}' }), await f.webhook({ tag: 'b', path: '/b', requestBody: '{}' })]
  const credit = await f.l.disbursedCredit({ creditLineId: await f.line({ onDeliveredWebhooks: hooks, onOrderWebhooks: [hooks[0]!] }) })
  await f.settled(credit.ID, 2)
  await f.approvedOrder(credit.ID, credit.installments[0]!.ID)
  await f.settled(credit.ID, 3)
  const page = (n: number) => f.api('GET', `/credits/${credit.ID}/webhook-logs?limit=2&page=${n}`)
  const first = (await page(1)).json()
  const second = (await page(2)).json()
  t.match(first, { pagination: { total_items: 3 } })
  t.equal(first.data.length, 2)
  t.equal(second.data.length, 1)
  t.equal(first.data[0].trigger.type, 'PaymentOrderApproved', 'the newest first')
  t.equal(second.data[0].trigger.type, 'CreditDisbursed')
  t.equal((await f.api('GET', `/credits/${newId()}/webhook-logs`)).statusCode, 404)
})

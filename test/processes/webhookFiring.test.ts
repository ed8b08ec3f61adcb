import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { Decimal } from 'decimal.js'
import t from 'tap'
import { createTestApp } from '../helpers/app.js'
import { pdfBytes } from '../helpers/files.js'
import { firing } from '../helpers/firing.js'
import { startSink } from '../helpers/sink.js'

const testApp = (t: Parameters<typeof createTestApp>[0], config: Record<string, unknown> = {}) =>
  createTestApp(t, { config: { webhookAllowPrivateNetworks: true, ...config } })

const idBody = '{"credit": {{ .Credit.ID | quote }}, "trigger": {{ .Trigger.Type | quote }}, "order": {{ .Order.ID | quote }}}'

t.test('each trigger fires the webhooks its credit line links for it, once; archived, unlinked and other-trigger webhooks stay silent', async (t) => {
  const sink = await startSink(t)
  const svc = await testApp(t)
  const f = await firing(svc, sink)
  const deliveredA = await f.webhook({ tag: 'a', path: '/delivered-a', requestBody: idBody })
  const deliveredB = await f.webhook({ tag: 'b', path: '/delivered-b', requestBody: idBody })
  const archived = await f.webhook({ tag: 'archived', path: '/archived', requestBody: idBody })
  const onOrder = await f.webhook({ tag: 'order', path: '/order', requestBody: idBody })
  await f.webhook({ tag: 'unlinked', path: '/unlinked', requestBody: idBody })
  const line = await f.line({ onDeliveredWebhooks: [deliveredA, deliveredB, archived], onOrderWebhooks: [onOrder] })
  t.equal((await f.api('DELETE', `/webhook/${archived}`)).statusCode, 200)
  await f.quiesce()
  t.same(f.received(), [], 'creating and linking webhooks sends nothing')

  const credit = await f.l.disbursedCredit({ creditLineId: line })
  const delivered = await f.settled(credit.ID, 2)
  await f.quiesce()
  t.same(f.received().map((r) => r.path).sort(), ['/delivered-a', '/delivered-b'], 'the disbursement reached each linked active webhook once')
  let disbursedEvent: { id: string } | undefined
  for await (const event of svc.runtime.history(`credit-${credit.ID}`)) if (event.type === 'CreditDisbursed') disbursedEvent = event
  t.same(delivered.map((s) => s.trigger.eventId), [disbursedEvent?.id, disbursedEvent?.id])
  t.ok(delivered.every((s) => s.status === 'delivered' && s.trigger.type === 'CreditDisbursed' && s.orderId === null))
  t.same(JSON.parse(f.received()[0]?.body ?? ''), { credit: credit.ID, trigger: 'CreditDisbursed', order: '' })

  const order = await f.approvedOrder(credit.ID, credit.installments[0]!.ID)
  const all = await f.settled(credit.ID, 3)
  await f.quiesce()
  t.same(f.received().map((r) => r.path).sort(), ['/delivered-a', '/delivered-b', '/order'], 'the approval reached the order webhook only')
  t.match(all[0], { webhookId: onOrder, status: 'delivered', trigger: { type: 'PaymentOrderApproved' }, orderId: order.ID })
  t.same(JSON.parse(f.received().find((r) => r.path === '/order')?.body ?? ''), { credit: credit.ID, trigger: 'PaymentOrderApproved', order: order.ID })
  t.equal((await f.sendsOf(credit.ID)).length, 3, 'nothing else was logged for the credit')
})

t.test('a firing renders the real credit: debtor, profile file ids, installments, the order with its payment applied', async (t) => {
  const sink = await startSink(t)
  const svc = await testApp(t)
  const f = await firing(svc, sink)
  const body = [
    '{"name": {{ .Credit.Debtor.Natural.FirstName | quote }}, "debtor": {{ .Credit.Debtor.Name | quote }},',
    ' "certificate": {{ .Credit.Debtor.Natural.WorkCertificateFileID | quote }}, "type": {{ .Credit.Debtor.Type | quote }},',
    ' "status": {{ .Credit.Status | quote }}, "line": {{ .Credit.CreditLineID | quote }}, "org": {{ .Organization.Name | quote }},',
    ' "installments": [{{ range $i, $e := .Credit.Installments }}{{ if $i }},{{ end }}{"n": {{ $e.Number }}, "amount": {{ $e.Amount | quote }}, "status": {{ $e.Status | quote }}}{{ end }}],',
    ' "order": {"id": {{ .Order.ID | quote }}, "amount": {{ .Order.Amount | quote }}, "installment": {{ .Order.InstallmentNumber }}, "status": {{ .Order.Status | quote }}, "approver": {{ .Order.ApproverID | quote }}},',
    ' "outstanding": {{ .Credit.OutstandingBalance | quote }}, "paid": {{ .Credit.InstallmentsPaid }}}',
  ].join('')
  const onDelivered = await f.webhook({ tag: 'delivered', path: '/delivered', requestBody: body })
  const onOrder = await f.webhook({ tag: 'order', path: '/order', requestBody: body })
  const line = await f.line({ onDeliveredWebhooks: [onDelivered], onOrderWebhooks: [onOrder] })
  const credit = await f.l.disbursedCredit({ creditLineId: line, term: 6 })
  const debtorId = (await f.l.call('GET', `/v1/credits/${credit.ID}`)).json().data.credit.debtorId
  const uploaded = await svc.call({
    method: 'PUT', url: `/v1/profiles/${debtorId}/files/work-certificate`, token: svc.adminToken, payload: pdfBytes,
    headers: { 'config-organization-id': svc.organizationId, 'organization-id': svc.organizationId, 'content-type': 'application/pdf' },
  })
  t.equal(uploaded.statusCode, 201, uploaded.body)
  const fileId = uploaded.json().data.file.fileId

  await f.settled(credit.ID, 1)
  const atDisbursement = JSON.parse(sink.requests.find((r) => r.path === '/delivered')?.body ?? '')
  t.match(atDisbursement, { name: 'Ana', debtor: 'Ana Gómez', type: 'natural', status: 'Desembolsado', line, org: 'Default organization' })
  t.equal(atDisbursement.installments.length, 6)
  t.same(atDisbursement.installments[0], { n: 1, amount: credit.installments[0]!.amount, status: 'pending' })
  t.same(atDisbursement.order, { id: '', amount: '0', installment: 0, status: '', approver: '' }, '.Order is zero-valued on a disbursement')

  const first = credit.installments[0]!
  const order = await f.approvedOrder(credit.ID, first.ID)
  await f.settled(credit.ID, 2)
  const atApproval = JSON.parse(sink.requests.find((r) => r.path === '/order')?.body ?? '')
  t.equal(atApproval.certificate, fileId, 'the uploaded work certificate is named by its file id, never its content')
  t.same(atApproval.order, { id: order.ID, amount: first.amount, installment: 1, status: 'completed', approver: 'test-admin' })
  t.same(atApproval.installments[0], { n: 1, amount: first.amount, status: 'paid' }, 'the approved payment shows on the credit')
  t.equal(atApproval.paid, 1)
  const fetched = await svc.call({ method: 'GET', url: `/v1/debtor/${debtorId}/profile/work-certificate/${fileId}`, token: svc.adminToken, headers: { 'organization-id': svc.organizationId, 'config-organization-id': svc.organizationId } })
  t.equal(fetched.statusCode, 200, 'the receiver fetches the file with the id it was sent')
})

t.test('a firing fetches a token first and sends it as <tokenType> <token>', async (t) => {
  const sink = await startSink(t)
  sink.route('/token', { body: { access_token: 'fired-token-1' } })
  const svc = await testApp(t)
  const f = await firing(svc, sink)
  const hook = await f.webhook({
    tag: 'erp', path: '/hook', requestBody: '{"credit": {{ .Credit.ID | quote }}}', authEnabled: true, authUrl: `${sink.url}/token`,
    authRequestBody: '{"client_id": "service", "credit": {{ .Credit.ID | quote }}}',
  })
  const credit = await f.l.disbursedCredit({ creditLineId: await f.line({ onDeliveredWebhooks: [hook] }) })
  const [send] = await f.settled(credit.ID, 1)
  t.same(sink.requests.map((r) => r.path), ['/token', '/hook'])
  t.equal(JSON.parse(sink.requests[0]?.body ?? '').credit, credit.ID, 'the token request is a template too')
  t.equal(sink.requests[1]?.headers['authorization'], 'Bearer fired-token-1')
  t.match(send, { status: 'delivered', request: { headers: { Authorization: 'Bearer ***' } }, auth: { response: { status: 200 } } })
  t.notMatch(JSON.stringify(send), /fired-token-1/, 'the token is not logged')
})

t.test('a timeout, a 500 and a refused connection are failed sends of the firing, never retried', async (t) => {
  const sink = await startSink(t)
  sink.route('/error', { status: 500, body: { error: 'boom' } })
  sink.route('/slow', { hang: true })
  const svc = await testApp(t, { webhookTimeoutMs: 300 })
  const f = await firing(svc, sink)
  const closed = http.createServer()
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
  const deadPort = (closed.address() as AddressInfo).port
  await new Promise<void>((resolve) => closed.close(() => resolve()))
  const error = await f.webhook({ tag: 'error', path: '/error', requestBody: '{}' })
  const slow = await f.webhook({ tag: 'slow', path: '/slow', requestBody: '{}' })
  const refusedId = (await f.api('POST', '/webhook', { tag: 'refused', url: `http://127.0.0.1:${deadPort}/x`, requestBody: '{}' })).json().data.ID
  const credit = await f.l.disbursedCredit({ creditLineId: await f.line({ onDeliveredWebhooks: [error, slow, refusedId] }) })
  const sends = await f.settled(credit.ID, 3)
  await f.quiesce()
  const byWebhook = new Map(sends.map((s) => [s.webhookId, s]))
  t.match(byWebhook.get(error), { status: 'failed', error: { code: 'HTTP_STATUS' }, response: { status: 500 } })
  t.match(byWebhook.get(slow), { status: 'failed', error: { code: 'TIMEOUT' }, response: null })
  t.match(byWebhook.get(refusedId), { status: 'failed', error: { code: 'CONNECTION_FAILED' }, response: null })
  t.same(f.received().map((r) => r.path).sort(), ['/error', '/slow'], 'each was tried once')
  t.equal((await f.sendsOf(credit.ID)).length, 3, 'and logged once')
})

t.test('changes reach the next firing: an updated template, an archived webhook and new links are never served stale', async (t) => {
  const sink = await startSink(t)
  const svc = await testApp(t)
  const f = await firing(svc, sink)
  const kept = await f.webhook({ tag: 'kept', path: '/kept', requestBody: '{"version": 1}' })
  const archivedLater = await f.webhook({ tag: 'archived', path: '/archived', requestBody: '{}' })
  const linkedLater = await f.webhook({ tag: 'linked', path: '/linked', requestBody: '{}' })
  const line = await f.line({ onDeliveredWebhooks: [kept, archivedLater] })
  const first = await f.l.disbursedCredit({ creditLineId: line })
  await f.settled(first.ID, 2)

  t.equal((await f.api('PUT', `/webhook/${kept}`, { requestBody: '{"version": 2}' })).statusCode, 200)
  t.equal((await f.api('DELETE', `/webhook/${archivedLater}`)).statusCode, 200)
  t.equal((await f.l.call('PATCH', `/v1/credit-lines/${line}`, { onDeliveredWebhooks: [kept, archivedLater, linkedLater] })).statusCode, 200)
  const second = await f.l.disbursedCredit({ creditLineId: line })
  await f.settled(second.ID, 2)
  await f.quiesce()
  t.same(f.received().map((r) => r.path).sort(), ['/archived', '/kept', '/kept', '/linked'])
  t.same(f.received().filter((r) => r.path === '/kept').map((r) => JSON.parse(r.body).version), [1, 2])
  t.same((await f.sendsOf(second.ID)).map((s) => s.webhookId).sort(), [kept, linkedLater].sort())
})

t.test('many approvals at once: triggers fired together with the one the manager handles each reach the webhook exactly once', async (t) => {
  const sink = await startSink(t)
  const svc = await testApp(t)
  const f = await firing(svc, sink)
  const onOrder = await f.webhook({ tag: 'order', path: '/order', requestBody: idBody })
  const line = await f.line({ onOrderWebhooks: [onOrder] })
  const credit = await f.l.disbursedCredit({ creditLineId: line })
  const installmentIds = credit.installments.map((i: { ID: string }) => i.ID)
  const orders = await Promise.all(Array.from({ length: 40 }, (_, i) => f.approvedOrder(credit.ID, installmentIds[i % installmentIds.length]!)))
  const sends = await f.settled(credit.ID, 40)
  await f.quiesce()
  t.equal(sends.length, 40, 'one send per approval')
  t.ok(sends.every((s) => s.status === 'delivered' && s.trigger.type === 'PaymentOrderApproved'))
  t.same(sends.map((s) => s.orderId).sort(), orders.map((o) => o.ID).sort(), 'each approved order fired its own send')
  const received = f.received().map((r) => JSON.parse(r.body).order as string)
  t.same(received.sort(), orders.map((o) => o.ID).sort(), 'the destination got each order once')
  t.equal((await f.sendsOf(credit.ID)).length, 40, 'nothing else was logged')
})

t.test('approvals of one credit close together each render the earlier ones applied, whether or not the applier has run', async (t) => {
  const sink = await startSink(t)
  const svc = await testApp(t)
  const f = await firing(svc, sink)
  const body = '{"installment": {{ .Order.InstallmentNumber }}, "paid": {{ .Credit.PaidAmount | quote }}, "installmentsPaid": {{ .Credit.InstallmentsPaid }}}'
  const webhook = await f.webhook({ tag: 'order', path: '/order', requestBody: body })
  const line = await f.line({ onOrderWebhooks: [webhook] })
  const credit = await f.l.disbursedCredit({ creditLineId: line })
  const orders: Array<{ url: string; id: string }> = []
  for (const installment of credit.installments.slice(0, 4)) {
    const url = `/v1/payables/${credit.ID}/installments/${installment.ID}/orders`
    orders.push({ url, id: (await f.l.call('POST', url, {})).json().order.ID })
  }
  await Promise.all(orders.map(({ url, id }) => f.l.call('POST', `${url}/${id}/approve`)))
  await f.settled(credit.ID, 4)
  const rendered: Array<{ installment: number; paid: string; installmentsPaid: number }> = f.received().map((r) => JSON.parse(r.body))
  const final = (await f.l.call('GET', `/v1/credits/${credit.ID}`)).json().data.credit
  // The approvals reach the log in some order; each send shows the payments approved up to its own.
  const byPaid = rendered.sort((a, b) => a.installmentsPaid - b.installmentsPaid)
  t.same(byPaid.map((r) => r.installmentsPaid), [1, 2, 3, 4], 'one, two, three, then four installments paid')
  const paidAfter = (count: number) => credit.installments.slice(0, count).reduce((sum, installment) => sum.plus(installment.amount), new Decimal(0)).toFixed(2)
  t.same(byPaid.map((r) => r.paid), [paidAfter(1), paidAfter(2), paidAfter(3), paidAfter(4)], 'the paid amount adds each approved installment')
  t.equal(byPaid[3]?.paid, final.balances.paidTotal, 'the last shows what the credit shows once every payment is applied')
})

import t from 'tap'
import { pino } from 'pino'
import { buildApp } from '../../src/http/app.js'
import { paymentApplicationProcess } from '../../src/processes/paymentFlow.js'
import { createRuntime } from '../../src/runtime.js'
import { ManualClock } from '../../src/shared/clock.js'
import { createTestApp } from '../helpers/app.js'
import { createDebtor, createOrganization, lending, memberToken, nextEvent, type Lending } from '../helpers/lending.js'

const ordersOf = (creditId: string, installment: string) => `/v1/payables/${creditId}/installments/${installment}/orders`

const countEvents = async (l: Lending, type: string) => {
  let n = 0
  for await (const event of l.svc.runtime.eventStore.readAll()) if (event.type === type) n += 1
  return n
}

t.test('a new order answers the interface\'s fields with Status pending; GET returns the whole order, unwrapped', async (t) => {
  const svc = await createTestApp(t)
  const l = await lending(svc)
  const credit = await l.disbursedCredit()
  const first = credit.installments[0]!
  const created = await l.call('POST', ordersOf(credit.ID, first.ID), { Key: 'pay-1', GatewayOption: 'visa', CollectionCosts: '1500' })
  t.equal(created.statusCode, 201)
  const order = created.json().order
  t.same(Object.keys(order).sort(), ['Amount', 'CollectionCosts', 'CreatedAt', 'CreatorID', 'CreditID', 'ID', 'InstallmentID', 'InstallmentNumber',
    'Provider', 'Status', 'Type'].sort())
  t.match(order, { CreditID: credit.ID, InstallmentID: first.ID, InstallmentNumber: 1, Amount: '88848.79', Type: 'payment', Provider: 'manual',
    Status: 'pending', CreatorID: 'test-admin', CollectionCosts: '1500.00' })
  const read = await l.call('GET', `${ordersOf(credit.ID, first.ID)}/${order.ID}`)
  t.equal(read.statusCode, 200)
  t.match(read.json(), {
    ...order, Method: 'credit_card', CompletedAt: null, ApproverID: '', ErrorMessage: '', RetryCount: 0, GatewayOption: 'visa', OverrideMethod: '',
    Key: 'pay-1', TransactionReference: '', PaymentReference: '',
    Metadata: { originalAmount: '88848.79', exchangeRate: '1', currency: 'COP', processingTime: 0 }, Application: null,
  })
  const list = await l.call('GET', ordersOf(credit.ID, first.ID))
  t.same(list.json().data.map((o: { ID: string }) => o.ID), [order.ID])
  t.equal((await l.call('GET', `${ordersOf(credit.ID, credit.installments[1]!.ID)}/${order.ID}`)).statusCode, 404, 'under another installment it is not found')
})

t.test('Key: the same request again returns the order (200), another body with the Key is refused', async (t) => {
  const svc = await createTestApp(t)
  const l = await lending(svc)
  const credit = await l.disbursedCredit()
  const url = ordersOf(credit.ID, credit.installments[0]!.ID)
  const first = await l.call('POST', url, { Key: 'k', Amount: '1000' })
  const again = await l.call('POST', url, { Key: 'k', Amount: '1000.00' })
  t.equal(first.statusCode, 201)
  t.equal(again.statusCode, 200)
  t.same(again.json(), first.json(), 'the same order, amounts compared as numbers')
  const reused = await l.call('POST', url, { Key: 'k', Amount: '2000' })
  t.equal(reused.statusCode, 409)
  t.match(reused.json().data, { code: 'IDEMPOTENCY_KEY_REUSED', key: 'k', orderId: first.json().order.ID })
  const elsewhere = await l.call('POST', ordersOf(credit.ID, credit.installments[1]!.ID), { Key: 'k', Amount: '1000' })
  t.equal(elsewhere.statusCode, 409, 'a Key is per credit, whatever the installment')
  const other = await l.disbursedCredit()
  t.equal((await l.call('POST', ordersOf(other.ID, other.installments[0]!.ID), { Key: 'k', Amount: '1000' })).statusCode, 201, 'another credit may use it')
})

t.test('another organization cannot tell from the answer whether a Key was used on a credit it cannot see', async (t) => {
  const svc = await createTestApp(t)
  const l = await lending(svc)
  const credit = await l.disbursedCredit()
  const url = ordersOf(credit.ID, credit.installments[0]!.ID)
  t.equal((await l.call('POST', url, { Key: 'used', Amount: '1000' })).statusCode, 201)
  const outsider = await lending(svc, await createOrganization(svc, 'Otra'))
  const token = await memberToken(svc, outsider.organizationId)
  const usedKey = await outsider.call('POST', url, { Key: 'used', Amount: '1000' }, token)
  const freshKey = await outsider.call('POST', url, { Key: 'fresh', Amount: '1000' }, token)
  t.equal(usedKey.statusCode, 404)
  t.equal(freshKey.statusCode, 404)
  t.equal(usedKey.body, freshKey.body, 'byte-identical bodies')
  t.match(usedKey.json().data, { code: 'NOT_FOUND', resource: 'credit' })
})

t.test('many concurrent POSTs with one Key create exactly one order', async (t) => {
  const svc = await createTestApp(t)
  const l = await lending(svc)
  const credit = await l.disbursedCredit()
  const url = ordersOf(credit.ID, credit.installments[0]!.ID)
  const responses = await Promise.all(Array.from({ length: 40 }, () => l.call('POST', url, { Key: 'race', Amount: '5000.00' })))
  t.same(responses.filter((r) => r.statusCode === 201).length, 1, 'one creation')
  t.ok(responses.every((r) => r.statusCode === 201 || r.statusCode === 200), 'the others get it back')
  t.equal(new Set(responses.map((r) => r.json().order.ID)).size, 1, 'all answer the same order')
  t.equal(await countEvents(l, 'PaymentOrderCreated'), 1, 'one event in the log')
  t.equal((await l.call('GET', url)).json().pagination.total_items, 1)
})

t.test('order refusals: state, installment, amounts, methods, organization', async (t) => {
  const svc = await createTestApp(t)
  const l = await lending(svc)
  const credit = await l.disbursedCredit()
  const first = credit.installments[0]!
  const url = ordersOf(credit.ID, first.ID)
  const requested = await l.requestCredit({ creditLineId: await l.createLine(), debtorId: await createDebtor(svc.runtime, svc.organizationId) })
  const notPayable = await l.call('POST', ordersOf(requested.ID, requested.installments[0]!.ID), {})
  t.equal(notPayable.statusCode, 409)
  t.match(notPayable.json().data, { code: 'CREDIT_NOT_PAYABLE', state: 'Solicitado' })
  t.equal((await l.call('POST', ordersOf(credit.ID, requested.installments[0]!.ID), {})).statusCode, 404, 'an installment of another credit')
  const otherInstallmentsOrders = await l.call('GET', ordersOf(credit.ID, requested.installments[0]!.ID))
  t.equal(otherInstallmentsOrders.statusCode, 404, 'nor are the orders of an installment of another credit listed as none')
  t.match(otherInstallmentsOrders.json().data, { code: 'NOT_FOUND', resource: 'installment' })
  t.equal((await l.call('GET', ordersOf(credit.ID, 'zero'))).statusCode, 200, 'zero is every credit\'s')
  t.equal((await l.call('POST', ordersOf(credit.ID, 'not-an-installment'), {})).statusCode, 400)
  const field = async (body: Record<string, unknown>) => {
    const response = await l.call('POST', url, body)
    t.equal(response.statusCode, 400, JSON.stringify(body))
    return response.json().data.errors.map((e: { field: string }) => e.field)
  }
  t.same(await field({ Amount: '88848.80' }), ['body.Amount'], 'not above what is owed')
  t.same(await field({ Amount: '0' }), ['body.Amount'])
  t.same(await field({ Amount: '10.001' }), ['body.Amount'], 'within the minor unit')
  t.same(await field({ Amount: 100.5 }), ['body.Amount'], 'never a JSON number')
  t.same(await field({ Amount: '-5' }), ['body.Amount'])
  t.same(await field({ OverrideMethod: 'bitcoin' }), ['body.OverrideMethod'])
  t.same(await field({ Provider: 'paypal' }), ['body.Provider'])
  t.same(await field({ CollectionCosts: '1.005' }), ['body.CollectionCosts'])
  const above = await l.call('POST', url, { Amount: '88848.8' })
  t.match(above.json().data.errors, [{ field: 'body.Amount', message: 'must not exceed what is owed (88848.79)' }], 'compared as amounts, whatever the scale')
  t.equal((await l.call('POST', url, { Amount: '88848.79' })).statusCode, 201, 'exactly what is owed is accepted')
  const other = await createOrganization(svc, 'Otra')
  const outsider = await memberToken(svc, other)
  const foreign = await svc.call({ method: 'POST', url, token: outsider, organizationId: other, payload: {} })
  t.equal(foreign.statusCode, 404)
  const analyst = await memberToken(svc, svc.organizationId, 'analyst')
  t.equal((await l.call('POST', url, {}, analyst)).statusCode, 403, 'readers cannot create orders')
  t.equal((await l.call('GET', url, undefined, analyst)).statusCode, 200)
})

t.test('approval → application: the installment is paid, approving again or rejecting after is 409; rejection fails an order', async (t) => {
  const svc = await createTestApp(t)
  const l = await lending(svc)
  const credit = await l.disbursedCredit()
  const [first, second] = credit.installments
  const order = (await l.call('POST', ordersOf(credit.ID, first!.ID), { Key: 'one' })).json().order
  const applied = nextEvent(svc.runtime, 'CreditPaymentApplied', (e) => e.type === 'CreditPaymentApplied' && e.data.orderId === order.ID)
  const approved = await l.call('POST', `${ordersOf(credit.ID, first!.ID)}/${order.ID}/approve`)
  t.equal(approved.statusCode, 200)
  t.match(approved.json().order, { Status: 'completed', ApproverID: 'test-admin', CompletedAt: /^\d{4}-/, UpdatedAt: /^\d{4}-/ })
  await applied
  const after = (await l.call('GET', `/v1/credits/${credit.ID}`)).json().data.credit
  t.match(after.installments[0], { status: 'paid', paidAmount: '88848.79', outstanding: '0.00', paidInterest: '10000.00' })
  t.match(after, { state: 'Desembolsado', installmentsPaid: 1, balances: { outstandingPrincipal: '921151.21', paidTotal: '88848.79' } })
  const applicationShown = await l.call('GET', `${ordersOf(credit.ID, first!.ID)}/${order.ID}`)
  t.match(applicationShown.json().Application, { appliedAmount: '88848.79', unappliedAmount: '0.00', allocations: [{ number: 1, paidInFull: true }] })
  const twice = await l.call('POST', `${ordersOf(credit.ID, first!.ID)}/${order.ID}/approve`)
  t.equal(twice.statusCode, 409)
  t.match(twice.json().data, { code: 'INVALID_TRANSITION', from: 'completed', to: 'completed', allowed: [] })
  t.equal((await l.call('POST', `${ordersOf(credit.ID, first!.ID)}/${order.ID}/reject`, { reason: 'oops' })).statusCode, 409)
  t.equal((await l.call('POST', ordersOf(credit.ID, first!.ID), {})).json().data.code, 'INSTALLMENT_ALREADY_PAID')

  const doomed = (await l.call('POST', ordersOf(credit.ID, second!.ID), { Amount: '100.00' })).json().order
  t.equal((await l.call('POST', `${ordersOf(credit.ID, second!.ID)}/${doomed.ID}/reject`, {})).statusCode, 400, 'a rejection needs a reason')
  const rejected = await l.call('POST', `${ordersOf(credit.ID, second!.ID)}/${doomed.ID}/reject`, { reason: 'cheque devuelto' })
  t.match(rejected.json().order, { Status: 'failed', ErrorMessage: 'cheque devuelto', CompletedAt: null })
  const approveFailed = await l.call('POST', `${ordersOf(credit.ID, second!.ID)}/${doomed.ID}/approve`)
  t.match(approveFailed.json().data, { code: 'INVALID_TRANSITION', from: 'failed', to: 'completed' })
})

t.test('an approval applied twice (redelivery) changes nothing the second time', async (t) => {
  const svc = await createTestApp(t)
  const l = await lending(svc)
  const credit = await l.disbursedCredit()
  const first = credit.installments[0]!
  const order = (await l.call('POST', ordersOf(credit.ID, first.ID), { Amount: '20000.00' })).json().order
  const approvedEvent = nextEvent(svc.runtime, 'PaymentOrderApproved')
  const applied = nextEvent(svc.runtime, 'CreditPaymentApplied')
  await l.call('POST', `${ordersOf(credit.ID, first.ID)}/${order.ID}/approve`)
  const event = await approvedEvent
  await applied
  const head = await svc.runtime.eventStore.headPosition()
  const before = (await l.call('GET', `/v1/credits/${credit.ID}`)).json()
  await paymentApplicationProcess.handle(event, svc.runtime)
  await paymentApplicationProcess.handle(event, svc.runtime)
  t.equal(await svc.runtime.eventStore.headPosition(), head, 'nothing appended')
  t.same((await l.call('GET', `/v1/credits/${credit.ID}`)).json(), before)
  t.match(before.data.credit.installments[0], { status: 'partial', paidInterest: '10000.00', paidPrincipal: '10000.00' })
})

t.test('a zero order dated the disbursement day pays the principal alone, forgives every interest and the credit becomes Pagado', async (t) => {
  const svc = await createTestApp(t)
  const l = await lending(svc)
  const credit = await l.disbursedCredit()
  const created = await l.call('POST', ordersOf(credit.ID, 'zero'), {})
  t.match(created.json().order, { InstallmentID: 'zero', InstallmentNumber: 0, Amount: '1000000.00' })
  const paid = nextEvent(svc.runtime, 'CreditPaid')
  await l.call('POST', `${ordersOf(credit.ID, 'zero')}/${created.json().order.ID}/approve`)
  await paid
  const after = (await l.call('GET', `/v1/credits/${credit.ID}`)).json().data.credit
  t.match(after, { state: 'Pagado', installmentsPaid: 12, balances: { outstandingTotal: '0.00', paidTotal: '1000000.00', waivedInterest: '66185.45' }, nextDueDate: null })
  t.same(after.installments.map((i: { waivedInterest: string }) => i.waivedInterest), credit.installments.map((i) => i.interest), 'each installment\'s interest forgiven')
  const more = await l.call('POST', ordersOf(credit.ID, 'zero'), {})
  t.match(more.json().data, { code: 'CREDIT_NOT_PAYABLE', state: 'Pagado' })
})

t.test('a line that demands it: the creator may not approve its own order, someone else may', async (t) => {
  const svc = await createTestApp(t)
  const l = await lending(svc)
  const credit = await l.disbursedCredit({ creditLineId: await l.createLine({ requireDistinctApprover: true }) })
  const url = ordersOf(credit.ID, credit.installments[0]!.ID)
  const order = (await l.call('POST', url, {})).json().order
  const own = await l.call('POST', `${url}/${order.ID}/approve`)
  t.equal(own.statusCode, 403)
  t.equal(own.json().data.code, 'APPROVER_IS_CREATOR')
  const colleague = await memberToken(svc, svc.organizationId)
  const approved = await l.call('POST', `${url}/${order.ID}/approve`, undefined, colleague)
  t.equal(approved.statusCode, 200)
  t.not(approved.json().order.ApproverID, 'test-admin')
})

t.test('a value date is a day money moved: not after today, not before the disbursement day', async (t) => {
  const clock = new ManualClock('2026-01-10T09:00:00.000Z')
  const svc = await createTestApp(t, { clock, config: { accessTokenTtl: 30 * 86_400 } })
  const l = await lending(svc)
  const credit = await l.disbursedCredit()
  clock.set('2026-01-20T12:00:00.000Z')
  const url = ordersOf(credit.ID, credit.installments[0]!.ID)
  const refused = async (date: string) => (await l.call('POST', url, { Date: date, Amount: '10' })).json().data
  t.match(await refused('2026-01-21T00:00:00Z'), { code: 'VALIDATION_ERROR', errors: [{ field: 'body.Date', message: 'must not be after today (2026-01-20)' }] })
  t.match(await refused('2026-01-20T20:00:00-05:00'), { errors: [{ field: 'body.Date' }] }, 'compared as a UTC day: that is the 21st')
  t.match(await refused('2026-01-09T23:59:59Z'), { errors: [{ field: 'body.Date', message: 'must not be before the credit\'s disbursement (2026-01-10)' }] })
  for (const date of ['2026-01-10T00:00:00Z', '2026-01-20T23:59:59Z']) {
    const created = await l.call('POST', url, { Date: date, Amount: '10' })
    t.equal(created.statusCode, 201, date)
  }
})

t.test('a line that takes on the demand holds its pending orders to it', async (t) => {
  const svc = await createTestApp(t)
  const l = await lending(svc)
  const lineId = await l.createLine()
  const credit = await l.disbursedCredit({ creditLineId: lineId })
  const url = ordersOf(credit.ID, credit.installments[0]!.ID)
  const order = (await l.call('POST', url, {})).json().order
  t.equal((await l.call('PATCH', `/v1/credit-lines/${lineId}`, { requireDistinctApprover: true })).statusCode, 200)
  const own = await l.call('POST', `${url}/${order.ID}/approve`)
  t.equal(own.statusCode, 403)
  t.equal(own.json().data.code, 'APPROVER_IS_CREATOR')
  const approved = await l.call('POST', `${url}/${order.ID}/approve`, undefined, await memberToken(svc, svc.organizationId))
  t.equal(approved.statusCode, 200)
})

/** A disbursed credit on a line whose default provider is the sandbox, with a clock the test moves. */
const sandboxCredit = async (t: Parameters<typeof createTestApp>[0], sandboxDelayMs: number) => {
  const clock = new ManualClock('2026-01-10T09:00:00.000Z')
  const svc = await createTestApp(t, { clock, config: { sandboxDelayMs, accessTokenTtl: 86_400 } })
  const l = await lending(svc)
  const credit = await l.disbursedCredit({ creditLineId: await l.createLine({ provider: 'sandbox' }) })
  return { clock, svc, l, credit, url: ordersOf(credit.ID, credit.installments[0]!.ID) }
}

t.test('the sandbox provider: processing, then completed after its delay, or declined on the trigger amount', async (t) => {
  const { clock, svc, l, credit, url } = await sandboxCredit(t, 5000)
  const submitted = nextEvent(svc.runtime, 'PaymentOrderSubmitted')
  const order = (await l.call('POST', url, { Amount: '30000.00' })).json().order
  t.equal(order.Provider, 'sandbox')
  await submitted
  const processing = (await l.call('GET', `${url}/${order.ID}`)).json()
  t.match(processing, { Status: 'processing', TransactionReference: /^SBX-TX-[0-9A-F]{16}$/, PaymentReference: /^SBX-PAY-/ })
  await svc.runtime.scheduler.runNow('paymentOutcomes')
  t.equal((await l.call('GET', `${url}/${order.ID}`)).json().Status, 'processing', 'not before its delay')

  const declinedSubmitted = nextEvent(svc.runtime, 'PaymentOrderSubmitted')
  const declined = (await l.call('POST', url, { Amount: '13.13' })).json().order
  await declinedSubmitted
  clock.advance(5000)
  const applied = nextEvent(svc.runtime, 'CreditPaymentApplied')
  await svc.runtime.scheduler.runNow('paymentOutcomes')
  await applied
  t.match((await l.call('GET', `${url}/${order.ID}`)).json(), { Status: 'completed', ApproverID: '', Metadata: { processingTime: 5000 } })
  t.match((await l.call('GET', `${url}/${declined.ID}`)).json(), { Status: 'failed', ErrorMessage: /declined/, CompletedAt: null })
  const after = (await l.call('GET', `/v1/credits/${credit.ID}`)).json().data.credit
  t.equal(after.balances.paidTotal, '30000.00', 'only the completed payment was applied')
  const manual = (await l.call('POST', url, { Provider: 'manual', Amount: '100.00' })).json().order
  t.equal(manual.Provider, 'manual', 'Provider in the body overrides the line\'s')
})

t.test('crash safety: a restart still settles sandbox orders, submitted or not, and applies each once', async (t) => {
  const { clock, svc, l, credit, url } = await sandboxCredit(t, 2000)
  const submitted = nextEvent(svc.runtime, 'PaymentOrderSubmitted')
  const early = (await l.call('POST', url, { Amount: '1000.00' })).json().order
  await submitted
  await svc.runtime.processes.stop()
  const late = (await l.call('POST', url, { Amount: '2000.00' })).json().order
  await svc.close()

  clock.advance(10_000)
  const runtime = await createRuntime(svc.config, { clock, logger: pino({ level: 'silent' }) })
  t.teardown(() => runtime.close())
  const resubmitted = firstSubmission(runtime, late.ID)
  await runtime.start()
  await resubmitted
  clock.advance(2000)
  await runtime.scheduler.runNow('paymentOutcomes')
  const app = await buildApp(runtime)
  t.teardown(() => app.close())
  const get = async (id: string) => (await app.inject({ method: 'GET', url: `${url}/${id}`, headers: { authorization: `Bearer ${svc.adminToken}`, 'organization-id': svc.organizationId } })).json()
  t.equal((await get(early.ID)).Status, 'completed', 'submitted before the crash, settled after it')
  t.equal((await get(late.ID)).Status, 'completed', 'created before the crash, submitted and settled after it')
  await runtime.scheduler.runNow('paymentOutcomes')
  await waitUntil(async () => (await runtime.queries.credits.get(svc.organizationId, credit.ID))?.paidTotal === '3000.00')
  let applications = 0
  for await (const event of runtime.eventStore.readAll()) if (event.type === 'CreditPaymentApplied') applications += 1
  t.equal(applications, 2, 'each payment applied once')
})

const firstSubmission = (runtime: Awaited<ReturnType<typeof createRuntime>>, orderId: string) =>
  nextEvent(runtime, 'PaymentOrderSubmitted', (e) => e.type === 'PaymentOrderSubmitted' && e.data.orderId === orderId)

const waitUntil = async (condition: () => Promise<boolean>) => {
  for (let i = 0; i < 600; i++) {
    if (await condition()) return
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error('condition not reached')
}

import t, { type Test as Tap } from 'tap'
import { creditAggregate } from '../../src/commands/credit.js'
import { applyApprovedPayment, withdrawIfUnpayable } from '../../src/commands/payments.js'
import type { RecordedOf } from '../../src/events/catalogue.js'
import { paymentFlowProcess } from '../../src/processes/paymentFlow.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { lending, nextEvent, type Lending } from '../helpers/lending.js'

const ordersOf = (creditId: string, installment: string) => `/v1/payables/${creditId}/installments/${installment}/orders`
const context = (svc: TestApp) => ({ organizationId: svc.organizationId, actorId: 'test', correlationId: 'payoff-race' })

const orderStream = async (svc: TestApp, orderId: string) => {
  const events: Array<{ type: string; data: Record<string, unknown> }> = []
  for await (const event of svc.runtime.eventStore.readStream(`order-${orderId}`)) events.push({ type: event.type, data: { ...event.data } })
  return events
}

const createdEvent = async (svc: TestApp, orderId: string): Promise<RecordedOf<'PaymentOrderCreated'>> => {
  for await (const event of svc.runtime.eventStore.readStream(`order-${orderId}`)) if (event.type === 'PaymentOrderCreated') return event
  throw new Error(`no PaymentOrderCreated for ${orderId}`)
}

/** A credit paid off by a `zero` order approved after `late` was made: `late` is a pending order on a credit that owes nothing. */
const paidOffAfter = async (t: Tap, svc: TestApp, l: Lending, lateBody: object, applyByHand: boolean) => {
  const credit = await l.disbursedCredit({ term: 6 })
  const late = (await l.call('POST', ordersOf(credit.ID, 'zero'), lateBody)).json().order
  const payoff = (await l.call('POST', ordersOf(credit.ID, 'zero'), { Provider: 'manual' })).json().order
  const paid = applyByHand ? null : nextEvent(svc.runtime, 'CreditPaid', (event) => event.streamId === `credit-${credit.ID}`)
  const approved = await l.call('POST', `${ordersOf(credit.ID, 'zero')}/${payoff.ID}/approve`)
  t.equal(approved.statusCode, 200)
  await paid
  if (applyByHand) {
    for await (const event of svc.runtime.eventStore.readStream(`order-${payoff.ID}`)) {
      if (event.type === 'PaymentOrderApproved') await applyApprovedPayment(svc.runtime.commands, event.data, context(svc))
    }
  }
  const { state } = await svc.runtime.commands.load(creditAggregate, credit.ID)
  t.equal(state.status, 'Pagado', 'the payoff settled the credit')
  return { creditId: credit.ID, late }
}

t.test('an order whose credit was paid off after its checks read the credit is withdrawn: failed by the service, once, with the refusal', async (t) => {
  const svc = await createTestApp(t)
  const l = await lending(svc)
  const { creditId, late } = await paidOffAfter(t, svc, l, { Provider: 'manual' }, false)
  const refusal = await withdrawIfUnpayable(svc.runtime.commands, { creditId, installmentId: 'zero', orderId: late.ID }, svc.runtime.clock.now().toISOString(), context(svc))
  t.match(refusal, { outcome: 'withdrawn', refusal: { code: 'CREDIT_NOT_PAYABLE', status: 409, details: { state: 'Pagado', orderId: late.ID } } })
  t.same((await orderStream(svc, late.ID)).map((e) => e.type), ['PaymentOrderCreated', 'PaymentOrderFailed'])
  t.match((await orderStream(svc, late.ID))[1]?.data, { failedBy: 'service', actorId: '', errorMessage: /need a Desembolsado credit; this one is Pagado/ })
  t.match(await withdrawIfUnpayable(svc.runtime.commands, { creditId, installmentId: 'zero', orderId: late.ID }, svc.runtime.clock.now().toISOString(), context(svc)),
    { outcome: 'not-pending', refusal: { code: 'CREDIT_NOT_PAYABLE' } }, 'already failed: nothing withdrawn again')
  const shown = (await l.call('GET', `${ordersOf(creditId, 'zero')}/${late.ID}`)).json()
  t.equal(shown.Status, 'failed')
  t.equal((await l.call('POST', `${ordersOf(creditId, 'zero')}/${late.ID}/approve`)).statusCode, 409, 'a withdrawn order cannot be approved into unapplied money')

  const standing = await l.disbursedCredit({ term: 6 })
  const order = (await l.call('POST', ordersOf(standing.ID, 'zero'), { Provider: 'manual' })).json().order
  t.same(await withdrawIfUnpayable(svc.runtime.commands, { creditId: standing.ID, installmentId: 'zero', orderId: order.ID }, svc.runtime.clock.now().toISOString(), context(svc)),
    { outcome: 'stands' }, 'a credit still owing keeps its order')
  t.same((await orderStream(svc, order.ID)).map((e) => e.type), ['PaymentOrderCreated'])
})

t.test('the payment flow does not submit to the provider an order whose credit a payoff settled since it was made', async (t) => {
  const svc = await createTestApp(t, { config: { processesEnabled: false } })
  const l = await lending(svc)
  const { late } = await paidOffAfter(t, svc, l, { Provider: 'sandbox' }, true)
  const event = await createdEvent(svc, late.ID)
  // Every command the flow issues, so a provider start shows even when its submission records nothing.
  const issued: string[] = []
  const services = { ...svc.runtime, commands: new Proxy(svc.runtime.commands, {
    get: (target, name, receiver) => {
      const value: unknown = Reflect.get(target, name, receiver)
      if (name !== 'execute' || typeof value !== 'function') return value
      return (...args: unknown[]) => {
        const command = args[2]
        if (typeof command === 'object' && command !== null && 'type' in command) issued.push(String(command.type))
        return Reflect.apply(value, target, args)
      }
    },
  }) }
  await paymentFlowProcess.handle(event, services)
  await paymentFlowProcess.handle(event, services)
  const events = await orderStream(svc, late.ID)
  t.same(events.map((e) => e.type), ['PaymentOrderCreated', 'PaymentOrderFailed'], 'failed once, never submitted (no PaymentOrderSubmitted)')
  t.match(events[1]?.data, { failedBy: 'service' })
  t.same(issued, ['WithdrawPaymentOrder'], 'the redelivery finds the order failed and does not start the provider')

  const manual = await paidOffAfter(t, svc, l, { Provider: 'manual' }, true)
  await paymentFlowProcess.handle(await createdEvent(svc, manual.late.ID), services)
  t.same((await orderStream(svc, manual.late.ID)).map((e) => e.type), ['PaymentOrderCreated'],
    'a manual order is left for a person to approve or reject: it records money received outside the service')

  const owing = await l.disbursedCredit({ term: 6 })
  const order = (await l.call('POST', ordersOf(owing.ID, 'zero'), { Provider: 'sandbox' })).json().order
  await paymentFlowProcess.handle(await createdEvent(svc, order.ID), svc.runtime)
  t.same((await orderStream(svc, order.ID)).map((e) => e.type), ['PaymentOrderCreated', 'PaymentOrderSubmitted'], 'a credit still owing: submitted as before')
})

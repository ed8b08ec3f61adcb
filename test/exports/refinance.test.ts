import t from 'tap'
import { ManualClock } from '../../src/shared/clock.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { exportFile } from '../helpers/exportFiles.js'
import { createDebtor, lending, nextEvent, type Lending } from '../helpers/lending.js'

const START = '2026-01-05T15:00:00.000Z'

const setup = async (t: Parameters<typeof createTestApp>[0]) => {
  const clock = new ManualClock(START)
  const svc = await createTestApp(t, { clock, config: { accessTokenTtl: 30 * 86_400 } })
  return { clock, svc, l: await lending(svc) }
}

const ordersOf = (creditId: string, installment: string) => `/v1/payables/${creditId}/installments/${installment}/orders`

const createOrder = async (l: Lending, creditId: string, installment: string, key: string): Promise<string> => {
  const created = await l.call('POST', ordersOf(creditId, installment), { Key: key })
  if (created.statusCode !== 201) throw new Error(`order: ${created.statusCode} ${created.body}`)
  return created.json().order.ID
}

/** Approves the order and waits until its application is projected. */
const approve = async (svc: TestApp, l: Lending, creditId: string, installment: string, orderId: string): Promise<void> => {
  const applied = nextEvent(svc.runtime, 'CreditPaymentApplied', (e) => e.type === 'CreditPaymentApplied' && e.data.orderId === orderId)
  const approved = await l.call('POST', `${ordersOf(creditId, installment)}/${orderId}/approve`)
  if (approved.statusCode !== 200) throw new Error(`approve: ${approved.statusCode} ${approved.body}`)
  await applied
  await svc.runtime.settle(await svc.runtime.eventStore.headPosition())
}

t.test('refinance lists a credit once, for the zero order that paid it off, not for a second one approved after the payoff', async (t) => {
  const { clock, svc, l } = await setup(t)
  const credit = await l.disbursedCredit()
  clock.advance(15 * 86_400_000)
  const quote = (await l.call('GET', `/v1/payables/${credit.ID}/payoff`)).json().data.payoff
  const payoff = await createOrder(l, credit.ID, 'zero', 'z1')
  const duplicate = await createOrder(l, credit.ID, 'zero', 'z2')
  clock.advance(60_000)
  await approve(svc, l, credit.ID, 'zero', payoff)
  clock.advance(60_000)
  await approve(svc, l, credit.ID, 'zero', duplicate)
  clock.advance(60_000)

  const { rows, count } = await exportFile(svc.runtime, svc.organizationId, { type: 'refinance' })
  t.same(rows.map((r) => [r['credit_id'], r['payoff_order_id'], r['payoff_principal'], r['payoff_interest']]),
    [[credit.ID, payoff, '1000000.00', quote.interest]], 'the duplicate went wholly to unapplied: it paid nothing off')
  t.ok(Number(quote.interest) > 0 && Number(quote.interest) < Number(credit.installments[0]?.interest), 'half a month in, about half the first interest')
  t.equal(count, rows.length, 'the count ahead agrees')
})

t.test('a credit paid off by its installments is no refinance, even when a zero order is approved after', async (t) => {
  const { clock, svc, l } = await setup(t)
  const credit = await l.disbursedCredit({ term: 6 })
  const zero = await createOrder(l, credit.ID, 'zero', 'z')
  for (const installment of credit.installments) {
    clock.advance(60_000)
    await approve(svc, l, credit.ID, installment.ID, await createOrder(l, credit.ID, installment.ID, `i${installment.number}`))
  }
  t.equal((await l.call('GET', `/v1/credits/${credit.ID}`)).json().data.credit.state, 'Pagado')
  clock.advance(60_000)
  await approve(svc, l, credit.ID, 'zero', zero)
  clock.advance(60_000)

  const { rows, count } = await exportFile(svc.runtime, svc.organizationId, { type: 'refinance' })
  t.same(rows, [])
  t.equal(count, 0)
})

t.test('refinance counts only replacements disbursed by the time the export was requested, so a resumed job writes the same file', async (t) => {
  const { clock, svc, l } = await setup(t)
  const debtorId = await createDebtor(svc.runtime, svc.organizationId)
  const credit = await l.disbursedCredit({ debtorId })
  clock.advance(60_000)
  await approve(svc, l, credit.ID, 'zero', await createOrder(l, credit.ID, 'zero', 'z'))
  clock.advance(60_000)
  const requestedAt = clock.now().toISOString()
  clock.advance(3 * 86_400_000)
  const replacement = await l.disbursedCredit({ debtorId })
  clock.advance(60_000)

  const asRequested = await exportFile(svc.runtime, svc.organizationId, { type: 'refinance' }, requestedAt)
  t.same(asRequested.rows.map((r) => [r['credit_id'], r['refinanced'], r['new_credit_id']]), [[credit.ID, 'false', '']],
    'the credit disbursed after the request is not seen by a run of that request')
  const now = await exportFile(svc.runtime, svc.organizationId, { type: 'refinance', before: requestedAt })
  t.same(now.rows.map((r) => [r['credit_id'], r['refinanced'], r['new_credit_id'], r['days_between']]), [[credit.ID, 'true', replacement.ID, '3']],
    'requested again later, the same period finds it')
})

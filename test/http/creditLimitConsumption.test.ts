import t, { type Test } from 'tap'
import { creditLimitAggregate } from '../../src/commands/creditLimit.js'
import { ManualClock } from '../../src/shared/clock.js'
import { newId } from '../../src/shared/ids.js'
import { money } from '../../src/shared/money.js'
import { createTestApp } from '../helpers/app.js'
import { createDebtor, lending, nextEvent } from '../helpers/lending.js'

interface LimitView { usedAmount: string; availableAmount: string; maxAmount: string; status: string }

const setup = async (t: Test) => {
  const clock = new ManualClock('2026-01-15T12:00:00.000Z')
  // Tokens outlive the clock moves of the expiry test.
  const svc = await createTestApp(t, { clock, config: { accessTokenTtl: 400 * 86_400 } })
  const lend = await lending(svc)
  const { call } = lend
  const creditLineId = await lend.createLine()
  const debtorId = await createDebtor(svc.runtime, svc.organizationId)
  const setLimit = async (maxAmount: string, expirationDate = '2026-12-31') => {
    const response = await call('POST', '/v1/creditor/credit-limits', { debtorId, maxAmount, currency: 'COP', expirationDate })
    if (response.statusCode !== 201) throw new Error(response.body)
    const id: string = response.json().creditLimit.creditLimitId
    return {
      id,
      get: async (): Promise<LimitView> => (await call('GET', `/v1/creditor/credit-limits/${id}`)).json().creditLimit,
      patch: (payload: object) => call('PATCH', `/v1/creditor/credit-limits/${id}`, payload),
    }
  }
  const request = (principal: string) => call('POST', '/v1/credits', { creditLineId, debtorId, principal })
  const approvedCredit = async (principal: string) => {
    const requested = await request(principal)
    if (requested.statusCode !== 201) throw new Error(requested.body)
    const id: string = requested.json().data.credit.ID
    await call('POST', `/v1/credits/${id}/approve`, {})
    return id
  }
  const disburse = (creditId: string) => call('POST', `/v1/credits/${creditId}/disburse`, { method: 'bank_transfer' })
  const stateOf = async (creditId: string): Promise<string> => (await call('GET', `/v1/credits/${creditId}`)).json().data.credit.state
  return { svc, clock, lend, call, debtorId, setLimit, request, approvedCredit, disburse, stateOf }
}

const refusedByLimit = (t: Test, response: { statusCode: number; json(): { data: Record<string, unknown> } }, details: Record<string, string>, message: string) => {
  t.equal(response.statusCode, 409, message)
  t.match(response.json().data, { code: 'CREDIT_LIMIT_EXCEEDED', ...details }, message)
}

t.test('a disbursed credit uses the limit, each payment of principal gives it back, and paying it off releases it all', async (t) => {
  const { svc, call, setLimit, approvedCredit, disburse } = await setup(t)
  const limit = await setLimit('5000000.00')
  const creditId = await approvedCredit('3000000.00')
  t.match(await limit.get(), { usedAmount: '0.00', availableAmount: '5000000.00' }, 'a request or an approval uses nothing')
  const disbursed = (await disburse(creditId)).json().data.credit
  t.match(await limit.get(), { usedAmount: '3000000.00', availableAmount: '2000000.00' }, 'shown as soon as the disbursement answers')

  const first = disbursed.installments[0]
  const released = nextEvent(svc.runtime, 'CreditLimitReleased')
  const order = (await call('POST', `/v1/payables/${creditId}/installments/${first.ID}/orders`, {})).json().order
  await call('POST', `/v1/payables/${creditId}/installments/${first.ID}/orders/${order.ID}/approve`, {})
  await released
  const owed = money('3000000.00').minus(first.principal)
  t.match(await limit.get(), { usedAmount: owed.toFixed(2), availableAmount: money('5000000.00').minus(owed).toFixed(2) }, 'the paid principal is available again')

  const paidOff = nextEvent(svc.runtime, 'CreditLimitReleased', (e) => e.type === 'CreditLimitReleased' && e.data.remaining === '0')
  const rest = (await call('POST', `/v1/payables/${creditId}/installments/zero/orders`, {})).json().order
  await call('POST', `/v1/payables/${creditId}/installments/zero/orders/${rest.ID}/approve`, {})
  await paidOff
  t.match(await limit.get(), { usedAmount: '0.00', availableAmount: '5000000.00' })
  const history = []
  for await (const event of svc.runtime.history(`creditLimit-${limit.id}`)) history.push([event.type, 'reason' in event.data ? event.data.reason : null])
  t.same(history, [['CreditLimitCreated', null], ['CreditLimitReserved', null], ['CreditLimitReleased', 'payment'], ['CreditLimitReleased', 'payment']],
    'the limit\'s history shows each use and release')
})

t.test('a request or a disbursement above what an active limit has available is 409 CREDIT_LIMIT_EXCEEDED', async (t) => {
  const { setLimit, request, approvedCredit, disburse, stateOf } = await setup(t)
  const limit = await setLimit('5000000.00')
  refusedByLimit(t, await request('5000000.01'), {
    creditLimitId: limit.id, currency: 'COP', maxAmount: '5000000.00', usedAmount: '0.00', availableAmount: '5000000.00', requestedAmount: '5000000.01',
  }, 'a request above the limit')
  const first = await approvedCredit('3000000.00')
  const second = await approvedCredit('2500000.00')
  t.equal((await disburse(first)).statusCode, 200)
  const refused = await disburse(second)
  refusedByLimit(t, refused, { usedAmount: '3000000.00', availableAmount: '2000000.00', requestedAmount: '2500000.00' }, 'requests reserve nothing: the disbursement checks again')
  t.equal(await stateOf(second), 'Aprobado', 'a refused disbursement leaves the credit approved')
  t.match(await limit.get(), { usedAmount: '3000000.00' }, 'and the limit as it was')
  refusedByLimit(t, await request('2000000.01'), { availableAmount: '2000000.00' }, 'a request sees what disbursements used')
  t.equal((await request('2000000.00')).statusCode, 201, 'exactly what is available may be requested')
  await limit.patch({ maxAmount: '6000000.00' })
  t.equal((await disburse(second)).statusCode, 200, 'a raised limit lets the approved credit through')
  t.match(await limit.get(), { usedAmount: '5500000.00', availableAmount: '500000.00' })
})

t.test('parallel disbursements against one limit: only what fits passes', async (t) => {
  const { setLimit, approvedCredit, disburse, stateOf } = await setup(t)
  const limit = await setLimit('10000000.00')
  const credits = []
  for (let i = 0; i < 4; i++) credits.push(await approvedCredit('3000000.00'))
  const answers = await Promise.all(credits.map(async (id) => ({ id, response: await disburse(id) })))
  for (const { response } of answers) {
    t.ok(response.statusCode === 200 || response.json().data.code === 'CREDIT_LIMIT_EXCEEDED', `answered ${response.body.slice(0, 80)}`)
  }
  const states = await Promise.all(credits.map(stateOf))
  t.same(states.filter((s) => s === 'Desembolsado').length, 3, 'three of 3 000 000 fit in 10 000 000')
  t.same(states.filter((s) => s === 'Aprobado').length, 1, 'the fourth is refused and stays approved')
  t.match(await limit.get(), { usedAmount: '9000000.00', availableAmount: '1000000.00' })
})

t.test('an expired or inactive limit restricts nothing but keeps counting; renewed, it counts every credit', async (t) => {
  const { svc, clock, setLimit, request, approvedCredit, disburse } = await setup(t)
  const limit = await setLimit('5000000.00', '2026-01-20')
  t.equal((await disburse(await approvedCredit('4000000.00'))).statusCode, 200)
  clock.set('2026-01-21T00:05:00.000Z')
  t.equal((await request('1000000.01')).statusCode, 201, 'past its date the limit is no longer in force, even before the job has run')
  await svc.runtime.scheduler.runNow('creditLimitExpiry')
  t.match(await limit.get(), { status: 'expired' })
  const beyond = await approvedCredit('3000000.00')
  t.equal((await disburse(beyond)).statusCode, 200, 'an expired limit does not restrict')
  t.match(await limit.get(), { status: 'expired', usedAmount: '7000000.00', availableAmount: '-2000000.00' }, 'but it counts what was lent')
  t.match((await limit.patch({ expirationDate: '2026-12-31' })).json().creditLimit, { status: 'active', usedAmount: '7000000.00', availableAmount: '-2000000.00' })
  refusedByLimit(t, await request('500000.00'), { availableAmount: '-2000000.00' }, 'renewed, it is over its amount')
  await limit.patch({ status: 'inactive' })
  t.equal((await request('500000.00')).statusCode, 201, 'an inactive limit does not restrict')
})

t.test('a limit set after credits were disbursed starts with their outstanding principal', async (t) => {
  const { setLimit, approvedCredit, disburse } = await setup(t)
  t.equal((await disburse(await approvedCredit('2000000.00'))).statusCode, 200)
  const limit = await setLimit('5000000.00')
  t.match(await limit.get(), { usedAmount: '2000000.00', availableAmount: '3000000.00' })
})

t.test('a reservation an interrupted disbursement left behind is released when the credit is cancelled', async (t) => {
  const { svc, call, debtorId, setLimit, approvedCredit } = await setup(t)
  const limit = await setLimit('5000000.00')
  const creditId = await approvedCredit('3000000.00')
  // What a disbursement leaves if the service stops between reserving and disbursing.
  const now = svc.runtime.clock.now().toISOString()
  await svc.runtime.execute(creditLimitAggregate, limit.id, {
    type: 'ReserveCreditLimit', creditLimitId: limit.id, organizationId: svc.organizationId, debtorId, currency: 'COP', creditId, amount: '3000000.00',
    check: true, today: now.slice(0, 10), now,
  }, { organizationId: svc.organizationId, actorId: 'test', correlationId: newId() })
  t.match(await limit.get(), { usedAmount: '3000000.00' }, 'held while the credit may still be disbursed')
  const released = nextEvent(svc.runtime, 'CreditLimitReleased')
  await call('POST', `/v1/credits/${creditId}/cancel`, { reason: 'duplicate' })
  t.match((await released).data, { creditId, reason: 'cancelled', remaining: '0' })
  t.match(await limit.get(), { usedAmount: '0.00', availableAmount: '5000000.00' })
})

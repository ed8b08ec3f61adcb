import t from 'tap'
import { loadPositionAt } from '../../src/exports/lib/positions.js'
import { exportFile } from '../helpers/exportFiles.js'
import { ManualClock } from '../../src/shared/clock.js'
import { createOrganization, memberToken } from '../helpers/exports.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { createDebtor, lending, nextEvent, type Lending } from '../helpers/lending.js'

const START = '2026-01-05T15:00:00.000Z'
const DAY = 86_400_000

const setup = async (t: Parameters<typeof createTestApp>[0]) => {
  const clock = new ManualClock(START)
  const svc = await createTestApp(t, { clock, config: { accessTokenTtl: 365 * 86_400 } })
  const l = await lending(svc)
  return { clock, svc, l, credit: await l.disbursedCredit() }
}

const zeroOrders = (creditId: string) => `/v1/payables/${creditId}/installments/zero/orders`
const payoffOf = (l: Lending, creditId: string, query = '') => l.call('GET', `/v1/payables/${creditId}/payoff${query}`)

/** Approves an order and waits until its application is projected. */
const approve = async (svc: TestApp, l: Lending, url: string, orderId: string): Promise<void> => {
  const applied = nextEvent(svc.runtime, 'CreditPaymentApplied', (e) => e.type === 'CreditPaymentApplied' && e.data.orderId === orderId)
  const approved = await l.call('POST', `${url}/${orderId}/approve`)
  if (approved.statusCode !== 200) throw new Error(`approve: ${approved.statusCode} ${approved.body}`)
  await applied
  await svc.runtime.settle(await svc.runtime.eventStore.headPosition())
}

const cents = (amount: string) => Math.round(Number(amount) * 100)

t.test('the payoff quote mid-period: all the principal, the first period\'s interest by days, no later interest', async (t) => {
  const { clock, l, credit } = await setup(t)
  clock.advance(15 * DAY)
  const response = await payoffOf(l, credit.ID)
  t.equal(response.statusCode, 200)
  const quote = response.json().data.payoff
  const [first] = credit.installments
  if (first === undefined) throw new Error('no installment')
  const period = Math.round((Date.parse(first.dueDate) - Date.parse(START.slice(0, 10))) / DAY)
  const accrued = (Number(first.interest) * 15 / period).toFixed(2)
  t.match(quote, { creditId: credit.ID, currency: 'COP', date: '2026-01-20', principal: '1000000.00', interest: accrued })
  t.equal(cents(quote.total), cents(quote.principal) + cents(quote.interest))
  t.equal(cents(quote.interest) + cents(quote.waivedInterest), credit.installments.reduce((sum, i) => sum + cents(i.interest), 0), 'accrued and forgiven make the schedule\'s interest')
  t.same(quote.installments.map((i: { number: number }) => i.number), credit.installments.map((i) => i.number))
  t.same(quote.installments.slice(1).map((i: { interest: string }) => i.interest), credit.installments.slice(1).map(() => '0.00'))

  const later = (await payoffOf(l, credit.ID, `?date=${first.dueDate}`)).json().data.payoff
  t.equal(later.interest, first.interest, 'on the first due date the first interest is owed whole, the second period nothing yet')
})

t.test('a zero order defaults to the payoff at its value date; approved, the credit is Pagado and the rest of the interest forgiven everywhere', async (t) => {
  const { clock, svc, l, credit } = await setup(t)
  clock.advance(20 * DAY)
  const quote = (await payoffOf(l, credit.ID)).json().data.payoff
  const shown = (await l.call('GET', `/v1/credits/${credit.ID}`)).json().data.credit
  t.equal(shown.balances.payoff, quote.total, 'the credit shows today\'s payoff')
  const listed = (await l.call('GET', '/v1/credits?limit=10')).json().data.find((c: { ID: string }) => c.ID === credit.ID)
  t.equal(listed?.balances.payoff, quote.total, 'and so does the list')
  const created = await l.call('POST', zeroOrders(credit.ID), {})
  t.equal(created.statusCode, 201)
  t.equal(created.json().order.Amount, quote.total, 'the default amount is the quote')
  const orderId = created.json().order.ID
  clock.advance(2 * DAY)
  const paid = nextEvent(svc.runtime, 'CreditPaid')
  await approve(svc, l, zeroOrders(credit.ID), orderId)
  await paid

  const after = (await l.call('GET', `/v1/credits/${credit.ID}`)).json().data.credit
  t.match(after, { state: 'Pagado', installmentsPaid: 12, nextDueDate: null, daysPastDue: 0,
    balances: { outstandingTotal: '0.00', paidTotal: quote.total, waivedInterest: quote.waivedInterest, payoff: null, unapplied: '0.00' } })
  t.same(after.installments.map((i: { waivedInterest: string }) => i.waivedInterest), quote.installments.map((i: { waivedInterest: string }) => i.waivedInterest))
  const order = (await l.call('GET', `${zeroOrders(credit.ID)}/${orderId}`)).json()
  t.equal(order.Application.payoff.day, quote.date)
  t.equal(order.Application.payoff.waivers.reduce((sum: number, w: { interest: string }) => sum + cents(w.interest), 0), cents(quote.waivedInterest))
  t.equal((await payoffOf(l, credit.ID)).json().data.code, 'CREDIT_NOT_PAYABLE', 'a paid credit has no payoff')

  const schedule = (await exportFile(svc.runtime, svc.organizationId, { type: 'installments', after: '2026-01-01T00:00:00Z', before: '2027-06-01T00:00:00Z' })).rows
  t.same(schedule.map((r) => [r['waived_interest'], r['outstanding'], r['status']]),
    quote.installments.map((i: { waivedInterest: string }) => [i.waivedInterest, '0.00', 'paid']), 'the installments file shows what was forgiven of each')
  const doc = await svc.runtime.queries.credits.get(svc.organizationId, credit.ID)
  if (doc === null) throw new Error('no credit document')
  const position = await loadPositionAt(svc.runtime.queries, doc, '2027-06-01T00:00:00.000Z')
  t.match(position, { state: 'Pagado', outstanding: { total: '0.00' }, overdue: { total: '0.00' }, balance: '0.00', installmentsPaid: 12, daysPastDue: 0,
    interestCollected: quote.interest, principalCollected: '1000000.00' }, 'the exports\' fold of the movements forgives the same interest: nothing falls overdue later')
  const before = (await l.call('GET', `/v1/credits/${credit.ID}?asOf=${encodeURIComponent(new Date(clock.now().getTime() - DAY).toISOString())}`)).json().data.credit
  t.match(before, { state: 'Desembolsado', balances: { waivedInterest: '0.00', outstandingPrincipal: '1000000.00' } }, 'asOf before the approval: nothing forgiven yet')
})

t.test('a zero order dated earlier is weighed on its value date, but owes whole what fell due before it was made, and asks the payoff exactly', async (t) => {
  const { clock, svc, l, credit } = await setup(t)
  clock.advance(10 * DAY)
  const dated = '2026-01-12'
  const quote = (await payoffOf(l, credit.ID, `?date=${dated}`)).json().data.payoff
  const tooMuch = await l.call('POST', zeroOrders(credit.ID), { Date: `${dated}T12:00:00Z`, Amount: ((cents(quote.total) + 1) / 100).toFixed(2) })
  t.equal(tooMuch.statusCode, 400)
  t.match(tooMuch.json().data.errors, [{ field: 'body.Amount', message: `must not exceed the payoff on ${dated} (${quote.total})` }])
  const tooLittle = await l.call('POST', zeroOrders(credit.ID), { Date: `${dated}T12:00:00Z`, Amount: ((cents(quote.total) - 1) / 100).toFixed(2) })
  t.equal(tooLittle.statusCode, 400)
  t.match(tooLittle.json().data.errors, [{ field: 'body.Amount', message: new RegExp(`^must be the payoff on ${dated} \\(${quote.total}\\): a zero order pays the credit off`) }])
  const exactly = await l.call('POST', zeroOrders(credit.ID), { Date: `${dated}T12:00:00Z`, Amount: quote.total })
  t.equal(exactly.statusCode, 201, 'the payoff itself, named')
  t.equal(exactly.json().order.Amount, quote.total)
  await approve(svc, l, zeroOrders(credit.ID), exactly.json().order.ID)
  t.equal((await l.call('GET', `/v1/credits/${credit.ID}`)).json().data.credit.state, 'Pagado', 'dated two days after disbursement: two days of interest')

  const late = await l.disbursedCredit()
  clock.set(`${late.installments[0]?.dueDate}T00:00:00.000Z`)
  clock.advance(5 * DAY)
  const lateDated = new Date(Date.parse(late.disbursedAt) + 2 * DAY).toISOString()
  const backDated = await l.call('POST', zeroOrders(late.ID), { Date: lateDated })
  t.equal(backDated.statusCode, 201, backDated.body)
  const asked = backDated.json().order.Amount
  const onDueDate = (await payoffOf(l, late.ID, `?date=${late.installments[0]?.dueDate}`)).json().data.payoff
  t.equal(asked, onDueDate.total, 'made after the first due date, dated before it: weighed on that due date, its interest owed whole')
  t.equal(onDueDate.interest, late.installments[0]?.interest)
  const quotedEarlier = (await payoffOf(l, late.ID, `?date=${lateDated.slice(0, 10)}`)).json().data.payoff
  t.match(quotedEarlier, { date: lateDated.slice(0, 10), weighedOn: late.installments[0]?.dueDate, total: asked },
    'the quote of that earlier day is weighed as the order made now is, and says so')
})

t.test('the payoff after an installment is paid: the next period accrues from its due date', async (t) => {
  const { clock, svc, l, credit } = await setup(t)
  const [first, second] = credit.installments
  if (first === undefined || second === undefined) throw new Error('two installments')
  clock.set(`${first.dueDate}T12:00:00.000Z`)
  const url = `/v1/payables/${credit.ID}/installments/${first.ID}/orders`
  await approve(svc, l, url, (await l.call('POST', url, {})).json().order.ID)
  const quote = (await payoffOf(l, credit.ID)).json().data.payoff
  t.same(quote.installments.map((i: { number: number }) => i.number), credit.installments.slice(1).map((i) => i.number), 'the paid installment is left out')
  t.match(quote, { interest: '0.00', principal: (1_000_000 - Number(first.principal)).toFixed(2) }, 'on the due date the second period has accrued nothing')
  const mid = (await payoffOf(l, credit.ID, `?date=${new Date(Date.parse(first.dueDate) + 10 * DAY).toISOString().slice(0, 10)}`)).json().data.payoff
  const period = Math.round((Date.parse(second.dueDate) - Date.parse(first.dueDate)) / DAY)
  t.equal(mid.interest, (Number(second.interest) * 10 / period).toFixed(2), 'a day after today is quoted as if nothing else were paid')
})

t.test('a payoff after an installment paid ahead credits its interest not accrued: both orders together cost what the payoff alone would, and ledger-a books it back', async (t) => {
  const { clock, svc, l, credit } = await setup(t)
  const [first] = credit.installments
  if (first === undefined) throw new Error('no installment')
  clock.advance(10 * DAY)
  const alone = (await payoffOf(l, credit.ID, '?date=2026-01-20')).json().data.payoff
  const url = `/v1/payables/${credit.ID}/installments/${first.ID}/orders`
  await approve(svc, l, url, (await l.call('POST', url, {})).json().order.ID)
  clock.advance(5 * DAY)
  const quote = (await payoffOf(l, credit.ID)).json().data.payoff
  t.equal(quote.date, '2026-01-20')
  t.equal(cents(quote.creditedInterest), cents(first.interest) - cents(alone.interest), 'the first period\'s interest paid, less what 15 days accrued')
  t.equal(cents(quote.total), cents(quote.principal) + cents(quote.interest) - cents(quote.creditedInterest))
  t.equal(cents(first.amount) + cents(quote.total), cents(alone.total), 'the installment and the payoff together: what the payoff alone would have cost that day')
  t.match(quote.installments[0], { number: 1, principal: '0.00', interest: '0.00', creditedInterest: quote.creditedInterest })

  const created = await l.call('POST', zeroOrders(credit.ID), {})
  t.equal(created.json().order.Amount, quote.total, 'the zero order asks the credited payoff')
  await approve(svc, l, zeroOrders(credit.ID), created.json().order.ID)
  const after = (await l.call('GET', `/v1/credits/${credit.ID}`)).json().data.credit
  t.match(after, { state: 'Pagado', balances: { outstandingTotal: '0.00', paidTotal: alone.total, waivedInterest: alone.waivedInterest } })
  t.equal(after.installments[0].paidInterest, alone.installments[0].interest, 'the first period paid what it accrued')

  const journal = (await exportFile(svc.runtime, svc.organizationId, { type: 'ledger-a', after: '2026-01-01T00:00:00Z', before: '2026-02-01T00:00:00Z' })).rows
  const entry = journal.filter((row) => row['reference'] === created.json().order.ID)
  t.same(entry.map((row) => [row['account_code'], row['debit'], row['credit']]), [
    ['1110', quote.total, '0.00'], ['1405', '0.00', quote.principal], ['4102', quote.creditedInterest, '0.00'],
  ], 'the bank receives the payoff, the portfolio falls by the principal, the interest credited is taken back from income')
  const byEntry = new Map<string, number>()
  for (const row of journal) byEntry.set(row['entry_id'] ?? '', (byEntry.get(row['entry_id'] ?? '') ?? 0) + cents(row['debit'] ?? '0') - cents(row['credit'] ?? '0'))
  t.same([...byEntry.values()].filter((sum) => sum !== 0), [], 'every entry balances')
})

t.test('the payoff route refuses what it cannot quote, in the envelope', async (t) => {
  const { svc, l, credit } = await setup(t)
  const early = await payoffOf(l, credit.ID, '?date=2026-01-04')
  t.equal(early.statusCode, 400)
  t.match(early.json().data, { code: 'VALIDATION_ERROR', errors: [{ field: 'querystring.date' }] })
  t.equal((await payoffOf(l, credit.ID, '?date=2026-02-30')).statusCode, 400)
  t.equal((await payoffOf(l, credit.ID, '?date=tomorrow')).statusCode, 400)
  t.equal((await payoffOf(l, credit.ID, '?at=2026-01-05')).statusCode, 400)
  t.equal((await payoffOf(l, '01a21001-0000-7000-8000-000000000000')).statusCode, 404)
  const requested = await l.requestCredit({ creditLineId: await l.createLine(), debtorId: await createDebtor(svc.runtime, svc.organizationId) })
  const undisbursed = await payoffOf(l, requested.ID)
  t.equal(undisbursed.statusCode, 409)
  t.match(undisbursed.json().data, { code: 'CREDIT_NOT_PAYABLE', state: 'Solicitado' })
  const outsider = await lending(svc, await createOrganization(svc, 'Otra'))
  t.equal((await payoffOf(outsider, credit.ID)).statusCode, 404, 'another organization does not see the credit')
  const noCredits = await memberToken(svc, svc.organizationId, ['ReadOrder'])
  t.equal((await l.call('GET', `/v1/payables/${credit.ID}/payoff`, undefined, noCredits)).statusCode, 403)
})

t.test('with every principal paid ahead the payoff is the interest paid ahead, negative: a zero order of 0 settles the credit and owes it back', async (t) => {
  const { svc, l } = await setup(t)
  // 100 JPY over 36 months at 600 %: every installment but the last pays interest only (principal 0).
  const creditLineId = await l.createLine({ currency: 'JPY', principalMin: '100', principalMax: '100000', principalDefault: '100', rate: '600', timeMin: 6, timeMax: 36, timeDefault: 36 })
  const credit = await l.disbursedCredit({ creditLineId })
  const last = credit.installments.at(-1)
  if (last === undefined) throw new Error('no installment')
  t.same([credit.installments[0]?.principal, last.principal], ['0', '100'])
  const url = `/v1/payables/${credit.ID}/installments/${last.ID}/orders`
  await approve(svc, l, url, (await l.call('POST', url, {})).json().order.ID)
  const quote = (await payoffOf(l, credit.ID)).json().data.payoff
  t.match(quote, { principal: '0', interest: '0', creditedInterest: last.interest, total: `-${last.interest}` }, 'the last period\'s interest, paid on the disbursement day')
  t.equal((await l.call('GET', `/v1/credits/${credit.ID}`)).json().data.credit.balances.payoff, quote.total, 'the credit shows it too')

  const tooMuch = await l.call('POST', zeroOrders(credit.ID), { Amount: '1' })
  t.equal(tooMuch.statusCode, 400)
  t.match(tooMuch.json().data.errors, [{ field: 'body.Amount', message: /^must not exceed the payoff on \d{4}-\d{2}-\d{2} \(0\)/ }])
  const negative = await l.call('POST', zeroOrders(credit.ID), { Amount: '-1' })
  t.equal(negative.statusCode, 400, 'never a negative order')
  const created = await l.call('POST', zeroOrders(credit.ID), { Amount: '0' })
  t.equal(created.statusCode, 201, created.body)
  t.equal(created.json().order.Amount, '0')
  await approve(svc, l, zeroOrders(credit.ID), created.json().order.ID)
  const after = (await l.call('GET', `/v1/credits/${credit.ID}`)).json().data.credit
  t.match(after, { state: 'Pagado', balances: { outstandingTotal: '0', unapplied: last.interest } }, 'the interest paid ahead is the debtor\'s, to refund')
  const order = (await l.call('GET', `${zeroOrders(credit.ID)}/${created.json().order.ID}`)).json()
  t.match(order.Application, { appliedAmount: `-${last.interest}`, unappliedAmount: last.interest })
  t.equal((await l.call('POST', url, {})).statusCode, 409, 'and the credit takes no more orders')
})

import t from 'tap'
import { exact, plus, toMoneyText } from '../../src/shared/exactDecimal.js'
import { allocatePayment, applyAllocations, installmentPosition, isPaid, totalOutstanding, type InstallmentPosition } from '../../src/shared/installments.js'
import { journalLines } from '../../src/exports/lib/ledger.js'
import { accruedInterest, payoffDay, payoffOf, payoffQuote, payoffShortfall, settleQuote } from '../../src/shared/payoff.js'
import { frenchSchedule, monthlyRateOf } from '../../src/shared/amortization.js'

const row = (number: number, dueDate: string, principal: string, interest: string): InstallmentPosition =>
  installmentPosition({ installmentId: `i${number}`, number, dueDate, principal, interest, amount: toMoneyText(plus(exact(principal), exact(interest)), 'COP') }, '0', '0', null)

// Disbursed 2026-01-10; due the 10th of each month (31, 28 and 31 days).
const schedule = [
  row(1, '2026-02-10', '300000.00', '31000.00'),
  row(2, '2026-03-10', '330000.00', '28000.00'),
  row(3, '2026-04-10', '370000.00', '31000.00'),
]
const DISBURSED = '2026-01-10'
const text = (quote: ReturnType<typeof payoffQuote>) => ({
  principal: toMoneyText(quote.principal, 'COP'), interest: toMoneyText(quote.interest, 'COP'), credited: toMoneyText(quote.credited, 'COP'),
  total: toMoneyText(quote.total, 'COP'), waived: toMoneyText(quote.waived, 'COP'),
  lines: quote.lines.map((l) => [l.number, toMoneyText(l.principal, 'COP'), toMoneyText(l.interest, 'COP'), toMoneyText(l.waived, 'COP')]),
})

t.test('on the disbursement day the payoff is the principal alone: every interest is forgiven', async (t) => {
  t.same(text(payoffQuote(schedule, DISBURSED, DISBURSED, 'COP')), {
    principal: '1000000.00', interest: '0.00', credited: '0.00', total: '1000000.00', waived: '90000.00',
    lines: [[1, '300000.00', '0.00', '31000.00'], [2, '330000.00', '0.00', '28000.00'], [3, '370000.00', '0.00', '31000.00']],
  })
})

t.test('within a period its interest accrues by days, later periods owe none', async (t) => {
  const quote = text(payoffQuote(schedule, DISBURSED, '2026-01-25', 'COP'))
  t.same(quote.lines, [[1, '300000.00', '15000.00', '16000.00'], [2, '330000.00', '0.00', '28000.00'], [3, '370000.00', '0.00', '31000.00']],
    '15 of 31 days of the first period')
  t.same([quote.total, quote.waived], ['1015000.00', '75000.00'])
  t.same(text(payoffQuote(schedule, DISBURSED, '2026-02-24', 'COP')).lines[1], [2, '330000.00', '14000.00', '14000.00'], '14 of the second period\'s 28 days')
})

t.test('an installment due by the day owes all its interest; on a due date the next period has accrued nothing', async (t) => {
  const quote = text(payoffQuote(schedule, DISBURSED, '2026-02-10', 'COP'))
  t.same(quote.lines, [[1, '300000.00', '31000.00', '0.00'], [2, '330000.00', '0.00', '28000.00'], [3, '370000.00', '0.00', '31000.00']])
  const matured = text(payoffQuote(schedule, DISBURSED, '2026-05-01', 'COP'))
  t.same([matured.total, matured.waived], ['1090000.00', '0.00'], 'after maturity the whole schedule is owed')
})

t.test('an accrued share rounds half up in the minor unit', async (t) => {
  t.equal(toMoneyText(accruedInterest('100.00', '2026-01-10', '2026-02-10', '2026-01-11', 'COP'), 'COP'), '3.23', '100 × 1/31 = 3.2258…')
  t.equal(toMoneyText(accruedInterest('100', '2026-01-10', '2026-02-10', '2026-01-11', 'JPY'), 'JPY'), '3', 'no decimals in yen')
  t.equal(toMoneyText(accruedInterest('31.00', '2026-01-10', '2026-02-10', '2026-01-25', 'COP'), 'COP'), '15.00')
})

t.test('installments paid when due are left out; interest paid ahead of its accrual is credited to principal and its period forgiven', async (t) => {
  const firstPaid = applyAllocations(schedule, [
    { installmentId: 'i1', number: 1, principal: '300000.00', interest: '31000.00', amount: '331000.00', paidInFull: true },
    { installmentId: 'i2', number: 2, principal: '0.00', interest: '20000.00', amount: '20000.00', paidInFull: false },
  ], 'COP', '2026-02-01T00:00:00.000Z')
  const quote = payoffQuote(firstPaid, DISBURSED, '2026-02-24', 'COP')
  t.same(text(quote).lines, [[2, '330000.00', '0.00', '14000.00'], [3, '370000.00', '0.00', '31000.00']],
    '20,000 paid on the second period, 14,000 accrued: nothing more owed, the other 14,000 of it forgiven')
  t.same(quote.lines.map((line) => toMoneyText(line.credited, 'COP')), ['6000.00', '0.00'], 'the 6,000 paid beyond the accrual is credited')
  t.same([text(quote).total, text(quote).credited, text(quote).waived], ['694000.00', '6000.00', '45000.00'])

  const { allocations, waivers } = settleQuote(quote, 'COP')
  t.same(allocations.map((a) => [a.number, a.principal, a.interest, a.amount]), [[2, '330000.00', '-6000.00', '324000.00'], [3, '370000.00', '0.00', '370000.00']],
    'the credit is the allocation\'s negative interest: the allocations add up to the money received')
  const settled = applyAllocations(firstPaid, allocations, 'COP', '2026-02-24T12:00:00.000Z', waivers)
  t.ok(settled.every(isPaid))
  t.same(settled.slice(1).map((i) => [i.paidPrincipal, i.paidInterest, i.waivedInterest]), [['330000.00', '14000.00', '14000.00'], ['370000.00', '0.00', '31000.00']],
    'each period has paid exactly what it accrued')
})

t.test('what a payoff takes in all is the same whether an installment was paid ahead first or not', async (t) => {
  const day = '2026-01-25'
  const straight = payoffQuote(schedule, DISBURSED, day, 'COP')
  for (const target of ['i1', 'i2', 'i3']) {
    const early = allocatePayment(schedule, target, exact(schedule.find((i) => i.installmentId === target)!.amount), 'COP')
    const after = applyAllocations(schedule, early.allocations, 'COP', `${day}T09:00:00.000Z`)
    const quote = payoffQuote(after, DISBURSED, day, 'COP')
    t.equal(toMoneyText(plus(early.applied, quote.total), 'COP'), toMoneyText(straight.total, 'COP'), `installment ${target} paid in full that morning`)
    const { allocations, waivers } = settleQuote(quote, 'COP')
    const settled = applyAllocations(after, allocations, 'COP', `${day}T12:00:00.000Z`, waivers)
    t.same(settled.map((i) => i.paidInterest), ['15000.00', '0.00', '0.00'], 'every credit ends with the same interest paid')
    t.equal(settled.find((i) => i.installmentId === target)?.paidAt, `${day}T09:00:00.000Z`, 'the installment paid ahead keeps the time it was paid')
  }
})

t.test('interest paid ahead worth more than what is owed quotes a negative payoff: settling it owes the rest back', async (t) => {
  const allButOneCent = applyAllocations(schedule, [
    { installmentId: 'i1', number: 1, principal: '299999.99', interest: '31000.00', amount: '330999.99', paidInFull: false },
    { installmentId: 'i2', number: 2, principal: '330000.00', interest: '28000.00', amount: '358000.00', paidInFull: true },
    { installmentId: 'i3', number: 3, principal: '370000.00', interest: '31000.00', amount: '401000.00', paidInFull: true },
  ], 'COP', '2026-01-12T00:00:00.000Z')
  const quote = payoffQuote(allButOneCent, DISBURSED, '2026-01-25', 'COP')
  t.same([text(quote).principal, text(quote).credited, text(quote).total], ['0.01', '75000.00', '-74999.99'],
    'a cent of principal owed; 90,000 of interest paid, 15,000 accrued')
  const { allocations, waivers } = settleQuote(quote, 'COP')
  t.equal(toMoneyText(allocations.reduce((sum, a) => plus(sum, exact(a.amount)), exact('0')), 'COP'), '-74999.99', 'the allocations add up to the total')
  const settled = applyAllocations(allButOneCent, allocations, 'COP', '2026-01-25T12:00:00.000Z', waivers)
  t.ok(settled.every(isPaid))
  t.same(settled.map((i) => [i.paidPrincipal, i.paidInterest]), [['300000.00', '15000.00'], ['330000.00', '0.00'], ['370000.00', '0.00']], 'each period paid what it accrued')
})

t.test('in ledger-a a payoff crediting more interest than it collects debits interest income, and the entry balances', async (t) => {
  const lines = journalLines({
    _id: 'm', kind: 'payment', creditId: 'c', organizationId: 'o', creditLineId: 'l', debtorId: 'd', currency: 'COP', at: '2026-02-24T12:00:00.000Z',
    reference: 'o1', method: null, actorId: '', principal: '700000.00', interest: '-6000.00', amount: '694000.00', collectionCosts: '0.00', unapplied: '0.00',
    target: 'zero', allocations: [], settles: true,
  })
  t.same(lines.map((l) => [l.account.code, l.debit, l.credit]), [['1110', '694000.00', '0.00'], ['1405', '0.00', '700000.00'], ['4102', '6000.00', '0.00']])
})

t.test('settling a quote pays each line and forgives the rest: nothing is owed after', async (t) => {
  const quote = payoffQuote(schedule, DISBURSED, '2026-01-25', 'COP')
  const { allocations, waivers } = settleQuote(quote, 'COP')
  t.same(waivers.map((w) => [w.number, w.interest]), [[1, '16000.00'], [2, '28000.00'], [3, '31000.00']])
  t.same(allocations.map((a) => [a.number, a.interest, a.principal, a.amount, a.paidInFull]),
    [[1, '15000.00', '300000.00', '315000.00', true], [2, '0.00', '330000.00', '330000.00', true], [3, '0.00', '370000.00', '370000.00', true]])
  const settled = applyAllocations(schedule, allocations, 'COP', '2026-01-25T12:00:00.000Z', waivers)
  t.ok(settled.every(isPaid))
  t.equal(toMoneyText(totalOutstanding(settled).total, 'COP'), '0.00')
  t.same(settled.map((i) => [i.waivedInterest, i.paidAt]), [
    ['16000.00', '2026-01-25T12:00:00.000Z'], ['28000.00', '2026-01-25T12:00:00.000Z'], ['31000.00', '2026-01-25T12:00:00.000Z'],
  ])
})

t.test('a waiver alone settles an installment whose principal was paid', async (t) => {
  const principalPaid = [installmentPosition(schedule[0]!, '300000.00', '10000.00', null)]
  const settled = applyAllocations(principalPaid, [], 'COP', '2026-01-20T00:00:00.000Z', [{ installmentId: 'i1', number: 1, interest: '21000.00' }])
  t.same([settled[0]?.waivedInterest, settled[0]?.paidAt, isPaid(settled[0]!)], ['21000.00', '2026-01-20T00:00:00.000Z', true])
})

t.test('the payoff day is the value date\'s UTC day, never before the disbursement day nor a due date the order was made after', async (t) => {
  const disbursed = '2026-01-10T15:00:00.000Z'
  t.equal(payoffDay(schedule, disbursed, '2026-01-25T23:59:59.999Z', '2026-01-26T08:00:00.000Z'), '2026-01-25')
  t.equal(payoffDay(schedule, disbursed, '2026-01-09T10:00:00.000Z', '2026-01-12T08:00:00.000Z'), '2026-01-10')
  t.equal(payoffDay(schedule, disbursed, '2026-01-25T10:00:00.000Z', '2026-03-01T08:00:00.000Z'), '2026-02-10',
    'an order made after the first due date, dated before it: the first installment was owed whole')
  t.equal(payoffDay(schedule, disbursed, '2026-02-20T10:00:00.000Z', '2026-03-01T08:00:00.000Z'), '2026-02-20', 'dated after the last due date before it: its own day')
  t.equal(payoffDay(schedule, disbursed, '2026-01-25T10:00:00.000Z', '2026-04-10T08:00:00.000Z'), '2026-04-10', 'made on the last due date: the whole schedule')
})

t.test('an amount short of the payoff pays accrued interest and principal oldest first, never interest not accrued', async (t) => {
  const quote = payoffQuote(schedule, DISBURSED, '2026-01-25', 'COP')
  const paid = payoffShortfall(schedule, quote, exact('650000.00'), 'COP')
  t.same(paid.map((a) => [a.number, a.interest, a.principal, a.paidInFull]), [[1, '15000.00', '300000.00', false], [2, '0.00', '330000.00', false], [3, '0.00', '5000.00', false]],
    'the first installment\'s 16,000 not accrued stays owed: it is not paid in full')
  const due = payoffQuote(schedule, DISBURSED, '2026-02-10', 'COP')
  t.same(payoffShortfall(schedule, due, exact('331000.00'), 'COP').map((a) => [a.number, a.amount, a.paidInFull]), [[1, '331000.00', true]], 'a due installment paid whole is paid in full')
})

t.test('a long first period at an effective rate accrues compounded, as its interest was charged', async (t) => {
  const schedule = frenchSchedule({
    principal: '1000000.00', term: 12, monthlyRate: monthlyRateOf('36', 'FIXED'), currency: 'COP', firstDueDate: '2027-01-25',
    firstPeriod: { months: 12, days: 0, rate: '36', rateType: 'FIXED' },
  })
  const installments = schedule.installments.map((i) => installmentPosition({ ...i, installmentId: `i${i.number}` }, '0', '0', null))
  t.equal(installments[0]?.interest, '360000.00', 'twelve months at 36 % E.A.')
  const credit = { installments, currency: 'COP', principal: '1000000.00', rate: '36', rateType: 'FIXED' as const, firstPeriod: { months: 12, days: 0 } }
  const quoteOn = (day: string) => payoffOf(credit, '2026-01-25T10:00:00.000Z', `${day}T12:00:00.000Z`, '2026-01-25T11:00:00.000Z')
  t.equal(toMoneyText(quoteOn('2026-07-25').interest, 'COP'), (1e6 * (Math.pow(1.36, 181 / 365) - 1)).toFixed(2), '181 of its 365 days: 1.36^(181/365) − 1, not 181/365 of the interest')
  t.equal(toMoneyText(quoteOn('2027-01-25').interest, 'COP'), '360000.00', 'on the due date the whole of it')
  t.equal(toMoneyText(quoteOn('2026-01-25').interest, 'COP'), '0.00', 'nothing on the disbursement day')
  const linear = payoffOf({ ...credit, firstPeriod: null }, '2026-01-25T10:00:00.000Z', '2026-07-25T12:00:00.000Z', '2026-01-25T11:00:00.000Z')
  t.equal(toMoneyText(linear.interest, 'COP'), '178520.55', 'a credit requested before first periods were weighed accrues by days, as before (181 of 365)')
})

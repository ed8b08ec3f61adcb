import t from 'tap'
import { exact, plus, toMoneyText } from '../../src/shared/exactDecimal.js'
import { applyAllocations, installmentPosition, isPaid, totalOutstanding, type InstallmentPosition } from '../../src/shared/installments.js'
import { accruedInterest, payoffDay, payoffQuote, payoffShortfall, settleQuote } from '../../src/shared/payoff.js'

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
  principal: toMoneyText(quote.principal, 'COP'), interest: toMoneyText(quote.interest, 'COP'), total: toMoneyText(quote.total, 'COP'),
  waived: toMoneyText(quote.waived, 'COP'),
  lines: quote.lines.map((l) => [l.number, toMoneyText(l.principal, 'COP'), toMoneyText(l.interest, 'COP'), toMoneyText(l.waived, 'COP')]),
})

t.test('on the disbursement day the payoff is the principal alone: every interest is forgiven', async (t) => {
  t.same(text(payoffQuote(schedule, DISBURSED, DISBURSED, 'COP')), {
    principal: '1000000.00', interest: '0.00', total: '1000000.00', waived: '90000.00',
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

t.test('paid installments are left out; interest paid ahead counts against its accrual and is never refunded', async (t) => {
  const firstPaid = applyAllocations(schedule, [
    { installmentId: 'i1', number: 1, principal: '300000.00', interest: '31000.00', amount: '331000.00', paidInFull: true },
    { installmentId: 'i2', number: 2, principal: '0.00', interest: '20000.00', amount: '20000.00', paidInFull: false },
  ], 'COP', '2026-02-01T00:00:00.000Z')
  const quote = text(payoffQuote(firstPaid, DISBURSED, '2026-02-24', 'COP'))
  t.same(quote.lines, [[2, '330000.00', '0.00', '8000.00'], [3, '370000.00', '0.00', '31000.00']],
    '20,000 paid on the second period, 14,000 accrued: nothing more owed, the 8,000 left forgiven, the 6,000 beyond kept')
  t.same([quote.total, quote.waived], ['700000.00', '39000.00'])
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

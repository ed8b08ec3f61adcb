import { Decimal } from 'decimal.js'
import t from 'tap'
import {
  addMonths, daysPastDue, firstPeriodInterest, firstPeriodOf, frenchSchedule, monthlyRateOf, monthlyRatePercent, scheduleEndsByLastYear,
} from '../../src/shared/amortization.js'
import { money } from '../../src/shared/money.js'

const rows = (schedule: ReturnType<typeof frenchSchedule>) => schedule.installments.map((i) => [i.principal, i.interest, i.amount])
const sum = (values: string[]) => values.reduce((total, v) => total.plus(v), money(0)).toFixed()

t.test('12% nominal (1% a month) over 12 months on 1,000,000.00: the annuity-table figures', async (t) => {
  // Hand check: payment = 1,000,000 × 0.01 / (1 − 1.01^−12) = 88,848.7887 → 88,848.79; first interest 1% of 1,000,000 = 10,000.00;
  // second interest 1% of 921,151.21 = 9,211.5121 → 9,211.51; the last installment takes the remaining 87,969.07 of principal.
  const schedule = frenchSchedule({ principal: '1000000.00', term: 12, monthlyRate: monthlyRateOf('12', 'FIXED_NOMINAL'), currency: 'COP', firstDueDate: '2026-02-15' })
  t.equal(schedule.installmentAmount, '88848.79')
  t.same(rows(schedule), [
    ['78848.79', '10000.00', '88848.79'],
    ['79637.28', '9211.51', '88848.79'],
    ['80433.65', '8415.14', '88848.79'],
    ['81237.99', '7610.80', '88848.79'],
    ['82050.37', '6798.42', '88848.79'],
    ['82870.87', '5977.92', '88848.79'],
    ['83699.58', '5149.21', '88848.79'],
    ['84536.58', '4312.21', '88848.79'],
    ['85381.94', '3466.85', '88848.79'],
    ['86235.76', '2613.03', '88848.79'],
    ['87098.12', '1750.67', '88848.79'],
    ['87969.07', '879.69', '88848.76'],
  ])
  t.equal(sum(schedule.installments.map((i) => i.principal)), '1000000', 'the principal parts add up to the principal exactly')
  t.equal(schedule.totalInterest, '66185.45')
  t.equal(schedule.totalAmount, '1066185.45')
})

t.test('FIXED reads rate as an effective annual rate: 24% E.A. is 1.8087582…% a month', async (t) => {
  // (1.24)^(1/12) − 1 = 0.0180875824835…; 1,000,000 × that = 18,087.58 of interest in the first month.
  t.equal(monthlyRateOf('24', 'FIXED').toDecimalPlaces(12).toFixed(), '0.018087582484')
  t.equal(monthlyRatePercent('24', 'FIXED'), '1.8087582484')
  const schedule = frenchSchedule({ principal: '1000000.00', term: 12, monthlyRate: monthlyRateOf('24', 'FIXED'), currency: 'COP', firstDueDate: '2026-02-15' })
  t.equal(schedule.installmentAmount, '93452.51')
  t.same(rows(schedule)[0], ['75364.93', '18087.58', '93452.51'])
  t.same(rows(schedule)[11], ['91792.20', '1660.30', '93452.50'])
  t.equal(sum(schedule.installments.map((i) => i.principal)), '1000000')
  // Twelve compounded months of the monthly rate give back the annual rate.
  t.equal(monthlyRateOf('24', 'FIXED').plus(1).pow(12).minus(1).toDecimalPlaces(20).toFixed(), '0.24')
})

t.test('rounding follows the currency\'s minor unit: JPY has none', async (t) => {
  const schedule = frenchSchedule({ principal: '500000', term: 6, monthlyRate: monthlyRateOf('18', 'FIXED'), currency: 'JPY', firstDueDate: '2026-02-15' })
  t.same(rows(schedule), [
    ['80487', '6944', '87431'], ['81605', '5826', '87431'], ['82738', '4693', '87431'],
    ['83887', '3544', '87431'], ['85052', '2379', '87431'], ['86231', '1198', '87429'],
  ])
  t.equal(sum(schedule.installments.map((i) => i.principal)), '500000')
})

t.test('a zero rate splits the principal evenly and the last installment absorbs the cent', async (t) => {
  const schedule = frenchSchedule({ principal: '1000.00', term: 3, monthlyRate: monthlyRateOf('0', 'FIXED'), currency: 'USD', firstDueDate: '2026-02-15' })
  t.same(rows(schedule), [['333.33', '0.00', '333.33'], ['333.33', '0.00', '333.33'], ['333.34', '0.00', '333.34']])
})

t.test('monthly due dates keep the day, clamped to shorter months', async (t) => {
  const schedule = frenchSchedule({ principal: '1200.00', term: 4, monthlyRate: money(0), currency: 'USD', firstDueDate: '2026-01-31' })
  t.same(schedule.installments.map((i) => i.dueDate), ['2026-01-31', '2026-02-28', '2026-03-31', '2026-04-30'])
  t.equal(addMonths('2027-12-31', 2), '2028-02-29', 'leap years')
})

t.test('days past due count whole days after the due date', async (t) => {
  t.equal(daysPastDue('2026-03-01', '2026-03-01'), 0)
  t.equal(daysPastDue('2026-03-01', '2026-02-01'), 0, 'not yet due')
  t.equal(daysPastDue('2026-03-01', '2026-04-01'), 31)
})

/** The schedule as the docs define it, computed with 300 digits: the reference for rates 40 digits cannot hold. */
const referenceRows = (principal: string, rate: string, rateType: 'FIXED' | 'FIXED_NOMINAL', term: number) => {
  const Big = Decimal.clone({ precision: 300, rounding: Decimal.ROUND_HALF_UP })
  const round = (x: Decimal) => x.toDecimalPlaces(2, Decimal.ROUND_HALF_UP)
  const annual = new Big(rate).div(100)
  const i = rateType === 'FIXED' ? annual.plus(1).pow(new Big(1).div(12)).minus(1) : annual.div(12)
  const payment = round(i.isZero() ? new Big(principal).div(term) : new Big(principal).mul(i).div(new Big(1).minus(i.plus(1).pow(-term))))
  let balance = new Big(principal)
  const out: string[][] = []
  for (let number = 1; number <= term; number++) {
    const interest = round(balance.mul(i))
    const level = payment.minus(interest)
    const due = number === term || balance.lessThan(level) ? balance : level
    balance = balance.minus(due)
    out.push([due.toFixed(2), interest.toFixed(2), due.plus(interest).toFixed(2)])
  }
  return { installmentAmount: payment.toFixed(2), rows: out }
}

t.test('a rate too small for 40 digits gives the schedule a 300-digit computation gives, never an Infinity payment', async (t) => {
  // At 40 digits 1 + i rounds to 1 once i < 10^-40 (P·i/0 = Infinity), and from about i < 10^-24 on, 1 − (1 + i)^−n keeps too few right
  // digits: 999,999,999,999,999.99 over 480 months at 0.(22 zeros)7 % N.M.V. came out 2,083,333,333,333.35 instead of …333.33.
  const tiny = frenchSchedule({ principal: '1000000.00', term: 12, monthlyRate: monthlyRateOf('0.0000000000000000000000000000000000000000001', 'FIXED_NOMINAL'), currency: 'COP', firstDueDate: '2026-02-15' })
  t.equal(tiny.installmentAmount, '83333.33')
  t.same(rows(tiny).slice(0, 2), [['83333.33', '0.00', '83333.33'], ['83333.33', '0.00', '83333.33']])
  t.same(rows(tiny)[11], ['83333.37', '0.00', '83333.37'])
  for (const rateType of ['FIXED', 'FIXED_NOMINAL'] as const) {
    for (let zeros = 8; zeros <= 45; zeros++) {
      const rate = `0.${'0'.repeat(zeros)}7`
      for (const [principal, term] of [['999999999999999.99', 480], ['1234.56', 12]] as const) {
        const schedule = frenchSchedule({ principal, term, monthlyRate: monthlyRateOf(rate, rateType), currency: 'COP', firstDueDate: '2026-02-15' })
        const expected = referenceRows(principal, rate, rateType, term)
        if (schedule.installmentAmount !== expected.installmentAmount || JSON.stringify(rows(schedule)) !== JSON.stringify(expected.rows)) {
          t.fail(`${rate} % ${rateType}, ${principal} over ${term}: ${schedule.installmentAmount}, expected ${expected.installmentAmount}`)
        }
      }
    }
  }
  t.pass('every tiny rate matches the reference')
})

t.test('a due date Date cannot read (a five-digit year an earlier release recorded) is never past due', async (t) => {
  t.equal(daysPastDue('10000-05-30', '2026-03-01'), 0)
  t.equal(daysPastDue('+010000-05-30', '2026-03-01'), 0)
  t.equal(daysPastDue('not a date', '2026-03-01'), 0)
})

t.test('a schedule ends by 9999-12-31 or not, counted in months', async (t) => {
  t.ok(scheduleEndsByLastYear('9999-01-31', 12), 'the twelfth installment falls on 9999-12-31')
  t.notOk(scheduleEndsByLastYear('9999-01-31', 13))
  t.notOk(scheduleEndsByLastYear('9999-06-30', 12))
  t.ok(scheduleEndsByLastYear('9960-01-01', 480))
  t.notOk(scheduleEndsByLastYear('9960-02-01', 480))
  t.equal(addMonths('9999-01-31', 11), '9999-12-31')
})

t.test('the first period is whole months on the start\'s day of the month, then days', async (t) => {
  t.same(firstPeriodOf('2026-01-25', '2026-02-05'), { months: 0, days: 11 })
  t.same(firstPeriodOf('2026-01-05', '2026-02-05'), { months: 1, days: 0 })
  t.same(firstPeriodOf('2026-01-05', '2026-02-28'), { months: 1, days: 23 })
  t.same(firstPeriodOf('2026-01-31', '2026-02-28'), { months: 1, days: 0 }, 'a month from Jan 31 ends on Feb 28')
  t.same(firstPeriodOf('2026-01-31', '2026-03-01'), { months: 1, days: 1 })
  t.same(firstPeriodOf('2025-12-15', '2026-12-15'), { months: 12, days: 0 })
})

t.test('the first installment\'s interest is its period\'s: simple at a nominal rate, compounded at an effective one; a month\'s is unchanged', async (t) => {
  const interest = (months: number, days: number) => firstPeriodInterest('1000000.00', '12', 'FIXED_NOMINAL', { months, days }, 'COP').toFixed(2)
  t.equal(interest(1, 0), '10000.00')
  t.equal(interest(0, 11), '3666.67', '1% × 11/30 = 0.3666…%')
  t.equal(interest(1, 23), '17666.67', '1% × (1 + 23/30)')
  const effective = monthlyRateOf('12', 'FIXED')
  t.equal(firstPeriodInterest('1000000.00', '12', 'FIXED', { months: 0, days: 11 }, 'COP').toFixed(2), (1e6 * (Math.pow(1.12, 11 / 360) - 1)).toFixed(2),
    '12 % E.A. over 11 days: 1.12^(11/360) − 1')
  t.equal(firstPeriodInterest('1000000.00', '12', 'FIXED', { months: 1, days: 0 }, 'COP').toFixed(2), effective.mul(1e6).toDecimalPlaces(2, Decimal.ROUND_HALF_UP).toFixed(2))
  t.equal(firstPeriodInterest('1000000', '0', 'FIXED', { months: 0, days: 11 }, 'JPY').toFixed(), '0')
  t.equal(firstPeriodInterest('1500015.00', '12', 'FIXED_NOMINAL', { months: 0, days: 7 }, 'COP').toFixed(2), '3500.04', '3,500.035 exactly: a tie rounds up')
  t.equal(firstPeriodInterest('4500', '12', 'FIXED_NOMINAL', { months: 1, days: 1 }, 'JPY').toFixed(), '47', '46.5 exactly')
})

t.test('a schedule with a short first period changes only the first installment\'s interest and amount', async (t) => {
  const base = { principal: '1000000.00', term: 12, monthlyRate: monthlyRateOf('12', 'FIXED_NOMINAL'), currency: 'COP', firstDueDate: '2026-02-05' }
  const monthly = frenchSchedule(base)
  const short = frenchSchedule({ ...base, firstPeriod: { months: 0, days: 11, rate: '12', rateType: 'FIXED_NOMINAL' } })
  t.same(rows(short)[0], ['78848.79', '3666.67', '82515.46'])
  t.same(rows(short).slice(1), rows(monthly).slice(1))
  t.same([short.installmentAmount, short.totalInterest, short.totalAmount], ['88848.79', '59852.12', '1059852.12'], '66,185.45 − 10,000.00 + 3,666.67')
})

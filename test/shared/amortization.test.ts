import t from 'tap'
import { addMonths, daysPastDue, frenchSchedule, monthlyRateOf, monthlyRatePercent } from '../../src/shared/amortization.js'
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

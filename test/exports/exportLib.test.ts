import t from 'tap'
import { Decimal } from 'decimal.js'
import { formatCell, type Column } from '../../src/exports/csv.js'
import { bureauANovelty } from '../../src/exports/dataSets/credit-bureau-a.js'
import { bureauBArrearsBracket } from '../../src/exports/dataSets/credit-bureau-b.js'
import { atMinorUnit } from '../../src/exports/lib/columns.js'
import { nitVerificationDigit, phoneDigits } from '../../src/exports/lib/identity.js'
import { activeIn, closingDay, dayFrom, daysIn, instantsIn, periodOf } from '../../src/exports/lib/period.js'
import { riskCategory } from '../../src/exports/lib/positions.js'

const decimal = (scale?: number): Column<unknown> => ({ name: 'c', format: 'decimal', description: 'c', value: (v) => v, ...(scale === undefined ? {} : { scale }) })

t.test('money keeps its minor unit; a string already at the column\'s scale is written as Decimal would write it', async (t) => {
  t.equal(formatCell(decimal(), '3000000.00'), '3000000.00', 'no scale: the read model\'s string as it is')
  t.equal(formatCell(decimal(), '1e3'), '1000', 'never exponent notation')
  for (const value of ['0.00', '12.50', '999999999999.99', '-5.25', '007.10', '1.005', '-0.00']) {
    t.equal(formatCell(decimal(2), value), new Decimal(value).toFixed(2, Decimal.ROUND_HALF_UP), value)
  }
  t.equal(formatCell(decimal(0), '2583990.23'), '2583990')
  t.equal(atMinorUnit('0', 'COP'), '0.00')
  t.equal(atMinorUnit('12.5', 'USD'), '12.50')
  t.equal(atMinorUnit('1500', 'JPY'), '1500')
  t.equal(atMinorUnit('280949.00', 'COP'), '280949.00')
})

t.test('periods: after inclusive, before exclusive; a due day belongs to the period its midnight falls in', async (t) => {
  const period = periodOf({ after: '2026-01-01T05:00:00-05:00', before: '2026-02-01T00:00:00Z' }, '2026-03-10T13:00:00.000Z')
  t.same(period, { after: '2026-01-01T10:00:00.000Z', before: '2026-02-01T00:00:00.000Z' }, 'bounds in UTC')
  t.same(periodOf({}, '2026-03-10T13:00:00Z'), { after: null, before: '2026-03-10T13:00:00.000Z' }, 'before defaults to the request time')
  t.same(instantsIn('at', period), { at: { $gte: '2026-01-01T10:00:00.000Z', $lt: '2026-02-01T00:00:00.000Z' } })
  t.equal(dayFrom('2026-01-01T00:00:00.000Z'), '2026-01-01')
  t.equal(dayFrom('2026-01-01T10:00:00.000Z'), '2026-01-02', 'the first midnight at or after the instant')
  t.same(daysIn('dueDate', period), { dueDate: { $gte: '2026-01-02', $lt: '2026-02-01' } })
  t.equal(closingDay('2026-02-01T00:00:00.000Z'), '2026-01-31')
  t.equal(closingDay('2026-03-10T13:00:00.000Z'), '2026-03-10')
  t.same(activeIn({ after: null, before: 'B' }), { disbursedAt: { $lt: 'B' } })
})

t.test('NIT verification digits follow DIAN\'s modulus 11', async (t) => {
  t.equal(nitVerificationDigit('800197268'), '4', 'DIAN\'s own NIT')
  t.equal(nitVerificationDigit('900123456'), '8')
  t.equal(nitVerificationDigit('860.034.313'), '7')
  t.equal(nitVerificationDigit('E-445566'), null)
  t.equal(phoneDigits('+57 (300) 123-4567'), '573001234567')
})

t.test('arrears: risk categories per portfolio, bureau novelties and brackets', async (t) => {
  t.same([0, 30, 31, 60, 61, 90, 91, 180, 181].map((d) => riskCategory('consumo', d)), ['A', 'A', 'B', 'B', 'C', 'C', 'D', 'D', 'E'])
  t.same([30, 31, 90, 91, 180, 181, 360, 361].map((d) => riskCategory('comercial', d)), ['A', 'B', 'B', 'C', 'C', 'D', 'D', 'E'])
  const at = (state: 'Desembolsado' | 'Pagado', daysPastDue: number) => ({ state, daysPastDue })
  t.same([0, 29, 30, 59, 60, 90, 119, 120].map((d) => bureauANovelty(at('Desembolsado', d))), ['01', '01', '06', '06', '07', '08', '08', '09'])
  t.equal(bureauANovelty(at('Pagado', 0)), '05')
  t.same([0, 1, 30, 31, 60, 61, 120, 121, 400].map(bureauBArrearsBracket), ['00', '01', '01', '02', '02', '03', '04', '05', '05'])
})

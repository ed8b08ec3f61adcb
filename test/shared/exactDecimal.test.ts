import t from 'tap'
import { compare, exact, isZero, lessThan, minus, plus, toMoneyText, toPlainString, ZERO } from '../../src/shared/exactDecimal.js'
import { money, toMoneyString } from '../../src/shared/money.js'

t.test('sums and differences of amounts of different scales are exact: the values decimal.js computes', async (t) => {
  const amounts = ['0', '0.00', '1', '88848.79', '-3466.85', '0.005', '1e3', '123456789012345678901234.56', '-0.10', '879.690']
  for (const a of amounts) {
    for (const b of amounts) {
      t.equal(money(toPlainString(plus(exact(a), exact(b)))).toFixed(), money(a).plus(b).toFixed(), `${a} + ${b}`)
      t.equal(money(toPlainString(minus(exact(a), exact(b)))).toFixed(), money(a).minus(b).toFixed(), `${a} - ${b}`)
    }
  }
})

t.test('zero is zero at any scale; the sum of nothing is zero', async (t) => {
  t.ok(isZero(exact('0.000')))
  t.ok(isZero(minus(exact('12.50'), exact('12.5'))))
  t.notOk(isZero(exact('0.01')))
  t.equal(toPlainString(ZERO), '0')
})

t.test('money text is what toMoneyString writes: padded to the minor unit, rounded half-up beyond it', async (t) => {
  for (const [amount, currency] of [['5', 'COP'], ['5.1', 'COP'], ['-5.1', 'USD'], ['5.125', 'COP'], ['5.124', 'COP'], ['-5.125', 'COP'], ['7.5', 'JPY'],
    ['1.2345', 'BHD'], ['1.2', undefined], ['1.50', undefined], ['0.00', ''], ['42', 'XXZ']] as const) {
    t.equal(toMoneyText(exact(amount), currency), toMoneyString(amount, currency), `${amount} ${String(currency)}`)
  }
})

t.test('comparisons agree with decimal.js across scales and signs', async (t) => {
  const amounts = ['0', '0.00', '-0.01', '0.01', '12.5', '12.50', '12.499', '-12.5', '1000000000000000000000.01', '999999999999999999999.999']
  for (const a of amounts) {
    for (const b of amounts) {
      t.equal(compare(exact(a), exact(b)), money(a).comparedTo(b), `${a} vs ${b}`)
      t.equal(lessThan(exact(a), exact(b)), money(a).lessThan(b), `${a} < ${b}`)
    }
  }
})

t.test('reading a decimal gives decimal.js\'s value whether it is short (read as a double) or long (read as a BigInt)', async (t) => {
  const texts = ['0', '-0', '-0.00', '007', '1.50', '999999999999999', '-999999999999999', '9999999999999999', '99999999999999.9', '999999999999999.9',
    '123456789012345.67', '0.000000000000001', '0.0000000000000001', '9007199254740993', '.5', '5.', '1e3', '-1.5E-2', '12.345678901234567']
  for (const text of texts) t.equal(money(toPlainString(exact(text))).toFixed(), money(text).toFixed(), text)
  t.equal(toPlainString(exact('1.50')), '1.50', 'the scale written is kept')
  for (const malformed of ['', '-', '1.2.3', '1,5', ' 1', '--1', '1-']) t.throws(() => exact(malformed), `${JSON.stringify(malformed)} is refused`)
})

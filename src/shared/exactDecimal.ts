import { minorUnitDigits, money, toMoneyString } from './money.js'

/**
 * A decimal amount as an integer count of 10^-scale units: sums and
 * differences of amounts are exact, as with decimal.js, at a fraction of the
 * cost. Read models derive figures from dozens of installment amounts per
 * event, which decimal.js made the bulk of a rebuild's time.
 */
export interface ExactDecimal {
  readonly units: bigint
  readonly scale: number
}

const PLAIN = /^-?\d+(\.\d+)?$/
const powers: bigint[] = [1n]
const tenTo = (n: number): bigint => {
  for (let i = powers.length; i <= n; i++) powers.push((powers[i - 1] ?? 1n) * 10n)
  return powers[n] ?? 1n
}

export const ZERO: ExactDecimal = { units: 0n, scale: 0 }

/** Digits a double holds exactly, whatever they are (2^53 has 16). */
const SAFE_DIGITS = 15

/**
 * A plain decimal of at most SAFE_DIGITS digits read in one pass, its digits
 * summed as a double: amounts are read on every payment, projection and
 * webhook render, and this is several times cheaper than matching a pattern
 * and handing a string to BigInt. null for anything else.
 */
const shortPlain = (value: string): ExactDecimal | null => {
  const length = value.length
  let index = length > 0 && value.charCodeAt(0) === 45 ? 1 : 0
  const negative = index === 1
  let units = 0
  let digits = 0
  let dot = -1
  for (; index < length; index++) {
    const code = value.charCodeAt(index)
    if (code >= 48 && code <= 57) {
      units = units * 10 + (code - 48)
      digits += 1
    } else if (code === 46 && dot < 0 && digits > 0) {
      dot = index
    } else {
      return null
    }
  }
  if (digits === 0 || digits > SAFE_DIGITS || dot === length - 1) return null
  return { units: BigInt(negative ? -units : units), scale: dot < 0 ? 0 : length - dot - 1 }
}

/** Reads a decimal string (exponent forms through decimal.js). */
export const exact = (value: string): ExactDecimal => {
  const short = shortPlain(value)
  if (short !== null) return short
  const text = PLAIN.test(value) ? value : money(value).toFixed()
  const dot = text.indexOf('.')
  return dot < 0
    ? { units: BigInt(text), scale: 0 }
    : { units: BigInt(text.slice(0, dot) + text.slice(dot + 1)), scale: text.length - dot - 1 }
}

const aligned = (a: ExactDecimal, b: ExactDecimal): [bigint, bigint, number] =>
  a.scale === b.scale ? [a.units, b.units, a.scale]
    : a.scale < b.scale ? [a.units * tenTo(b.scale - a.scale), b.units, b.scale]
      : [a.units, b.units * tenTo(a.scale - b.scale), a.scale]

// Amounts of one currency share their scale: that case builds no aligned tuple.
export const plus = (a: ExactDecimal, b: ExactDecimal): ExactDecimal => {
  if (a.scale === b.scale) return { units: a.units + b.units, scale: a.scale }
  const [x, y, scale] = aligned(a, b)
  return { units: x + y, scale }
}

export const minus = (a: ExactDecimal, b: ExactDecimal): ExactDecimal => {
  if (a.scale === b.scale) return { units: a.units - b.units, scale: a.scale }
  const [x, y, scale] = aligned(a, b)
  return { units: x - y, scale }
}

export const isZero = (a: ExactDecimal): boolean => a.units === 0n

/** -1, 0 or 1 as a is less than, equal to or greater than b. */
export const compare = (a: ExactDecimal, b: ExactDecimal): -1 | 0 | 1 => {
  const [x, y] = a.scale === b.scale ? [a.units, b.units] : aligned(a, b)
  return x < y ? -1 : x > y ? 1 : 0
}

export const lessThan = (a: ExactDecimal, b: ExactDecimal): boolean => compare(a, b) < 0

export const smaller = (a: ExactDecimal, b: ExactDecimal): ExactDecimal => (lessThan(a, b) ? a : b)

export const larger = (a: ExactDecimal, b: ExactDecimal): ExactDecimal => (lessThan(a, b) ? b : a)

/** The amount as a plain decimal string (for toMoneyString, which rounds and pads it). */
export const toPlainString = (a: ExactDecimal): string => {
  const negative = a.units < 0n
  const digits = (negative ? -a.units : a.units).toString()
  if (a.scale === 0) return `${negative ? '-' : ''}${digits}`
  const padded = digits.padStart(a.scale + 1, '0')
  return `${negative ? '-' : ''}${padded.slice(0, -a.scale)}.${padded.slice(-a.scale)}`
}

/**
 * toMoneyString of the amount, without decimal.js when the currency's minor
 * unit holds it as it is (padding only); decimal.js rounds the other cases.
 */
export const toMoneyText = (a: ExactDecimal, currency?: string): string => {
  if (currency === undefined) return toMoneyString(toPlainString(a), currency)
  const digits = minorUnitDigits(currency)
  if (a.scale > digits) return toMoneyString(toPlainString(a), currency)
  return toPlainString({ units: a.units * tenTo(digits - a.scale), scale: digits })
}

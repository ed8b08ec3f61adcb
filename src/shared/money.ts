import currencyCodes from 'currency-codes'
import { Decimal } from 'decimal.js'

/** Decimal configured for money: enough precision for any amount, banker-free half-up rounding. */
export const Money = Decimal.clone({ precision: 40, rounding: Decimal.ROUND_HALF_UP })
export type Money = Decimal

export const DECIMAL_PATTERN = '^-?[0-9]+(\\.[0-9]+)?$'
export const NON_NEGATIVE_DECIMAL_PATTERN = '^[0-9]+(\\.[0-9]+)?$'

/**
 * The bound of every amount a request carries: at most 15 integer digits and
 * 4 decimals (the longest ISO 4217 minor unit), as profiles' amounts always
 * were (10^15 COP is about 250 billion US dollars, 10^15 JPY 6 trillion).
 * So an input has at most 19 significant digits, and what the service
 * computes from it stays far inside the 40 digits of Money: a schedule's
 * figures at the highest rate a line takes (999999.9999999999 % a year, about
 * 834 a month) stay under 10^21 over 480 months, a tax is a 19-digit amount
 * times a 7-digit percentage. Sums and differences of amounts are exact, and
 * products round 15 digits and more below the smallest minor unit.
 */
export const MONEY_INPUT_PATTERN = '^[0-9]{1,15}(\\.[0-9]{1,4})?$'

/** Every money input is below this (10^15); for JSON numbers, which a pattern cannot bound. */
export const MONEY_INPUT_LIMIT = 1e15

/** Whether an amount is below the money input bound (one recorded before the bound may not be). */
export const withinMoneyBound = (value: Decimal.Value): boolean => new Money(value).abs().lessThan(MONEY_INPUT_LIMIT)

/**
 * ISO 4217 codes that are not money a credit can be lent in: precious metals,
 * bond-market units, the SDR and ADB unit, the testing code and "no currency".
 */
const NOT_LENDABLE = new Set(['XAU', 'XAG', 'XPT', 'XPD', 'XBA', 'XBB', 'XBC', 'XBD', 'XDR', 'XSU', 'XUA', 'XTS', 'XXX'])

/** An ISO 4217 currency code a credit can be denominated in (COP, USD, EUR, XOF, …). */
export const isCurrencyCode = (code: string): boolean => {
  const entry = currencyCodes.code(code)
  return entry !== undefined && Number.isInteger(entry.digits) && !NOT_LENDABLE.has(code)
}

const digitsByCode = new Map<string, number>()

/** Digits of the currency's minor unit from the ISO 4217 list (COP 2, JPY 0, BHD 3). Remembered: the list is searched linearly. */
export const minorUnitDigits = (currency: string): number => {
  let digits = digitsByCode.get(currency)
  if (digits === undefined) {
    digits = currencyCodes.code(currency)?.digits ?? 2
    digitsByCode.set(currency, digits)
  }
  return digits
}

export const money = (value: Decimal.Value): Decimal => new Money(value)

/** Wire form of an amount: a plain decimal string, never exponent notation, never a float. */
export const toMoneyString = (value: Decimal.Value, currency?: string): string => {
  const amount = new Money(value)
  return currency === undefined ? amount.toFixed() : amount.toFixed(minorUnitDigits(currency))
}

export const roundToMinorUnit = (value: Decimal.Value, currency: string): Decimal =>
  new Money(value).toDecimalPlaces(minorUnitDigits(currency), Decimal.ROUND_HALF_UP)

/** True when the amount has no more decimals than the currency's minor unit allows. */
export const fitsMinorUnit = (value: Decimal.Value, currency: string): boolean =>
  new Money(value).decimalPlaces() <= minorUnitDigits(currency)

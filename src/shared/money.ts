import currencyCodes from 'currency-codes'
import { Decimal } from 'decimal.js'

/** Decimal configured for money: enough precision for any amount, banker-free half-up rounding. */
export const Money = Decimal.clone({ precision: 40, rounding: Decimal.ROUND_HALF_UP })
export type Money = Decimal

export const DECIMAL_PATTERN = '^-?[0-9]+(\\.[0-9]+)?$'
export const NON_NEGATIVE_DECIMAL_PATTERN = '^[0-9]+(\\.[0-9]+)?$'

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

import currencyCodes from 'currency-codes'
import { Decimal } from 'decimal.js'

/** Decimal configured for money: enough precision for any amount, banker-free half-up rounding. */
export const Money = Decimal.clone({ precision: 40, rounding: Decimal.ROUND_HALF_UP })
export type Money = Decimal

export const DECIMAL_PATTERN = '^-?[0-9]+(\\.[0-9]+)?$'
export const NON_NEGATIVE_DECIMAL_PATTERN = '^[0-9]+(\\.[0-9]+)?$'

/** An ISO 4217 currency code with a defined minor unit (funds codes like XAU have none and are refused). */
export const isCurrencyCode = (code: string): boolean => {
  const entry = currencyCodes.code(code)
  return entry !== undefined && Number.isInteger(entry.digits)
}

/** Digits of the currency's minor unit from the ISO 4217 list (COP 2, JPY 0, BHD 3). */
export const minorUnitDigits = (currency: string): number => currencyCodes.code(currency)?.digits ?? 2

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

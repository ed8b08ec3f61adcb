import type { Decimal } from 'decimal.js'
import type { RateType } from './lending.js'
import { money, Money, roundToMinorUnit, toMoneyString } from './money.js'

/** One row of a schedule, money as decimal strings in the currency's minor unit. */
export interface ScheduledInstallment {
  number: number
  /** YYYY-MM-DD */
  dueDate: string
  principal: string
  interest: string
  amount: string
}

export interface Schedule {
  /** The level payment (every installment but possibly the first, when its period is not a month, and the last). */
  installmentAmount: string
  totalInterest: string
  totalAmount: string
  installments: ScheduledInstallment[]
}

/** The monthly rate (a fraction, unrounded) a line's `rate` percentage stands for. */
export const monthlyRateOf = (rate: string, rateType: RateType): Decimal => {
  const annual = money(rate).div(100)
  switch (rateType) {
    case 'FIXED':
      return annual.plus(1).pow(money(1).div(12)).minus(1)
    case 'FIXED_NOMINAL':
      return annual.div(12)
    default: {
      const _never: never = rateType
      return _never
    }
  }
}

/** The monthly rate as a percentage for display, 10 decimals. */
export const monthlyRatePercent = (rate: string, rateType: RateType): string =>
  monthlyRateOf(rate, rateType).mul(100).toDecimalPlaces(10).toFixed(10)

const pad = (n: number) => String(n).padStart(2, '0')

/**
 * The last year the service writes or reads: its dates are YYYY-MM-DD, and
 * JavaScript writes a later year with five digits (`10000-01-31`,
 * `+010000-…`), text that neither parses as a date nor sorts after 9999.
 */
export const LAST_YEAR = 9999

/** Whether the last installment of a monthly schedule of `term` months from `firstDueDate` (YYYY-MM-DD) falls on or before 9999-12-31. */
export const scheduleEndsByLastYear = (firstDueDate: string, term: number): boolean => {
  const [year = Number.NaN, month = Number.NaN] = firstDueDate.split('-').map(Number)
  return year * 12 + (month - 1) + (term - 1) <= LAST_YEAR * 12 + 11
}

/**
 * `date` (YYYY-MM-DD) plus `months`, on `day` of that month (default: `date`'s),
 * clamped to the end of shorter months (Jan 31 + 1 → Feb 28/29).
 */
export const addMonths = (date: string, months: number, day?: number): string => {
  const [y, m, d] = date.split('-').map(Number)
  if (y === undefined || m === undefined || d === undefined) throw new Error(`not a date: ${date}`)
  const first = new Date(Date.UTC(y, m - 1 + months, 1))
  const lastDay = new Date(Date.UTC(first.getUTCFullYear(), first.getUTCMonth() + 1, 0)).getUTCDate()
  return `${first.getUTCFullYear()}-${pad(first.getUTCMonth() + 1)}-${pad(Math.min(day ?? d, lastDay))}`
}

/** The day of the month of a date (YYYY-MM-DD). */
export const dayOfMonthOf = (date: string): number => Number(date.slice(8, 10))

/** The UTC calendar day of an instant. */
export const dayOf = (instant: string | Date): string => new Date(instant).toISOString().slice(0, 10)

/**
 * Due dates of a monthly schedule: installment k falls k − 1 months after the
 * first due date, on `dayOfMonth` (default: the first due date's), clamped in
 * shorter months but never carried on from a clamped one.
 */
export const dueDates = (firstDueDate: string, term: number, dayOfMonth?: number): string[] =>
  Array.from({ length: term }, (_, k) => addMonths(firstDueDate, k, dayOfMonth))

/**
 * Whole days `dueDate` lies before `today` (both YYYY-MM-DD); 0 when not yet due.
 * A due date that does not parse is 0 too: the only ones a log can hold are
 * the five-digit years written before such schedules were refused, which no
 * day the service reaches is past.
 */
export const daysPastDue = (dueDate: string, today: string): number => {
  const days = Math.round((Date.parse(`${today}T00:00:00Z`) - Date.parse(`${dueDate}T00:00:00Z`)) / 86_400_000)
  return Number.isFinite(days) && days > 0 ? days : 0
}

/**
 * A monthly rate below this gives the zero-rate schedule to the minor unit,
 * so it is taken as zero (and the annuity factor never needs more than 70
 * digits). On a principal under 10^15 (the money bound) each period's
 * interest is under 10^-15 and rounds to 0, and the level payment exceeds P/n
 * by under 10^-15, while P/n (P with at most 4 decimals, n ≤ 480) is either
 * on a rounding tie, which half-up rounds the same way, or at least
 * 1/(2·480·10^4) ≈ 10^-7 away from one.
 */
const NEGLIGIBLE_MONTHLY_RATE = money('1e-30')

const constructors = new Map<number, typeof Money>()

/**
 * 1 − (1 + i)^−n, which is about n·i: at a fixed precision a small i cancels
 * away (at 40 digits 1 + 10^−41 is 1, and P·i/0 is Infinity; well before that
 * the factor keeps only a few right digits), so it is computed with as many
 * more digits as i has leading zeros.
 */
const annuityFactor = (i: Decimal, term: number): Decimal => {
  const precision = Money.precision + Math.max(0, -i.e)
  let Exact = constructors.get(precision)
  if (Exact === undefined) {
    Exact = Money.clone({ precision })
    constructors.set(precision, Exact)
  }
  return money(new Exact(1).minus(new Exact(i).plus(1).pow(-term)))
}

/** The first period of a schedule, from the day it starts (the disbursement's; the request's for the provisional one) to its first due date. */
export interface FirstPeriod {
  /** Whole months, each ending on the start's day of the month (clamped in shorter months). */
  months: number
  /** Days after them. */
  days: number
}

export const firstPeriodOf = (start: string, firstDueDate: string): FirstPeriod => {
  const day = dayOfMonthOf(start)
  let months = Math.max(0, (Number(firstDueDate.slice(0, 4)) - Number(start.slice(0, 4))) * 12 + Number(firstDueDate.slice(5, 7)) - Number(start.slice(5, 7)))
  while (months > 0 && addMonths(start, months, day) > firstDueDate) months -= 1
  const from = addMonths(start, months, day)
  return { months, days: Math.round((Date.parse(`${firstDueDate}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000) }
}

/**
 * The interest of the first installment: the principal times the rate of the
 * first period. A month's is the monthly rate i; a period of m months and d
 * days runs m + d/30 months, compounded at an effective rate ((1 + i)^(m +
 * d/30) − 1) and simple at a nominal one (the annual rate × (30m + d)/360,
 * divided last, so a tie in the minor unit rounds up as it should), so a
 * first due date eleven days after disbursement charges eleven days of
 * interest, and one seven weeks out charges seven weeks'. Rounded half up in
 * the minor unit.
 */
export const firstPeriodInterest = (principal: Decimal.Value, rate: string, rateType: RateType, period: FirstPeriod, currency: string): Decimal => {
  const days = period.months * 30 + period.days
  if (days === 30) return roundToMinorUnit(money(principal).mul(negligible(monthlyRateOf(rate, rateType))), currency)
  return interestOver(principal, rate, rateType, money(days), currency)
}

/**
 * Interest on a principal over a time in thirtieths of a month (days, or a
 * share of them), compounded at an effective rate and simple at a nominal one
 * (the annual rate × thirtieths / 360, divided last).
 */
export const interestOver = (principal: Decimal.Value, rate: string, rateType: RateType, thirtieths: Decimal, currency: string): Decimal => {
  const i = negligible(monthlyRateOf(rate, rateType))
  if (i.isZero()) return roundToMinorUnit(money(0), currency)
  switch (rateType) {
    case 'FIXED':
      return roundToMinorUnit(money(principal).mul(i.plus(1).pow(thirtieths.div(30)).minus(1)), currency)
    case 'FIXED_NOMINAL':
      return roundToMinorUnit(money(principal).mul(rate).mul(thirtieths).div(36000), currency)
    default: {
      const _never: never = rateType
      return _never
    }
  }
}

const negligible = (monthlyRate: Decimal): Decimal => (monthlyRate.lessThan(NEGLIGIBLE_MONTHLY_RATE) ? money(0) : monthlyRate)

/**
 * French (equal-payment) amortization over monthly periods. The level payment
 * P·i / (1 − (1 + i)^−n) is rounded half-up to the currency's minor unit; each
 * period's interest is the running balance times i, rounded the same way; the
 * principal part is the payment minus that interest, and the last installment
 * takes whatever balance is left, so the principal parts add up to the
 * principal exactly. A zero rate, or one too small to show in money, gives
 * P/n per period. With `firstPeriod` the first installment's interest is
 * that period's (firstPeriodInterest) and its principal part stays the
 * level schedule's, so only its amount differs from the others'.
 */
export const frenchSchedule = (input: {
  principal: string
  term: number
  monthlyRate: Decimal
  currency: string
  firstDueDate: string
  /** The day of the month the due dates keep; default the first due date's. */
  dayOfMonth?: number
  /** The first period when it is not a month's interest (absent: a month's, whatever its length, as credits requested before November 2026 had). */
  firstPeriod?: FirstPeriod & { rate: string; rateType: RateType }
}): Schedule => {
  const { term, currency } = input
  const principal = money(input.principal)
  const i = negligible(input.monthlyRate)
  const round = (value: Decimal) => roundToMinorUnit(value, currency)
  const payment = round(i.isZero() ? principal.div(term) : principal.mul(i).div(annuityFactor(i, term)))
  const dates = dueDates(input.firstDueDate, term, input.dayOfMonth)
  const installments: ScheduledInstallment[] = []
  let balance = principal
  let totalInterest = money(0)
  for (let number = 1; number <= term; number++) {
    const monthly = round(balance.mul(i))
    const due = number === term ? balance : smaller(payment.minus(monthly), balance)
    const interest = number === 1 && input.firstPeriod !== undefined
      ? firstPeriodInterest(balance, input.firstPeriod.rate, input.firstPeriod.rateType, input.firstPeriod, currency)
      : monthly
    balance = balance.minus(due)
    totalInterest = totalInterest.plus(interest)
    installments.push({
      number,
      dueDate: dates[number - 1] ?? input.firstDueDate,
      principal: toMoneyString(due, currency),
      interest: toMoneyString(interest, currency),
      amount: toMoneyString(due.plus(interest), currency),
    })
  }
  return {
    installmentAmount: toMoneyString(payment, currency),
    totalInterest: toMoneyString(totalInterest, currency),
    totalAmount: toMoneyString(principal.plus(totalInterest), currency),
    installments,
  }
}

const smaller = (a: Decimal, b: Decimal): Decimal => (a.lessThan(b) ? a : b)

import type { Decimal } from 'decimal.js'
import type { RateType } from './lending.js'
import { money, roundToMinorUnit, toMoneyString } from './money.js'

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
  /** The level payment (every installment but possibly the last). */
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

/** `date` (YYYY-MM-DD) plus `months`, clamped to the end of shorter months (Jan 31 + 1 → Feb 28/29). */
export const addMonths = (date: string, months: number): string => {
  const [y, m, d] = date.split('-').map(Number)
  if (y === undefined || m === undefined || d === undefined) throw new Error(`not a date: ${date}`)
  const first = new Date(Date.UTC(y, m - 1 + months, 1))
  const lastDay = new Date(Date.UTC(first.getUTCFullYear(), first.getUTCMonth() + 1, 0)).getUTCDate()
  return `${first.getUTCFullYear()}-${pad(first.getUTCMonth() + 1)}-${pad(Math.min(d, lastDay))}`
}

/** The UTC calendar day of an instant. */
export const dayOf = (instant: string | Date): string => new Date(instant).toISOString().slice(0, 10)

/** Due dates of a monthly schedule: installment k falls k − 1 months after the first due date. */
export const dueDates = (firstDueDate: string, term: number): string[] =>
  Array.from({ length: term }, (_, k) => addMonths(firstDueDate, k))

/** Whole days `dueDate` lies before `today` (both YYYY-MM-DD); 0 when not yet due. */
export const daysPastDue = (dueDate: string, today: string): number =>
  Math.max(0, Math.round((Date.parse(`${today}T00:00:00Z`) - Date.parse(`${dueDate}T00:00:00Z`)) / 86_400_000))

/**
 * French (equal-payment) amortization over monthly periods. The level payment
 * P·i / (1 − (1 + i)^−n) is rounded half-up to the currency's minor unit; each
 * period's interest is the running balance times i, rounded the same way; the
 * principal part is the payment minus that interest, and the last installment
 * takes whatever balance is left, so the principal parts add up to the
 * principal exactly. A zero rate gives P/n per period.
 */
export const frenchSchedule = (input: {
  principal: string
  term: number
  monthlyRate: Decimal
  currency: string
  firstDueDate: string
}): Schedule => {
  const { term, monthlyRate: i, currency } = input
  const principal = money(input.principal)
  const round = (value: Decimal) => roundToMinorUnit(value, currency)
  const payment = i.isZero()
    ? round(principal.div(term))
    : round(principal.mul(i).div(money(1).minus(i.plus(1).pow(-term))))
  const dates = dueDates(input.firstDueDate, term)
  const installments: ScheduledInstallment[] = []
  let balance = principal
  let totalInterest = money(0)
  for (let number = 1; number <= term; number++) {
    const interest = round(balance.mul(i))
    const due = number === term ? balance : smaller(payment.minus(interest), balance)
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

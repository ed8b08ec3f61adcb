import { compare, exact, isZero, lessThan, minus, plus, toMoneyText, ZERO, type ExactDecimal } from './exactDecimal.js'
import { dayOf } from './amortization.js'
import { allocatePayment, outstandingOf, type Allocation, type InstallmentPosition, type InterestWaiver, type Outstanding } from './installments.js'
import { ZERO_INSTALLMENT } from './lending.js'
import { money, roundToMinorUnit } from './money.js'

/** What paying a credit off on one day takes from one installment. */
export interface PayoffLine {
  installmentId: string
  number: number
  dueDate: string
  principal: ExactDecimal
  /** Interest accrued by the day and not paid yet. */
  interest: ExactDecimal
  /** Scheduled interest not accrued by the day: forgiven by the payoff. */
  waived: ExactDecimal
}

export interface PayoffQuote {
  /** The value day (YYYY-MM-DD) the quote is for. */
  day: string
  principal: ExactDecimal
  interest: ExactDecimal
  total: ExactDecimal
  waived: ExactDecimal
  /** The installments owing anything, oldest first. */
  lines: PayoffLine[]
}

const DAY_MS = 86_400_000
const daysBetween = (from: string, to: string): number => Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS)

/**
 * Interest an installment's period has accrued by `day`, in the minor unit
 * (half up): none before the period starts, all of it from its due date on,
 * and in between its share by days (the period runs from the previous due
 * date, or the disbursement day for the first installment, to its own).
 */
export const accruedInterest = (interest: string, periodStart: string, dueDate: string, day: string, currency: string): ExactDecimal => {
  if (day >= dueDate) return exact(interest)
  if (day <= periodStart) return ZERO
  const period = daysBetween(periodStart, dueDate)
  if (period <= 0) return exact(interest)
  const share = money(interest).times(daysBetween(periodStart, day)).dividedBy(period)
  return exact(roundToMinorUnit(share, currency).toFixed())
}

/**
 * What paying the whole credit off on `day` (the day weighed, payoffDay) costs: every
 * unpaid principal, the interest of installments due by then, the accrued
 * share of the current period's interest, and no interest of later periods
 * (a prepayment without penalty, as Colombia's Ley 1555 of 2012 gives
 * consumers). Interest already paid on a period counts against its accrual;
 * interest paid ahead beyond it stays paid (nothing is refunded).
 */
export const payoffQuote = (
  installments: readonly InstallmentPosition[], disbursedDay: string, day: string, currency: string,
): PayoffQuote => {
  const lines: PayoffLine[] = []
  let principal = ZERO
  let interest = ZERO
  let waived = ZERO
  let periodStart = disbursedDay
  for (const installment of [...installments].sort((a, b) => a.number - b.number)) {
    const start = periodStart
    periodStart = installment.dueDate
    const owed = outstandingOf(installment)
    if (isZero(owed.total)) continue
    const accrued = accruedInterest(installment.interest, start, installment.dueDate, day, currency)
    const stillAccrued = minus(accrued, plus(exact(installment.paidInterest), exact(installment.waivedInterest ?? '0')))
    const interestDue = compare(stillAccrued, ZERO) <= 0 ? ZERO : lessThan(owed.interest, stillAccrued) ? owed.interest : stillAccrued
    const forgiven = minus(owed.interest, interestDue)
    lines.push({ installmentId: installment.installmentId, number: installment.number, dueDate: installment.dueDate, principal: owed.principal, interest: interestDue, waived: forgiven })
    principal = plus(principal, owed.principal)
    interest = plus(interest, interestDue)
    waived = plus(waived, forgiven)
  }
  return { day, principal, interest, total: plus(principal, interest), waived, lines }
}

/** The payments and waivers that settle a quote: each line's interest and principal paid in full, its unaccrued interest waived. */
export const settleQuote = (quote: PayoffQuote, currency: string): { allocations: Allocation[]; waivers: InterestWaiver[] } => ({
  allocations: quote.lines
    .filter((line) => !isZero(plus(line.principal, line.interest)))
    .map((line) => ({
      installmentId: line.installmentId, number: line.number, principal: toMoneyText(line.principal, currency), interest: toMoneyText(line.interest, currency),
      amount: toMoneyText(plus(line.principal, line.interest), currency), paidInFull: true,
    })),
  waivers: quote.lines
    .filter((line) => !isZero(line.waived))
    .map((line) => ({ installmentId: line.installmentId, number: line.number, interest: toMoneyText(line.waived, currency) })),
})

/**
 * The day a payoff is weighed on: the order's value date, never before the
 * disbursement day, nor before the last due date the order was made on or
 * after. A value date is when the money moved, which may be a few days before
 * the order records it; an installment already due when the order was made
 * was owed whole, so a back-dated order never forgives interest that had
 * fallen due.
 */
export const payoffDay = (installments: readonly Pick<InstallmentPosition, 'dueDate'>[], disbursedAt: string, valueDate: string, orderedAt: string): string => {
  const ordered = dayOf(orderedAt)
  let day = dayOf(valueDate)
  const start = dayOf(disbursedAt)
  if (day < start) day = start
  for (const { dueDate } of installments) if (dueDate <= ordered && dueDate > day) day = dueDate
  return day
}

/** A credit's payoff, disbursed at `disbursedAt`, for an order with this value date made at `orderedAt` (the quote's `day` is the day weighed). */
export const payoffOf = (
  credit: { installments: readonly InstallmentPosition[]; currency: string }, disbursedAt: string, valueDate: string, orderedAt: string,
): PayoffQuote =>
  payoffQuote(credit.installments, dayOf(disbursedAt), payoffDay(credit.installments, disbursedAt, valueDate, orderedAt), credit.currency)

/**
 * How an amount short of the payoff is applied: oldest first, each
 * installment's accrued interest then its principal, never interest not
 * accrued yet; nothing is forgiven and the credit stays open. (Only `zero`
 * orders made before orders had to ask the payoff reach this.)
 */
export const payoffShortfall = (installments: readonly InstallmentPosition[], quote: PayoffQuote, amount: ExactDecimal, currency: string): Allocation[] => {
  const lines = new Map(quote.lines.map((line) => [line.installmentId, line]))
  const accrued = (installment: InstallmentPosition): Outstanding => {
    const line = lines.get(installment.installmentId)
    return line === undefined ? { principal: ZERO, interest: ZERO, total: ZERO } : { principal: line.principal, interest: line.interest, total: plus(line.principal, line.interest) }
  }
  return allocatePayment(installments, ZERO_INSTALLMENT, amount, currency, accrued).allocations
}

import { exact, isZero, larger, minus, plus, smaller, toMoneyText, ZERO, type ExactDecimal } from './exactDecimal.js'
import { dayOf, interestOver } from './amortization.js'
import { allocatePayment, chargeableInterest, type Allocation, type InstallmentPosition, type InterestWaiver, type Outstanding } from './installments.js'
import { ZERO_INSTALLMENT, type RateType } from './lending.js'
import { money, roundToMinorUnit } from './money.js'

/** What paying a credit off on one day takes from one installment. */
export interface PayoffLine {
  installmentId: string
  number: number
  dueDate: string
  principal: ExactDecimal
  /** Interest accrued by the day and not paid yet. */
  interest: ExactDecimal
  /** Interest paid ahead of its accrual: the payoff credits it to principal (the day's total is that much less). */
  credited: ExactDecimal
  /** Scheduled interest not accrued by the day: forgiven by the payoff (whether it was unpaid, or paid and credited). */
  waived: ExactDecimal
}

export interface PayoffQuote {
  /** The value day (YYYY-MM-DD) the quote is for. */
  day: string
  principal: ExactDecimal
  interest: ExactDecimal
  /** Interest paid ahead of its accrual, credited: `total` is principal + interest − credited, negative when the debtor is owed money back. */
  credited: ExactDecimal
  total: ExactDecimal
  waived: ExactDecimal
  /** The installments owing anything or holding interest paid ahead, oldest first. */
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
 * consumers). Interest already paid on a period counts against its accrual,
 * and interest paid ahead beyond it (an installment paid before its period
 * ran) is credited to principal, so what the debtor pays in all is the same
 * whichever of their orders was applied first. The total is negative when
 * the credit is worth more than what is owed (every principal but a little
 * paid ahead): a `zero` order of 0 then settles the credit and the rest is
 * owed back to the debtor (unapplied).
 */
export const payoffQuote = (
  installments: readonly InstallmentPosition[], disbursedDay: string, day: string, currency: string,
  /** What the first installment's period has accrued by a day inside it, when its interest is that period's (compounded at an effective rate). */
  firstAccrual?: (day: string) => ExactDecimal,
): PayoffQuote => {
  const lines: PayoffLine[] = []
  let principal = ZERO
  let interest = ZERO
  let credited = ZERO
  let periodStart = disbursedDay
  for (const installment of [...installments].sort((a, b) => a.number - b.number)) {
    const start = periodStart
    periodStart = installment.dueDate
    const chargeable = chargeableInterest(installment)
    const accrued = installment.number === 1 && firstAccrual !== undefined && day > start && day < installment.dueDate
      ? smaller(firstAccrual(day), exact(installment.interest))
      : accruedInterest(installment.interest, start, installment.dueDate, day, currency)
    const earned = smaller(accrued, chargeable)
    const paidInterest = exact(installment.paidInterest)
    const owedPrincipal = minus(exact(installment.principal), exact(installment.paidPrincipal))
    const interestDue = larger(minus(earned, paidInterest), ZERO)
    const credit = larger(minus(paidInterest, earned), ZERO)
    const waived = minus(chargeable, earned)
    if (isZero(owedPrincipal) && isZero(interestDue) && isZero(credit) && isZero(waived)) continue
    lines.push({ installmentId: installment.installmentId, number: installment.number, dueDate: installment.dueDate, principal: owedPrincipal, interest: interestDue, credited: credit, waived })
    principal = plus(principal, owedPrincipal)
    interest = plus(interest, interestDue)
    credited = plus(credited, credit)
  }
  const waived = lines.reduce((sum, line) => plus(sum, line.waived), ZERO)
  return { day, principal, interest, credited, total: minus(plus(principal, interest), credited), waived, lines }
}

/**
 * The payments and waivers that settle a quote: each line's interest and
 * principal paid in full, its unaccrued interest waived. Interest credited
 * is an allocation's negative interest (taken back from the installment's
 * paid interest), so the allocations still add up to the money received.
 */
export const settleQuote = (quote: PayoffQuote, currency: string): { allocations: Allocation[]; waivers: InterestWaiver[] } => ({
  allocations: quote.lines
    .filter((line) => !isZero(line.principal) || !isZero(line.interest) || !isZero(line.credited))
    .map((line) => {
      const interest = minus(line.interest, line.credited)
      return {
        installmentId: line.installmentId, number: line.number, principal: toMoneyText(line.principal, currency), interest: toMoneyText(interest, currency),
        amount: toMoneyText(plus(line.principal, interest), currency), paidInFull: true,
      }
    }),
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

/** What a payoff needs of a credit. */
export interface PayoffTerms {
  installments: readonly InstallmentPosition[]
  currency: string
  principal: string
  rate: string
  rateType: RateType
  /** Set when the first installment's interest is its period's (credits requested from November 2026 on). */
  firstPeriod: { months: number; days: number } | null
}

/** A credit's payoff, disbursed at `disbursedAt`, for an order with this value date made at `orderedAt` (the quote's `day` is the day weighed). */
export const payoffOf = (credit: PayoffTerms, disbursedAt: string, valueDate: string, orderedAt: string): PayoffQuote => {
  const disbursedDay = dayOf(disbursedAt)
  return payoffQuote(credit.installments, disbursedDay, payoffDay(credit.installments, disbursedAt, valueDate, orderedAt), credit.currency, compoundedFirstPeriod(credit, disbursedDay))
}

/**
 * A first period longer than a month at an effective rate was charged
 * compounded ((1 + i)^T − 1 over its T months): by a day inside it, it has
 * accrued the same rule over the share of T its days have run, so a payoff
 * midway owes what that time costs at the contract's rate, not a straight
 * share of the whole (which would charge more). Shorter periods, and nominal
 * rates (simple interest), accrue in a straight line like every other period.
 */
const compoundedFirstPeriod = (credit: PayoffTerms, disbursedDay: string): ((day: string) => ExactDecimal) | undefined => {
  const period = credit.firstPeriod
  const first = credit.installments.find((i) => i.number === 1)
  if (period === null || first === undefined || credit.rateType !== 'FIXED' || period.months * 30 + period.days <= 30) return undefined
  const thirtieths = period.months * 30 + period.days
  const length = daysBetween(disbursedDay, first.dueDate)
  return (day) => {
    const run = money(thirtieths).mul(daysBetween(disbursedDay, day)).div(length)
    return exact(interestOver(credit.principal, credit.rate, 'FIXED', run, credit.currency).toFixed())
  }
}

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

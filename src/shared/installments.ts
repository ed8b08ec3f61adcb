import { compare, exact, isZero, minus, plus, smaller, toMoneyText, ZERO, type ExactDecimal } from './exactDecimal.js'
import { daysPastDue } from './amortization.js'
import { ZERO_INSTALLMENT, type CreditStateName } from './lending.js'

/** An installment as scheduled; money as decimal strings in the credit's currency. */
export interface ScheduledInstallmentRow {
  installmentId: string
  number: number
  /** YYYY-MM-DD */
  dueDate: string
  principal: string
  interest: string
  amount: string
}

/** An installment and what has been paid on it. */
export interface InstallmentPosition extends ScheduledInstallmentRow {
  paidPrincipal: string
  paidInterest: string
  /** When the last of it was paid; null while anything is owed. */
  paidAt: string | null
  /** Interest a payoff waived (not yet accrued when the credit was paid off); absent when none was. */
  waivedInterest?: string
}

/**
 * An installment as a new object: its schedule fields, with the payment
 * fields (and due date) given. Written out rather than spread: a rebuild
 * makes hundreds of thousands, and spreading a parsed object is the slow path.
 */
export const installmentPosition = (
  row: ScheduledInstallmentRow, paidPrincipal: string, paidInterest: string, paidAt: string | null, dueDate: string = row.dueDate,
  waivedInterest?: string,
): InstallmentPosition => waivedInterest === undefined
  ? {
    installmentId: row.installmentId, number: row.number, dueDate, principal: row.principal, interest: row.interest, amount: row.amount,
    paidPrincipal, paidInterest, paidAt,
  }
  : {
    installmentId: row.installmentId, number: row.number, dueDate, principal: row.principal, interest: row.interest, amount: row.amount,
    paidPrincipal, paidInterest, paidAt, waivedInterest,
  }

/** The installment with nothing paid or waived on it (its schedule and due date only). */
export const unpaidPosition = (row: ScheduledInstallmentRow): InstallmentPosition => installmentPosition(row, '0', '0', null)

/** Interest still chargeable on the installment: its schedule's, less what a payoff waived. */
export const chargeableInterest = (installment: InstallmentPosition): ExactDecimal =>
  installment.waivedInterest === undefined ? exact(installment.interest) : minus(exact(installment.interest), exact(installment.waivedInterest))

/** Exact amounts (sums and differences of the schedule's decimal strings, which need no rounding). */
export interface Outstanding {
  principal: ExactDecimal
  interest: ExactDecimal
  total: ExactDecimal
}

export const outstandingOf = (installment: InstallmentPosition): Outstanding => {
  const principal = minus(exact(installment.principal), exact(installment.paidPrincipal))
  const interest = minus(chargeableInterest(installment), exact(installment.paidInterest))
  return { principal, interest, total: plus(principal, interest) }
}

export const isPaid = (installment: InstallmentPosition): boolean => isZero(outstandingOf(installment).total)

export const totalOutstanding = (installments: readonly InstallmentPosition[]): Outstanding =>
  installments.reduce<Outstanding>((sum, installment) => {
    const o = outstandingOf(installment)
    return { principal: plus(sum.principal, o.principal), interest: plus(sum.interest, o.interest), total: plus(sum.total, o.total) }
  }, { principal: ZERO, interest: ZERO, total: ZERO })

/** An installment's money as a credit view and the webhook context show it, in the credit's currency. */
export const installmentAmounts = (installment: InstallmentPosition, currency: string) => ({
  paidPrincipal: toMoneyText(exact(installment.paidPrincipal), currency),
  paidInterest: toMoneyText(exact(installment.paidInterest), currency),
  paidAmount: toMoneyText(plus(exact(installment.paidPrincipal), exact(installment.paidInterest)), currency),
  outstanding: toMoneyText(outstandingOf(installment).total, currency),
})

/** Arrears count only on a disbursed credit, for what is still owed. */
export const installmentArrearsDays = (creditStatus: CreditStateName | 'none', installment: InstallmentPosition, today: string): number =>
  creditStatus === 'Desembolsado' && !isPaid(installment) ? daysPastDue(installment.dueDate, today) : 0

/** Whether an order may target `target` on this credit: one of its installments, or `zero` (paying the credit off). */
export const isOrderTarget = (installments: readonly InstallmentPosition[], target: string): boolean =>
  target === ZERO_INSTALLMENT || installments.some((i) => i.installmentId === target)

/**
 * What is still owed on what an order targets: one installment's outstanding
 * amount, or the whole credit's for `zero` (whether it owes anything; what a
 * `zero` order pays is the payoff, shared/payoff.ts).
 */
export const owedFor = (installments: readonly InstallmentPosition[], target: string): ExactDecimal | null => {
  if (target === ZERO_INSTALLMENT) return totalOutstanding(installments).total
  const installment = installments.find((i) => i.installmentId === target)
  return installment === undefined ? null : outstandingOf(installment).total
}

export interface Allocation {
  installmentId: string
  /** Installment number. */
  number: number
  principal: string
  /** Negative only in a payoff: interest paid ahead of its accrual, taken back and credited to principal. */
  interest: string
  amount: string
  /** The installment has nothing left to pay after this allocation. */
  paidInFull: boolean
}

/**
 * Splits a payment over what is owed: its installment first, then the other
 * unpaid installments oldest first (for `zero`, all of them oldest first);
 * within an installment interest is paid before principal. Money beyond the
 * installment it was ordered for pays the next ones rather than waiting while
 * they fall overdue (two orders for one installment: the second pays the
 * installment after it). What exceeds the whole debt is returned as unapplied.
 */
export const allocatePayment = (
  installments: readonly InstallmentPosition[],
  target: string,
  amount: ExactDecimal,
  currency: string,
  /** What the payment may pay of each installment (a payoff's shortfall: its accrued part only); an installment is paid in full when it owes nothing else. */
  payable: (installment: InstallmentPosition) => Outstanding = outstandingOf,
): { allocations: Allocation[]; applied: ExactDecimal; unapplied: ExactDecimal } => {
  const oldestFirst = [...installments].sort((a, b) => a.number - b.number)
  const candidates = target === ZERO_INSTALLMENT
    ? oldestFirst
    : [...oldestFirst.filter((i) => i.installmentId === target), ...oldestFirst.filter((i) => i.installmentId !== target)]
  const allocations: Allocation[] = []
  let left = amount
  for (const installment of candidates) {
    if (isZero(left)) break
    const owed = payable(installment)
    if (isZero(owed.total)) continue
    const interest = smaller(left, owed.interest)
    const rest = minus(left, interest)
    const principal = smaller(rest, owed.principal)
    const paid = plus(interest, principal)
    left = minus(left, paid)
    allocations.push({
      installmentId: installment.installmentId, number: installment.number,
      principal: toMoneyText(principal, currency), interest: toMoneyText(interest, currency), amount: toMoneyText(paid, currency),
      paidInFull: compare(paid, outstandingOf(installment).total) === 0,
    })
  }
  return { allocations, applied: minus(amount, left), unapplied: left }
}

/** Interest a payoff waived on one installment: scheduled and not yet accrued on the payoff's day weighed (unpaid, or paid ahead and credited to principal). */
export interface InterestWaiver {
  installmentId: string
  number: number
  interest: string
}

/**
 * Folds allocations (and a payoff's waivers) into installment positions (new
 * objects; the inputs are untouched). An installment a waiver leaves owing
 * nothing is paid at `at`, like one an allocation pays in full.
 */
export const applyAllocations = (
  installments: readonly InstallmentPosition[],
  allocations: readonly Allocation[],
  currency: string,
  at: string,
  waivers: readonly InterestWaiver[] = [],
): InstallmentPosition[] =>
  installments.map((installment) => {
    const allocation = allocations.find((a) => a.installmentId === installment.installmentId)
    const waiver = waivers.length === 0 ? undefined : waivers.find((w) => w.installmentId === installment.installmentId)
    if (allocation === undefined && waiver === undefined) return installment
    const waived = waiver === undefined
      ? installment.waivedInterest
      : toMoneyText(plus(exact(installment.waivedInterest ?? '0'), exact(waiver.interest)), currency)
    const next = installmentPosition(
      installment,
      allocation === undefined ? installment.paidPrincipal : toMoneyText(plus(exact(installment.paidPrincipal), exact(allocation.principal)), currency),
      allocation === undefined ? installment.paidInterest : toMoneyText(plus(exact(installment.paidInterest), exact(allocation.interest)), currency),
      // A payoff's credit of interest paid ahead reaches installments paid before: they stay paid when they were.
      allocation?.paidInFull === true ? installment.paidAt ?? at : installment.paidAt,
      installment.dueDate,
      waived,
    )
    return waiver !== undefined && next.paidAt === null && isPaid(next) ? { ...next, paidAt: at } : next
  })

import type { CreditDoc, InstallmentDoc } from '../../projections/credits.js'
import type { CreditMovementDoc } from '../../projections/creditMovements.js'
import type { Queries } from '../../projections/queries.js'
import type { Filter } from '../../projections/readStore.js'
import { daysPastDue } from '../../shared/amortization.js'
import { plus, toMoneyText } from '../../shared/exactDecimal.js'
import { applyAllocations, isPaid, outstandingOf, totalOutstanding, unpaidPosition, type InstallmentPosition, type Outstanding } from '../../shared/installments.js'
import type { CreditStateName } from '../../shared/lending.js'
import { money, toMoneyString } from '../../shared/money.js'
import { closingDay } from './period.js'

/** The state a credit was in at an instant, from the times its read model keeps; null before it was requested. */
export const stateAt = (credit: CreditDoc, instant: string): CreditStateName | null => {
  const before = (time: string | null) => time !== null && time < instant
  if (!before(credit.requestedAt)) return null
  if (before(credit.paidAt)) return 'Pagado'
  if (before(credit.disbursedAt)) return 'Desembolsado'
  if (before(credit.rejectedAt)) return 'Rechazado'
  if (before(credit.cancelledAt)) return 'Anulado'
  if (before(credit.approvedAt)) return 'Aprobado'
  return 'Solicitado'
}

/**
 * Portfolio (cartera) of a credit: consumer credit to natural persons,
 * commercial credit to companies. The service has no portfolio field; the
 * debtor's type decides, as a Colombian lender classifies its book.
 */
export type Portfolio = 'consumo' | 'comercial'
export const portfolioOf = (credit: CreditDoc): Portfolio => (credit.debtor?.type === 'legal' ? 'comercial' : 'consumo')

/** Upper bound (days past due) of categories A–D per portfolio, in the style of the Superintendencia Financiera's arrears categories. */
const riskBounds: Record<Portfolio, readonly [number, number, number, number]> = {
  consumo: [30, 60, 90, 180],
  comercial: [30, 90, 180, 360],
}

export type RiskCategory = 'A' | 'B' | 'C' | 'D' | 'E'
export const riskCategory = (portfolio: Portfolio, days: number): RiskCategory => {
  const [a, b, c, d] = riskBounds[portfolio]
  if (days <= a) return 'A'
  if (days <= b) return 'B'
  if (days <= c) return 'C'
  return days <= d ? 'D' : 'E'
}

type Amounts = { principal: string; interest: string; total: string }

/** What a credit owed and had paid at an instant. */
export interface CreditPosition {
  instant: string
  /** The UTC day arrears are counted to: the last day the instant (an exclusive bound) covers. */
  day: string
  state: CreditStateName | null
  installments: InstallmentPosition[]
  outstanding: Amounts
  /** Of installments due before `day` and not paid by the instant. */
  overdue: Amounts
  /** What the debtor owed at the instant: all the principal, plus interest already due (future interest is not owed yet). */
  balance: string
  installmentsPaid: number
  installmentsOverdue: number
  /** Days the oldest unpaid installment is past due (Desembolsado credits; else 0). */
  daysPastDue: number
  nextDueDate: string | null
  lastPaymentAt: string | null
  principalDisbursed: string
  principalCollected: string
  interestCollected: string
  collectionCosts: string
  unapplied: string
}

const amounts = (sum: Outstanding, currency: string): Amounts => ({
  principal: toMoneyText(sum.principal, currency), interest: toMoneyText(sum.interest, currency), total: toMoneyText(sum.total, currency),
})

/**
 * A credit as it stood at an instant: its schedule (final due dates, from the
 * read model) with the payments applied before the instant folded in, the
 * same fold the credit aggregate makes. `movements` are the credit's, oldest
 * first; later ones are ignored.
 */
export const positionAt = (credit: CreditDoc, movements: readonly CreditMovementDoc[], instant: string): CreditPosition => {
  const { currency } = credit
  // The instant is an exclusive bound: its position is that of the millisecond before, so arrears count to the day that millisecond is in.
  const day = closingDay(instant)
  const earlier = movements.filter((m) => m.at < instant)
  let installments: InstallmentPosition[] = credit.installments.map(unpaidPosition)
  const sum = (kind: CreditMovementDoc['kind'], field: 'principal' | 'interest' | 'collectionCosts' | 'unapplied') =>
    toMoneyString(earlier.filter((m) => m.kind === kind).reduce((total, m) => total.plus(m[field]), money(0)), currency)
  for (const movement of earlier) {
    if (movement.kind === 'payment') installments = applyAllocations(installments, movement.allocations, currency, movement.at, movement.waivers)
  }
  const state = stateAt(credit, instant)
  const unpaid = installments.filter((i) => !isPaid(i))
  const late = unpaid.filter((i) => i.dueDate < day)
  const oldest = unpaid[0]
  const payments = earlier.filter((m) => m.kind === 'payment')
  const outstanding = totalOutstanding(installments)
  const overdue = totalOutstanding(late)
  return {
    instant, day, state, installments,
    outstanding: amounts(outstanding, currency),
    overdue: amounts(overdue, currency),
    balance: toMoneyText(plus(outstanding.principal, overdue.interest), currency),
    installmentsPaid: installments.length - unpaid.length,
    installmentsOverdue: late.length,
    daysPastDue: state === 'Desembolsado' && oldest !== undefined ? daysPastDue(oldest.dueDate, day) : 0,
    nextDueDate: oldest?.dueDate ?? null,
    lastPaymentAt: payments[payments.length - 1]?.at ?? null,
    principalDisbursed: sum('disbursement', 'principal'),
    principalCollected: sum('payment', 'principal'),
    interestCollected: sum('payment', 'interest'),
    collectionCosts: sum('payment', 'collectionCosts'),
    unapplied: sum('payment', 'unapplied'),
  }
}

/** A credit's position at an instant, reading its movements (a bounded, indexed query per credit). */
export const loadPositionAt = async (queries: Queries, credit: CreditDoc, instant: string): Promise<CreditPosition> =>
  positionAt(credit, await queries.creditMovements.ofCredit(credit._id, instant), instant)

/** Outstanding principal and interest of one installment position. */
export const installmentOutstanding = (installment: InstallmentPosition, currency: string): Amounts => amounts(outstandingOf(installment), currency)

export interface PositionedCredit {
  credit: CreditDoc
  position: CreditPosition
}

/** Credits of the organization matching the filter, each with its position at the instant (streamed). */
export async function* positionedCredits(queries: Queries, organizationId: string, filter: Filter, instant: string): AsyncIterable<PositionedCredit> {
  for await (const credit of queries.credits.stream(organizationId, filter)) yield { credit, position: await loadPositionAt(queries, credit, instant) }
}

/** Days an installment document is overdue on the day, while anything is owed on a Desembolsado credit; else 0. */
export const installmentArrears = (installment: InstallmentDoc, day: string): number =>
  installment.creditState === 'Desembolsado' && installment.status !== 'paid' && installment.dueDate < day ? daysPastDue(installment.dueDate, day) : 0

/** Days the oldest unpaid installment of a credit document is overdue on the day (Desembolsado credits; else 0). */
export const creditArrears = (credit: CreditDoc, day: string): number => {
  const oldest = credit.installments.find((i) => !isPaid(i))
  return credit.status === 'Desembolsado' && oldest !== undefined ? daysPastDue(oldest.dueDate, day) : 0
}

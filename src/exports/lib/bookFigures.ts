import { money, toMoneyString } from '../../shared/money.js'
import type { DebtorBook } from './debtorBooks.js'
import { portfolioOf, riskCategory, type CreditPosition, type RiskCategory } from './positions.js'

/** A debtor's credits of one currency, added up at the period's end. */
export interface BookFigures {
  principalDisbursed: string
  outstandingPrincipal: string
  balance: string
  overdueTotal: string
  maxDaysPastDue: number
  worstRiskCategory: RiskCategory
  nextDueDate: string | null
  lastPaymentAt: string | null
  /** Collected within [after, before). */
  interestCollected: string
  collectionCosts: string
}

const latest = (values: Array<string | null>, pick: (a: string, b: string) => boolean): string | null =>
  values.reduce<string | null>((best, v) => (v !== null && (best === null || pick(v, best)) ? v : best), null)

export const bookFigures = (book: DebtorBook, after: string | null): BookFigures => {
  const { currency } = book
  const add = (value: (position: CreditPosition) => string) =>
    toMoneyString(book.credits.reduce((sum, c) => sum.plus(value(c.position)), money(0)), currency)
  const inPeriod = book.credits.flatMap((c) => c.movements).filter((m) => m.kind === 'payment' && (after === null || m.at >= after))
  const collected = (field: 'interest' | 'collectionCosts') => toMoneyString(inPeriod.reduce((sum, m) => sum.plus(m[field]), money(0)), currency)
  const categories = book.credits.map((c) => riskCategory(portfolioOf(c.credit), c.position.daysPastDue))
  return {
    principalDisbursed: toMoneyString(book.credits.reduce((sum, c) => sum.plus(c.credit.principal), money(0)), currency),
    outstandingPrincipal: add((p) => p.outstanding.principal),
    balance: add((p) => p.balance),
    overdueTotal: add((p) => p.overdue.total),
    maxDaysPastDue: Math.max(0, ...book.credits.map((c) => c.position.daysPastDue)),
    worstRiskCategory: categories.reduce<RiskCategory>((worst, c) => (c > worst ? c : worst), 'A'),
    nextDueDate: latest(book.credits.map((c) => c.position.nextDueDate), (a, b) => a < b),
    lastPaymentAt: latest(book.credits.map((c) => c.position.lastPaymentAt), (a, b) => a > b),
    interestCollected: collected('interest'),
    collectionCosts: collected('collectionCosts'),
  }
}

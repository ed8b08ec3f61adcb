import type { CreditMovementDoc } from '../../projections/creditMovements.js'
import type { Column } from '../csv.js'
import { integer, money as moneyColumn, text, timestamp } from './columns.js'
import { money, toMoneyString } from '../../shared/money.js'

export interface Account {
  code: string
  name: string
}

/**
 * The accounts ledger format A posts to: codes in the structure of
 * Colombia's chart of accounts (PUC: 11 cash and banks, 14 loan portfolio,
 * 25 payables, 41 operating income). They are the service's defaults; an
 * accounting system maps them to its own chart on import.
 */
export const ledgerAccounts = {
  bank: { code: '1110', name: 'Bancos' },
  portfolio: { code: '1405', name: 'Cartera de créditos - capital' },
  interestIncome: { code: '4102', name: 'Intereses de cartera de créditos' },
  collectionIncome: { code: '4195', name: 'Gastos de cobranza recuperados' },
  debtorBalances: { code: '2595', name: 'Saldos a favor de deudores' },
} as const satisfies Record<string, Account>

export interface JournalLine {
  account: Account
  debit: string
  credit: string
}

/**
 * The double entry of a movement; lines of zero are left out.
 * Disbursement: the portfolio grows, the bank pays out.
 * Payment: the bank receives the order's amount plus collection costs; the
 * portfolio falls by the principal repaid; interest and collection costs are
 * income when collected (cash basis: no event marks an accrual); what exceeded
 * the debt is owed back to the debtor. A payoff that credits interest paid
 * ahead of its accrual to principal takes that income back: its interest is
 * net, a debit of interest income when the credit exceeds what it collected.
 */
export const journalLines = (movement: CreditMovementDoc): JournalLine[] => {
  const { currency } = movement
  const zero = toMoneyString(0, currency)
  const debit = (account: Account, amount: string): JournalLine => ({ account, debit: amount, credit: zero })
  const credit = (account: Account, amount: string): JournalLine => ({ account, debit: zero, credit: amount })
  const lines = movement.kind === 'disbursement'
    ? [debit(ledgerAccounts.portfolio, movement.principal), credit(ledgerAccounts.bank, movement.principal)]
    : [
      debit(ledgerAccounts.bank, toMoneyString(money(movement.amount).plus(movement.collectionCosts), currency)),
      credit(ledgerAccounts.portfolio, movement.principal),
      money(movement.interest).isNegative()
        ? debit(ledgerAccounts.interestIncome, toMoneyString(money(movement.interest).negated(), currency))
        : credit(ledgerAccounts.interestIncome, movement.interest),
      credit(ledgerAccounts.collectionIncome, movement.collectionCosts),
      credit(ledgerAccounts.debtorBalances, movement.unapplied),
    ]
  return lines.filter((line) => !money(line.debit).isZero() || !money(line.credit).isZero())
}

/** A subledger line (per credit, per debtor): principal at both ends of the period and what moved in between. */
export interface LedgerTotals {
  currency: string
  openingBalance: string
  disbursed: string
  principalCollected: string
  interestCollected: string
  collectionCosts: string
  unapplied: string
  closingBalance: string
  movements: number
  lastMovementAt: string | null
}

/** Totals of movements (any order) of one currency over [after, before); earlier movements make the opening balance. */
export const ledgerTotals = (movements: Iterable<CreditMovementDoc>, currency: string, after: string | null, before: string): LedgerTotals => {
  let opening = money(0)
  let disbursed = money(0)
  let principal = money(0)
  let interest = money(0)
  let costs = money(0)
  let unapplied = money(0)
  let count = 0
  let last: string | null = null
  for (const m of movements) {
    if (m.at >= before) continue
    const signed = m.kind === 'disbursement' ? money(m.principal) : money(m.principal).negated()
    if (after !== null && m.at < after) {
      opening = opening.plus(signed)
      continue
    }
    count += 1
    if (last === null || m.at > last) last = m.at
    if (m.kind === 'disbursement') disbursed = disbursed.plus(m.principal)
    else {
      principal = principal.plus(m.principal)
      interest = interest.plus(m.interest)
      costs = costs.plus(m.collectionCosts)
      unapplied = unapplied.plus(m.unapplied)
    }
  }
  const text = (value: ReturnType<typeof money>) => toMoneyString(value, currency)
  return {
    currency, openingBalance: text(opening), disbursed: text(disbursed), principalCollected: text(principal), interestCollected: text(interest),
    collectionCosts: text(costs), unapplied: text(unapplied), closingBalance: text(opening.plus(disbursed).minus(principal)), movements: count,
    lastMovementAt: last,
  }
}

/** The subledger figures, as both ledger-a-individual and ledger-a-clients write them. */
export const ledgerTotalsColumns: ReadonlyArray<Column<LedgerTotals>> = [
  text<LedgerTotals>('currency', 'ISO 4217 code', (t) => t.currency),
  moneyColumn<LedgerTotals>('opening_balance', 'principal owed when the period starts', (t) => t.openingBalance),
  moneyColumn<LedgerTotals>('disbursed', 'principal disbursed in the period (debit 1405)', (t) => t.disbursed),
  moneyColumn<LedgerTotals>('principal_collected', 'principal repaid in the period (credit 1405)', (t) => t.principalCollected),
  moneyColumn<LedgerTotals>('interest_collected', 'interest collected in the period (credit 4102), net of interest a payoff credited to principal (negative when that is more)', (t) => t.interestCollected),
  moneyColumn<LedgerTotals>('collection_costs', 'collection costs collected in the period (credit 4195)', (t) => t.collectionCosts),
  moneyColumn<LedgerTotals>('unapplied', 'received beyond what was owed in the period (credit 2595)', (t) => t.unapplied),
  moneyColumn<LedgerTotals>('closing_balance', 'principal owed when the period ends: opening + disbursed − principal collected', (t) => t.closingBalance),
  integer<LedgerTotals>('movements', 'disbursements and payments in the period', (t) => t.movements),
  timestamp<LedgerTotals>('last_movement_at', 'the latest of them', (t) => t.lastMovementAt),
]

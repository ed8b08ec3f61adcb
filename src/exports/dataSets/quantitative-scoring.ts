import type { CreditDoc } from '../../projections/credits.js'
import { ageOn } from '../../shared/age.js'
import { money as decimalOf } from '../../shared/money.js'
import { defineDataSet } from '../dataSets.js'
import { creditColumn as c } from '../lib/creditColumns.js'
import { boolean, decimal, integer, money, text, timestamp } from '../lib/columns.js'
import { instantsIn, periodOf } from '../lib/period.js'

const incomeOf = (credit: CreditDoc): string | null => (credit.debtor?.natural ?? credit.debtor?.legal)?.monthlyIncome ?? null

/** Installment over monthly income (relación cuota/ingreso), the first capacity-to-pay test of a Colombian credit desk. */
const installmentToIncome = (credit: CreditDoc): string | null => {
  const income = incomeOf(credit)
  if (income === null || decimalOf(income).isZero()) return null
  return decimalOf(credit.installmentAmount).dividedBy(income).toFixed(4)
}

const yearsAt = (day: string | undefined, credit: CreditDoc): number | null => (day === undefined ? null : ageOn(day, new Date(credit.requestedAt)))

/**
 * Every credit requested in the period is a scoring case: the quantitative
 * variables a credit desk weighs (income, installment-to-income, age or years
 * in business, employment), then the automatic score and decision when one was
 * recorded (`CreditScored`; empty while a credit has none) and how the credit
 * was decided. Debtor variables are the profile's current values.
 */
export const quantitativeScoringDataSet = defineDataSet({
  type: 'quantitative-scoring',
  description: 'scoring cases: credits requested in the period, their quantitative variables, score and decision',
  columns: [
    c.id, c.debtorId, c.debtorType, c.lineId, c.requestedAt, c.currency, c.principal, c.term, c.installmentAmount,
    money<CreditDoc>('monthly_income', 'the debtor\'s monthly income as recorded on the profile', incomeOf),
    decimal(4)<CreditDoc>('installment_to_income', 'installment amount / monthly income (4 decimals)', installmentToIncome),
    integer<CreditDoc>('age_years', 'natural persons: age when the credit was requested', (d) => yearsAt(d.debtor?.natural?.birthDate, d)),
    integer<CreditDoc>('years_in_business', 'companies: years since incorporation when the credit was requested',
      (d) => yearsAt(d.debtor?.legal?.incorporationDate, d)),
    text<CreditDoc>('employment_type', 'natural persons: formal, informal, independent or unemployed', (d) => d.debtor?.natural?.employmentType),
    text<CreditDoc>('economic_activity', 'companies: CIIU code', (d) => d.debtor?.legal?.economicActivity),
    boolean<CreditDoc>('scored', 'an automatic score was recorded', (d) => d.score !== null),
    text<CreditDoc>('scoring_model_id', 'the scoring model', (d) => d.score?.scoringModelId),
    money<CreditDoc>('score', 'the score (decimal)', (d) => d.score?.score),
    text<CreditDoc>('decision', 'the model\'s decision: approve, reject or review', (d) => d.score?.decision),
    text<CreditDoc>('reasons', 'the model\'s reasons, separated by " | "', (d) => d.score?.reasons.join(' | ')),
    timestamp<CreditDoc>('scored_at', 'when it was scored', (d) => d.score?.scoredAt),
    c.state,
    timestamp<CreditDoc>('decided_at', 'when the credit was approved or rejected', (d) => d.approvedAt ?? d.rejectedAt),
  ],
  rows: (body, context) => context.queries.credits.stream(context.organizationId, instantsIn('requestedAt', periodOf(body, context.requestedAt))),
  count: (body, context) => context.queries.credits.count(context.organizationId, instantsIn('requestedAt', periodOf(body, context.requestedAt))),
})

import type { Decimal } from 'decimal.js'
import type { ScoringModelDefinition, ScoringThresholds, ScoringVariable } from '../events/scoringModel.js'
import { money } from '../shared/money.js'
import { evaluateCondition } from './scoringConditions.js'
import { isScoringField, type ScoringFieldValues } from './scoringFields.js'

export type ScoringDecision = 'approve' | 'review' | 'reject'

export interface VariableOutcome {
  field: string
  type: ScoringVariable['type']
  weight: number
  /** The debtor's value, or null when the debtor lacks the field. */
  value: string | number | boolean | null
  matched: boolean
  /** The range or category that matched. */
  matchedBy: { min: number; max: number } | { value: string } | null
  /** Score of the matched range or category; 0 when nothing matched. */
  score: number
  /** weight × score */
  contribution: number
  reason: string | null
}

export interface AdjustmentOutcome {
  condition: string
  description: string
  amount: number
  applied: boolean
  /** Why the condition could not be evaluated (e.g. a missing field); null when it was. */
  error: string | null
}

export interface ScoringResult {
  score: number
  decision: ScoringDecision
  /** Σ weight × score over the variables. */
  baseScore: number
  totalPenalty: number
  totalBonus: number
  thresholds: ScoringThresholds
  variables: VariableOutcome[]
  penalties: AdjustmentOutcome[]
  bonuses: AdjustmentOutcome[]
}

const scoreVariable = (variable: ScoringVariable, fields: ScoringFieldValues): VariableOutcome & { exact: Decimal } => {
  const raw = isScoringField(variable.field) ? fields[variable.field] : undefined
  const base = { field: variable.field, type: variable.type, weight: variable.weight, value: raw ?? null }
  const miss = (reason: string) => ({ ...base, matched: false, matchedBy: null, score: 0, contribution: 0, reason, exact: money(0) })
  const hit = (score: number, matchedBy: VariableOutcome['matchedBy']) => {
    const exact = money(variable.weight).times(score)
    return { ...base, matched: true, matchedBy, score, contribution: exact.toNumber(), reason: null, exact }
  }
  if (raw === undefined) return miss('the debtor has no value for this field')
  if (variable.type === 'numeric') {
    if (typeof raw === 'boolean') return miss('the value is not a number')
    const value = money(raw)
    const range = variable.ranges.find((r) => value.gte(r.min) && value.lte(r.max))
    return range === undefined ? miss('the value is in no range') : hit(range.score, { min: range.min, max: range.max })
  }
  const category = variable.categories.find((c) => c.value === String(raw))
  return category === undefined ? miss('the value is in no category') : hit(category.score, { value: category.value })
}

/** approve from `approve` up, review from `review` up, reject below `review`. */
export const decide = (score: Decimal, thresholds: ScoringThresholds): ScoringDecision => {
  if (score.gte(thresholds.approve)) return 'approve'
  if (score.gte(thresholds.review)) return 'review'
  return 'reject'
}

/**
 * Scores a debtor: Σ weight × (score of the matching range or category), minus
 * every penalty whose condition holds, plus every bonus whose condition holds.
 * The arithmetic is decimal, so 0.3 × 80 is exactly 24.
 */
export const evaluateScoringModel = (definition: ScoringModelDefinition, fields: ScoringFieldValues): ScoringResult => {
  const variables = definition.variables.map((v) => scoreVariable(v, fields))
  const adjust = (condition: string, description: string, amount: number): AdjustmentOutcome => {
    const outcome = evaluateCondition(condition, fields)
    return { condition, description, amount, applied: outcome.holds, error: outcome.error }
  }
  const penalties = definition.penalties.map((p) => adjust(p.condition, p.description, p.penalty))
  const bonuses = definition.bonuses.map((b) => adjust(b.condition, b.description, b.bonus))
  const sumApplied = (items: AdjustmentOutcome[]) => items.reduce((sum, item) => (item.applied ? sum.plus(item.amount) : sum), money(0))
  const base = variables.reduce((sum, v) => sum.plus(v.exact), money(0))
  const totalPenalty = sumApplied(penalties)
  const totalBonus = sumApplied(bonuses)
  const score = base.minus(totalPenalty).plus(totalBonus)
  return {
    score: score.toNumber(),
    decision: decide(score, definition.thresholds),
    baseScore: base.toNumber(),
    totalPenalty: totalPenalty.toNumber(),
    totalBonus: totalBonus.toNumber(),
    thresholds: definition.thresholds,
    variables: variables.map(({ exact: _exact, ...outcome }) => outcome),
    penalties,
    bonuses,
  }
}

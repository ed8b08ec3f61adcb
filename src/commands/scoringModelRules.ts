import type { ScoringModelDefinition, ScoringVariable } from '../events/scoringModel.js'
import { invalidFields, type FieldError } from '../shared/errors.js'
import { money } from '../shared/money.js'
import { checkCondition } from './scoringConditions.js'
import { isScoringField, scoringFieldCatalogue, type ScoringFieldKind } from './scoringFields.js'

/** The categories a scoring model may have: the kinds of credit it scores. */
export const scoringModelCategories = ['consumer', 'microcredit', 'payroll', 'commercial', 'mortgage', 'vehicle', 'education', 'other'] as const

/** Which field kinds each variable type reads. */
const fieldKindsOf: Record<ScoringVariable['type'], readonly ScoringFieldKind[]> = {
  numeric: ['integer', 'money'],
  categorical: ['string'],
  boolean: ['boolean'],
}

const variableProblems = (variable: ScoringVariable, at: string): FieldError[] => {
  const problems: FieldError[] = []
  if (!isScoringField(variable.field)) {
    problems.push({ field: `${at}.field`, message: `unknown scoring field "${variable.field}"` })
  } else if (!fieldKindsOf[variable.type].includes(scoringFieldCatalogue[variable.field].kind)) {
    problems.push({ field: `${at}.type`, message: `a ${variable.type} variable cannot read ${variable.field}, a ${scoringFieldCatalogue[variable.field].kind} field` })
  }
  if (!(variable.weight > 0 && variable.weight <= 1)) problems.push({ field: `${at}.weight`, message: 'must be greater than 0 and at most 1' })
  if (variable.type === 'numeric') {
    if (variable.ranges.length === 0) problems.push({ field: `${at}.ranges`, message: 'a numeric variable needs at least one range' })
    if (variable.categories.length > 0) problems.push({ field: `${at}.categories`, message: 'a numeric variable has ranges, not categories' })
    variable.ranges.forEach((range, i) => {
      if (range.min > range.max) problems.push({ field: `${at}.ranges.${i}`, message: `min ${range.min} is greater than max ${range.max}` })
    })
    const sorted = variable.ranges.map((range, index) => ({ ...range, index })).sort((a, b) => a.min - b.min)
    for (let i = 1; i < sorted.length; i++) {
      const previous = sorted[i - 1]
      const current = sorted[i]
      if (previous !== undefined && current !== undefined && current.min <= previous.max) {
        problems.push({ field: `${at}.ranges.${current.index}`, message: `overlaps range ${previous.index} (ranges are inclusive at both ends)` })
      }
    }
    return problems
  }
  if (variable.categories.length === 0) problems.push({ field: `${at}.categories`, message: `a ${variable.type} variable needs at least one category` })
  if (variable.ranges.length > 0) problems.push({ field: `${at}.ranges`, message: `a ${variable.type} variable has categories, not ranges` })
  const seen = new Set<string>()
  variable.categories.forEach((category, i) => {
    if (seen.has(category.value)) problems.push({ field: `${at}.categories.${i}.value`, message: `duplicate category "${category.value}"` })
    seen.add(category.value)
    if (variable.type === 'boolean' && category.value !== 'true' && category.value !== 'false') {
      problems.push({ field: `${at}.categories.${i}.value`, message: 'boolean categories are the strings "true" and "false"' })
    }
  })
  return problems
}

/** Every way a definition breaks the rules, as field errors under `body.`; empty when it is valid. */
export const definitionProblems = (definition: ScoringModelDefinition): FieldError[] => {
  const problems: FieldError[] = []
  if (definition.variables.length === 0) problems.push({ field: 'body.variables', message: 'a model needs at least one variable' })
  const fields = new Set<string>()
  definition.variables.forEach((variable, i) => {
    if (fields.has(variable.field)) problems.push({ field: `body.variables.${i}.field`, message: `field "${variable.field}" is scored twice` })
    fields.add(variable.field)
    problems.push(...variableProblems(variable, `body.variables.${i}`))
  })
  const weights = definition.variables.reduce((sum, v) => sum.plus(money(v.weight)), money(0))
  if (definition.variables.length > 0 && !weights.equals(1)) {
    problems.push({ field: 'body.variables', message: `weights must add up to 1, they add up to ${weights.toFixed()}` })
  }
  const { reject, review, approve } = definition.thresholds
  if (!(reject <= review && review <= approve)) {
    problems.push({ field: 'body.thresholds', message: `thresholds must satisfy reject <= review <= approve (got ${reject}, ${review}, ${approve})` })
  }
  const conditions = [
    ...definition.penalties.map((p, i) => ({ source: p.condition, amount: p.penalty, at: `body.penalties.${i}`, name: 'penalty' })),
    ...definition.bonuses.map((b, i) => ({ source: b.condition, amount: b.bonus, at: `body.bonuses.${i}`, name: 'bonus' })),
  ]
  for (const { source, amount, at, name } of conditions) {
    if (amount < 0) problems.push({ field: `${at}.${name}`, message: `a ${name} is a non-negative number` })
    const problem = checkCondition(source)
    if (problem !== null) problems.push({ field: `${at}.condition`, ...problem, message: `${problem.message} (line ${problem.line}, column ${problem.column})` })
  }
  if (!(scoringModelCategories as readonly string[]).includes(definition.category)) {
    problems.push({ field: 'body.category', message: `must be one of ${scoringModelCategories.join(', ')}` })
  }
  return problems
}

export const requireValidDefinition = (definition: ScoringModelDefinition): void => {
  const problems = definitionProblems(definition)
  if (problems.length > 0) throw invalidFields(problems)
}

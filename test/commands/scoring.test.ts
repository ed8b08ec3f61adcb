import t from 'tap'
import { checkCondition, evaluateCondition } from '../../src/commands/scoringConditions.js'
import { decide, evaluateScoringModel } from '../../src/commands/scoringEvaluation.js'
import { scoringFieldsOfProfile, wholeMonthsSince, wholeYearsSince } from '../../src/commands/scoringFields.js'
import { definitionProblems } from '../../src/commands/scoringModelRules.js'
import { profileAggregate } from '../../src/commands/profile.js'
import { fold } from '../../src/commands/decider.js'
import type { ScoringModelDefinition } from '../../src/events/scoringModel.js'
import { money } from '../../src/shared/money.js'

const model: ScoringModelDefinition = {
  name: 'Micro', description: '', category: 'microcredit', metadata: {},
  variables: [
    { field: 'yearsInBusiness', weight: 0.25, type: 'numeric', ranges: [{ min: 0, max: 2, score: 20 }, { min: 3, max: 10, score: 70 }, { min: 11, max: 200, score: 90 }], categories: [] },
    { field: 'monthlyIncome', weight: 0.35, type: 'numeric', ranges: [{ min: 0, max: 9999999.99, score: 30 }, { min: 10000000, max: 1e12, score: 80 }], categories: [] },
    { field: 'hasLegalRepresentative', weight: 0.15, type: 'boolean', ranges: [], categories: [{ value: 'true', score: 100 }, { value: 'false', score: 10 }] },
    { field: 'economicActivity', weight: 0.25, type: 'categorical', ranges: [], categories: [{ value: '4631', score: 60 }, { value: '5229', score: 40 }] },
  ],
  thresholds: { approve: 65, review: 45, reject: 20 },
  penalties: [{ condition: 'yearsInBusiness < 1', penalty: 10.5, description: 'new business' }, { condition: '!hasEmail', penalty: 2, description: 'no e-mail' }],
  bonuses: [{ condition: 'monthlyIncome > 100000000.0', bonus: 7.25, description: 'large' }],
}

t.test('the arithmetic is decimal: weights × scores, then penalties and bonuses', async (t) => {
  // 0.25 × 90 = 22.5; 0.35 × 80 = 28; 0.15 × 100 = 15; 0.25 × 60 = 15 → 80.5; large bonus +7.25 → 87.75
  const large = evaluateScoringModel(model, { yearsInBusiness: 14, monthlyIncome: '185000000.00', hasLegalRepresentative: true, economicActivity: '4631', hasEmail: true })
  t.match(large, { baseScore: 80.5, totalPenalty: 0, totalBonus: 7.25, score: 87.75, decision: 'approve' })
  t.same(large.variables.map((v) => v.contribution), [22.5, 28, 15, 15])
  // 0.25 × 20 = 5; 0.35 × 30 = 10.5; 0.15 × 10 = 1.5; unknown activity 0 → 17; −10.5 − 2 → 4.5
  const fresh = evaluateScoringModel(model, { yearsInBusiness: 0, monthlyIncome: '6200000', hasLegalRepresentative: false, economicActivity: '0111', hasEmail: false })
  t.match(fresh, { baseScore: 17, totalPenalty: 12.5, totalBonus: 0, score: 4.5, decision: 'reject' })
  t.match(fresh.variables[3], { matched: false, value: '0111', reason: 'the value is in no category' })
  t.same(fresh.variables[2]?.matchedBy, { value: 'false' }, 'booleans match the categories "true" and "false"')
  t.same(fresh.penalties.map((p) => p.applied), [true, true])
  // 0.1 + 0.2 style weights stay exact: 0.35 × 30 is 10.5, not 10.499999…
  t.equal(evaluateScoringModel(model, { monthlyIncome: '5' }).baseScore, 10.5)
})

t.test('range edges are inclusive; values between ranges and absent fields score 0', async (t) => {
  const scoreOf = (years: number) => evaluateScoringModel(model, { yearsInBusiness: years }).variables[0]
  t.equal(scoreOf(2)?.score, 20)
  t.equal(scoreOf(3)?.score, 70)
  t.equal(scoreOf(10)?.score, 70)
  t.equal(scoreOf(11)?.score, 90)
  t.equal(scoreOf(201)?.matched, false)
  const income = (value: string) => evaluateScoringModel(model, { monthlyIncome: value }).variables[1]
  t.equal(income('9999999.99')?.score, 30)
  t.match(income('9999999.999'), { matched: false, score: 0, reason: 'the value is in no range' })
  t.equal(income('10000000')?.score, 80)
  const none = evaluateScoringModel(model, {})
  t.match(none, { baseScore: 0, totalPenalty: 0, score: 0, decision: 'reject' })
  t.ok(none.penalties.every((p) => !p.applied && p.error !== null), 'conditions over absent fields do not apply and say why')
})

t.test('decisions at the threshold edges', async (t) => {
  const thresholds = { approve: 65, review: 45, reject: 20 }
  t.equal(decide(money(65), thresholds), 'approve')
  t.equal(decide(money('64.99'), thresholds), 'review')
  t.equal(decide(money(45), thresholds), 'review')
  t.equal(decide(money('44.999'), thresholds), 'reject')
  t.equal(decide(money(-3), thresholds), 'reject')
  t.equal(decide(money(50), { approve: 50, review: 50, reject: 50 }), 'approve', 'equal thresholds: approve wins')
})

t.test('conditions: only scoring fields, typed, boolean, positioned errors', async (t) => {
  t.equal(checkCondition('age < 21'), null)
  t.equal(checkCondition('monthlyIncome >= 2000000 && employmentType == "formal"'), null)
  t.equal(checkCondition('employmentType in ["formal", "independent"] || (hasEmployer && employmentMonths > 6)'), null)
  t.match(checkCondition('age < 21 &&'), { position: 11, line: 1, column: 12 })
  t.match(checkCondition('age < 21\n&& income > 3'), { message: 'Unknown variable: income', line: 2, column: 4 })
  t.match(checkCondition('age'), { message: /boolean expression, not int/ })
  t.match(checkCondition('employmentType > 3'), { message: /no such overload/ })
  t.match(checkCondition('x'.repeat(501)), { message: /longer than 500/ })
  const emoji = `employmentType == "${'😀'.repeat(250)}"`
  t.ok(emoji.length > 500 && Array.from(emoji).length <= 500, 'over 500 UTF-16 units, within 500 characters')
  t.equal(checkCondition(emoji), null, 'characters are counted as the request schema counts them')
  t.match(checkCondition(`employmentType == "${'😀'.repeat(490)}"`), { message: /longer than 500 characters/ })
  t.match(checkCondition('this.constructor == null'), { message: /Unknown variable|Unexpected/ })
  t.same(evaluateCondition('age < 21', { age: 20 }), { holds: true, error: null })
  t.same(evaluateCondition('age < 21', { age: 21 }), { holds: false, error: null })
  t.same(evaluateCondition('monthlyIncome >= 2000000', { monthlyIncome: '2000000.00' }), { holds: true, error: null })
  t.match(evaluateCondition('age < 21', {}), { holds: false, error: /Unknown variable: age/ })
})

t.test('model rules list each problem at its field', async (t) => {
  const problems = definitionProblems({
    ...model,
    variables: [
      { field: 'age', weight: 0.5, type: 'numeric', ranges: [{ min: 0, max: 10, score: 1 }, { min: 5, max: 20, score: 1 }], categories: [{ value: 'x', score: 1 }] },
      { field: 'gender', weight: 0.6, type: 'categorical', ranges: [{ min: 0, max: 1, score: 1 }], categories: [] },
    ],
    penalties: [{ condition: 'true', penalty: -1, description: '' }],
  })
  t.same(problems.map((p) => p.field), [
    'body.variables.0.categories', 'body.variables.0.ranges.1', 'body.variables.1.categories', 'body.variables.1.ranges', 'body.variables', 'body.penalties.0.penalty',
  ])
  t.same(definitionProblems(model), [])
})

t.test('profile fields: age and months derived with the clock, in UTC', async (t) => {
  t.equal(wholeYearsSince('1990-04-12', new Date('2026-04-11T23:59:59Z')), 35)
  t.equal(wholeYearsSince('1990-04-12', new Date('2026-04-12T00:00:00Z')), 36)
  t.equal(wholeYearsSince('2004-02-29', new Date('2026-02-28T12:00:00Z')), 21, 'a leap-day birthday is not reached on 28 February')
  t.equal(wholeYearsSince('2004-02-29', new Date('2026-03-01T00:00:00Z')), 22)
  t.equal(wholeMonthsSince('2025-11-30', new Date('2026-01-29T00:00:00Z')), 1)
  t.equal(wholeMonthsSince('2027-01-01', new Date('2026-01-29T00:00:00Z')), 0, 'a future start counts 0')
  const natural = fold(profileAggregate, [{ type: 'ProfileCreated', data: {
    profileId: 'p', organizationId: 'o', ownerId: 'u', type: 'natural', isCopy: false, copiedFrom: null, createdAt: '2020-01-01T00:00:00Z', legal: null,
    natural: { firstName: 'A', lastName: 'B', documentType: 'CC', documentNumber: '1', birthDate: '1990-04-12', monthlyIncome: '4500000.00',
      employmentType: 'formal', employerName: 'Café del Valle', employmentStartDate: '2018-02-01', email: 'a@example.co' },
  } }])
  t.same(scoringFieldsOfProfile(natural, new Date('2026-01-15T12:00:00Z')), {
    profileType: 'natural', age: 35, monthlyIncome: '4500000.00', employmentType: 'formal', employmentMonths: 95, hasEmployer: true,
    documentType: 'CC', hasEmail: true, hasPhone: false,
  })
  const legal = fold(profileAggregate, [{ type: 'ProfileCreated', data: {
    profileId: 'p', organizationId: 'o', ownerId: 'u', type: 'legal', isCopy: false, copiedFrom: null, createdAt: '2020-01-01T00:00:00Z', natural: null,
    legal: { businessName: 'Andes', documentType: 'NIT', documentNumber: '900', incorporationDate: '2012-06-15', economicActivity: '4631', monthlyIncome: '185000000.00' },
  } }])
  t.same(scoringFieldsOfProfile(legal, new Date('2026-01-15T12:00:00Z')), {
    profileType: 'legal', monthlyIncome: '185000000.00', documentType: 'NIT', hasEmail: false, hasPhone: false, economicActivity: '4631',
    yearsInBusiness: 13, hasLegalRepresentative: false,
  })
})

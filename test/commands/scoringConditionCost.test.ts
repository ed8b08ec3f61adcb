import t from 'tap'
import { Environment } from '@marcbachmann/cel-js'
import { CONDITION_COST_BUDGET, EVALUATION_STEP_BUDGET, checkCondition, evaluateCondition } from '../../src/commands/scoringConditions.js'
import { estimateConditionCost } from '../../src/commands/scoringConditionCost.js'
import { evaluateScoringModel } from '../../src/commands/scoringEvaluation.js'
import { scoringConfigurationAggregate } from '../../src/commands/scoringConfiguration.js'
import { definitionProblems } from '../../src/commands/scoringModelRules.js'
import { scoringFieldCatalogue, scoringFieldNames } from '../../src/commands/scoringFields.js'
import type { ScoringModelCreated, ScoringModelDefinition } from '../../src/events/scoringModel.js'
import { scenario } from '../helpers/deciders.js'

const numbers = (n: number) => `[${Array.from({ length: n }, (_, i) => i).join(',')}]`
/** `[0..n-1].all(a, [0..n-1].all(b, … a + b + … >= 0))`, `depth` macros deep: n^depth iterations. */
const nested = (n: number, depth: number) => {
  const names = 'abcdefghij'.slice(0, depth).split('')
  return names.reduceRight((body, name) => `${numbers(n)}.all(${name}, ${body})`, `${names.join(' + ')} >= 0`)
}
const longest = { age: 30, monthlyIncome: '2500000.00', employmentType: 'formal', occupation: 'x'.repeat(200), economicActivity: '4631', cityId: 'c'.repeat(36) }
const celTypeOf = { integer: 'int', money: 'double', string: 'string', boolean: 'bool' } as const
const environment = new Environment({ limits: { maxAstNodes: 200, maxDepth: 16, maxListElements: 50, maxMapEntries: 50, maxCallArguments: 8 } })
for (const name of scoringFieldNames) environment.registerVariable(name, celTypeOf[scoringFieldCatalogue[name].kind])
const estimateOf = (source: string) => estimateConditionCost(environment.parse(source).ast, CONDITION_COST_BUDGET).steps
const exceeded = /^evaluation exceeded its budget of \d+ steps$/

/** The costliest conditions of the nested shape within 500 characters that the check accepts, one per depth. */
const costliestAccepted = () => {
  const accepted: string[] = []
  for (let depth = 1; depth <= 7; depth++) {
    let best: string | null = null
    for (let n = 1; n <= 50; n++) {
      const source = nested(n, depth)
      if (source.length <= 500 && checkCondition(source) === null) best = source
    }
    if (best !== null) accepted.push(best)
  }
  return accepted
}

t.test('conditions legitimate today stay accepted and evaluate as before', async (t) => {
  const conditions = [
    'age < 21', 'age > 0', 'true', 'hasEmail', '!hasEmail', '!hasEmail || !hasPhone', 'yearsInBusiness < 1', 'monthlyIncome > 100000000.0',
    'monthlyIncome >= 2000000 && employmentType == "formal"',
    'employmentType in ["formal", "independent"] || (hasEmployer && employmentMonths > 6)',
    'yearsInBusiness < 2 && economicActivity.startsWith("46")',
    'age < 21.5 && size(occupation) > 3 && occupation.contains("agri") && int(economicActivity) > 4600',
    `economicActivity in [${Array.from({ length: 50 }, (_, i) => `"${4600 + i}"`).join(',')}]`,
    `[${Array.from({ length: 40 }, (_, i) => `"w${i}"`).join(',')}].exists(w, occupation.contains(w))`,
    '["46", "47", "52"].exists(p, economicActivity.startsWith(p)) && ["formal", "independent"].all(e, e != employmentType)',
    `${numbers(10)}.filter(x, x > 3).map(x, x * 2).exists(x, x == age)`,
    'occupation.split(" ").exists(w, w.lowerAscii() in ["agricultor", "comerciante"])',
    nested(10, 2), nested(5, 3),
  ]
  for (const condition of conditions) t.equal(checkCondition(condition), null, condition)
  t.same(evaluateCondition('employmentType in ["formal", "independent"] || (hasEmployer && employmentMonths > 6)', { employmentType: 'informal', hasEmployer: true, employmentMonths: 7 }), { holds: true, error: null })
  t.same(evaluateCondition(`${numbers(10)}.filter(x, x > 3).map(x, x * 2).exists(x, x == age)`, { age: 8 }), { holds: true, error: null })
  t.same(evaluateCondition('occupation.split(" ").exists(w, w.lowerAscii() in ["agricultor", "comerciante"])', { occupation: 'Comerciante mayorista' }), { holds: true, error: null })
  t.match(evaluateCondition('age < 21', {}), { holds: false, error: /Unknown variable: age/ }, 'a missing field is still the error it was')
})

t.test('macros nested over long lists are refused at the condition, saying how costly', async (t) => {
  // the audit's conditions: lists of 12 nested 7 deep took 8.3 s; lists of 22 (492 characters) would take about 10 minutes
  for (const condition of [nested(12, 7), nested(22, 7)]) {
    t.ok(condition.length <= 500, 'within the length limit')
    const problem = checkCondition(condition)
    t.match(problem, { message: /^is too costly to evaluate: up to \d+ steps, more than 25000 \(macros nested over long lists multiply their lengths\)$/, line: 1 })
    t.equal(condition[problem?.position ?? -1], '[', 'the position is where the costly macro begins')
  }
  const model: ScoringModelDefinition = {
    name: 'm', description: '', category: 'consumer', metadata: {},
    variables: [{ field: 'age', weight: 1, type: 'numeric', ranges: [{ min: 0, max: 200, score: 1 }], categories: [] }],
    thresholds: { approve: 1, review: 0, reject: 0 },
    penalties: [{ condition: 'age < 21', penalty: 1, description: '' }, { condition: nested(12, 7), penalty: 1, description: 'slow' }],
    bonuses: [{ condition: nested(22, 7), bonus: 1, description: 'slower' }],
  }
  t.match(definitionProblems(model), [
    { field: 'body.penalties.1.condition', message: /^is too costly to evaluate: .* \(line 1, column \d+\)$/, line: 1 },
    { field: 'body.bonuses.0.condition', message: /too costly/ },
  ])
})

t.test('lists and strings a condition builds count at their largest, so doubling or splitting cannot hide the cost', async (t) => {
  const refused = [
    // each binding doubles the list the last macro iterates
    `cel.bind(a, ${numbers(50)}, cel.bind(b, a + a, cel.bind(c, b + b, cel.bind(d, c + c, d.all(x, d.all(y, x + y >= 0))))))`,
    `[${numbers(50)}].all(a, [a + a].all(b, [b + b].all(c, c.all(x, c.all(y, x != y)))))`,
    'occupation.split("").all(c, occupation.split("").all(d, c != d))',
    `${numbers(50)}.map(x, ${numbers(50)}).all(l, l.all(y, y >= 0))`,
    // time-zone conversions are costly calls of their own
    `${numbers(10)}.all(a, timestamp("2026-01-01T00:00:00Z").getHours("America/Bogota") >= 0)`,
  ]
  for (const condition of refused) t.match(checkCondition(condition), { message: /too costly to evaluate: up to \d+ steps/ }, condition)
  t.match(checkCondition('b"{}".json() == {}'), { message: 'is too costly to evaluate: its cost cannot be bounded' }, 'a function without a bound is refused')
})

t.test('the estimate bounds what evaluation counts, so no accepted condition reaches the evaluator\'s budget', async (t) => {
  let seed = 7
  const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648
  const pick = <T>(options: T[]): T => options[Math.floor(random() * options.length)] as T
  let names = 0
  const strings = (depth: number, scope: string[]): string => depth <= 0
    ? pick([`"${'ab'.repeat(Math.floor(random() * 6))}"`, 'occupation', 'employmentType', 'cityId', ...scope])
    : pick([
      () => `${strings(depth - 1, scope)} + ${strings(depth - 1, scope)}`,
      () => `${strings(depth - 1, scope)}.lowerAscii()`,
      () => `${lists(depth - 1, scope)}.join(${strings(0, scope)})`,
      () => `string(size(${strings(depth - 1, scope)}))`,
      () => { const name = `s${names++}`; return `cel.bind(${name}, ${strings(depth - 1, scope)}, ${strings(depth - 1, [...scope, name])})` },
    ])()
  const lists = (depth: number, scope: string[]): string => depth <= 0
    ? `[${Array.from({ length: Math.floor(random() * 10) }, () => strings(0, scope)).join(', ')}]`
    : pick([
      () => `[${Array.from({ length: Math.floor(random() * 5) }, () => strings(depth - 1, scope)).join(', ')}]`,
      () => `${strings(depth - 1, scope)}.split(${pick(['""', '"a"'])})`,
      () => `${lists(depth - 1, scope)} + ${lists(depth - 1, scope)}`,
      () => { const name = `l${names++}`; return `${lists(depth - 1, scope)}.filter(${name}, ${conditions(depth - 1, [...scope, name])})` },
      () => { const name = `l${names++}`; return `${lists(depth - 1, scope)}.map(${name}, ${strings(depth - 1, [...scope, name])})` },
    ])()
  const conditions = (depth: number, scope: string[]): string => depth <= 0
    ? pick(['hasEmail', 'age < 21', 'employmentType == "formal"'])
    : pick([
      () => `${conditions(depth - 1, scope)} && ${conditions(depth - 1, scope)}`,
      () => `${strings(depth - 1, scope)}.contains(${strings(depth - 1, scope)})`,
      () => `${strings(depth - 1, scope)} in ${lists(depth - 1, scope)}`,
      () => `${lists(depth - 1, scope)} == ${lists(depth - 1, scope)}`,
      () => `{"k": ${lists(depth - 1, scope)}}["k"].size() > age`,
      () => { const name = `c${names++}`; return `${lists(depth - 1, scope)}.${pick(['all', 'exists', 'exists_one'])}(${name}, ${conditions(depth - 1, [...scope, name])})` },
    ])()
  const debtors = [
    {},
    longest,
    { age: 18, hasEmail: true, occupation: 'ab'.repeat(100), employmentType: 'ab'.repeat(100), cityId: 'a '.repeat(100) },
    // 200 characters that are 400 UTF-16 code units, which the schemas let through
    { occupation: '😀'.repeat(200), employmentType: '😀'.repeat(200), economicActivity: '😀'.repeat(200) },
  ]
  let compared = 0
  for (let i = 0; i < 400; i++) {
    const source = conditions(1 + Math.floor(random() * 3), [])
    const checked = environment.check(source)
    if (!checked.valid || checked.type !== 'bool') continue
    const estimate = estimateOf(source)
    if (!(estimate <= 100 * CONDITION_COST_BUDGET)) continue
    for (const debtor of debtors) {
      compared += 1
      const outcome = evaluateCondition(source, debtor, estimate)
      if (outcome.error !== null && exceeded.test(outcome.error)) t.fail(`${source} took more than its estimate of ${estimate} steps for ${JSON.stringify(debtor)}`)
    }
  }
  t.ok(compared > 500, `${compared} evaluations compared with their estimates`)
  for (const condition of costliestAccepted()) {
    t.ok(estimateOf(condition) <= CONDITION_COST_BUDGET)
    t.same(evaluateCondition(condition, longest, CONDITION_COST_BUDGET), { holds: true, error: null }, 'within the budget the check allowed')
  }
})

// Without the budget this condition runs about ten minutes: the test's timeout is what would fail (no timed assertion).
t.test('a stored condition over the evaluator\'s budget does not hold, says why, and stops', async (t) => {
  const outcome = evaluateCondition(nested(22, 7), longest)
  t.same(outcome, { holds: false, error: `evaluation exceeded its budget of ${EVALUATION_STEP_BUDGET} steps` })
  t.same(evaluateCondition('age < 21', { age: 20 }), { holds: true, error: null }, 'the next evaluation has its own budget')
  t.same(evaluateCondition('age < 21', { age: 20 }, 0), { holds: false, error: 'evaluation exceeded its budget of 0 steps' }, 'whatever the budget, exceeding it is the same outcome')

  const model: ScoringModelDefinition = {
    name: 'm', description: '', category: 'consumer', metadata: {},
    variables: [{ field: 'age', weight: 1, type: 'numeric', ranges: [{ min: 0, max: 200, score: 50 }], categories: [] }],
    thresholds: { approve: 60, review: 40, reject: 0 },
    penalties: [{ condition: nested(22, 7), penalty: 30, description: 'recorded before the check' }],
    bonuses: [{ condition: 'age > 0', bonus: 5, description: 'adult' }],
  }
  const result = evaluateScoringModel(model, { age: 30 })
  t.match(result, { baseScore: 50, totalPenalty: 0, totalBonus: 5, score: 55, decision: 'review' }, 'the penalty does not apply; the rest of the model scores as usual')
  t.match(result.penalties[0], { applied: false, error: `evaluation exceeded its budget of ${EVALUATION_STEP_BUDGET} steps` })
})

t.test('a model recorded before the cost check still loads, changes status and takes new versions', async (t) => {
  const now = '2026-03-01T10:00:00.000Z'
  const ids = { configId: 'c1', organizationId: 'o1' }
  const valid: ScoringModelDefinition = {
    name: 'Basic', description: '', category: 'consumer', metadata: {},
    variables: [{ field: 'age', weight: 1, type: 'numeric', ranges: [{ min: 18, max: 99, score: 100 }], categories: [] }],
    thresholds: { approve: 70, review: 50, reject: 30 }, penalties: [], bonuses: [],
  }
  const costly = { ...valid, penalties: [{ condition: nested(22, 7), penalty: 1, description: '' }] }
  const recorded: ScoringModelCreated = { type: 'ScoringModelCreated', data: {
    ...ids, modelId: 'm1', versionNumber: 1, version: '1', definition: costly, validFrom: now, isActive: true, createdAt: now,
  } }
  const configuration = scenario(scoringConfigurationAggregate).given(recorded)
  t.ok(configuration.state.models.has('m1'))
  configuration.when({ type: 'ChangeScoringModelStatus', modelId: 'm1', isActive: false, now })
    .then(t, [{ type: 'ScoringModelDeactivated', data: { ...ids, modelId: 'm1', at: now } }])
  configuration.when({ type: 'ReviseScoringModel', modelId: 'm1', version: '2', definition: valid, validFrom: now, now })
    .then(t, [{ type: 'ScoringModelRevised', data: { ...ids, modelId: 'm1', versionNumber: 2, version: '2', definition: valid, validFrom: now, createdAt: now } }])
  configuration.when({ type: 'ReviseScoringModel', modelId: 'm1', version: '2', definition: costly, validFrom: now, now }).thenRefused(t, 'VALIDATION_ERROR')
})

t.test('text of characters outside the BMP counts at its length in code units: what the review found over the bound is within it', async (t) => {
  const emoji = { occupation: '😀'.repeat(200) }
  for (const source of ['occupation.split("").map(c, occupation).join().size() > 0', 'cel.bind(s, occupation.split("").map(c, occupation).join(), s + s != "")']) {
    const estimate = estimateOf(source)
    const outcome = evaluateCondition(source, emoji, Number.isFinite(estimate) ? estimate : EVALUATION_STEP_BUDGET)
    t.notMatch(outcome.error ?? '', exceeded, `${source}: evaluated within its estimate of ${estimate} steps`)
  }
})

import { Environment, type ParseResult } from '@marcbachmann/cel-js'
import { errorMessage } from '../shared/errors.js'
import { estimateConditionCost, extraStepsOf, stepsOfValue } from './scoringConditionCost.js'
import { scoringFieldCatalogue, scoringFieldNames, type ScoringFieldKind, type ScoringFieldValues } from './scoringFields.js'

/**
 * Penalty and bonus conditions are CEL (Common Expression Language) expressions,
 * parsed and evaluated by @marcbachmann/cel-js: no eval, no I/O, not Turing
 * complete, and the only names in scope are the scoring fields, each declared
 * with its type, so a condition is type-checked when the model is created.
 */
const celTypeOf: Record<ScoringFieldKind, string> = { integer: 'int', money: 'double', string: 'string', boolean: 'bool' }

const environment = (() => {
  const env = new Environment({ limits: { maxAstNodes: 200, maxDepth: 16, maxListElements: 50, maxMapEntries: 50, maxCallArguments: 8 } })
  for (const name of scoringFieldNames) env.registerVariable(name, celTypeOf[scoringFieldCatalogue[name].kind])
  return env
})()

export const MAX_CONDITION_LENGTH = 500

/**
 * Steps a condition may cost (scoringConditionCost.ts): the parse limits bound
 * its size, not its work, and macros nested over lists multiply. A condition
 * whose static bound is over this is refused when the model is written; the
 * costliest accepted ones evaluate in well under a millisecond.
 */
export const CONDITION_COST_BUDGET = 25_000

/**
 * Steps one evaluation may take before it is abandoned (about 1.5 ms): conditions
 * recorded before CONDITION_COST_BUDGET existed were never estimated, and the
 * event log is never rewritten. Above the estimate's budget, which bounds what
 * an accepted condition can take, so none of those reaches it.
 */
export const EVALUATION_STEP_BUDGET = 50_000

/** Functions refused in conditions: `matches` runs a caller-supplied regular expression over debtor input (catastrophic backtracking). */
const forbiddenFunctions = new Set(['matches'])

export interface ConditionProblem {
  message: string
  /** 0-based offset of the error in the expression. */
  position: number
  /** 1-based line and column of the error. */
  line: number
  column: number
}

const locate = (source: string, position: number) => {
  const before = source.slice(0, Math.max(0, Math.min(position, source.length)))
  const lines = before.split('\n')
  return { position, line: lines.length, column: (lines.at(-1) ?? '').length + 1 }
}

/** cel-js appends a rendering of the source with a caret; the first line is the message. */
const firstLine = (message: string) => message.split('\n')[0]?.trim() ?? message

const positionOf = (error: unknown): number => {
  if (typeof error !== 'object' || error === null) return 0
  const node: unknown = Reflect.get(error, 'node')
  if (typeof node !== 'object' || node === null) return 0
  const pos: unknown = Reflect.get(node, 'pos')
  return typeof pos === 'number' ? pos : 0
}

/** The first call of a forbidden function in the parsed tree, with its position. */
const findForbiddenCall = (node: unknown): { name: string; position: number } | null => {
  if (Array.isArray(node)) {
    for (const child of node) {
      const found = findForbiddenCall(child)
      if (found !== null) return found
    }
    return null
  }
  if (typeof node !== 'object' || node === null || !('op' in node) || !('args' in node)) return null
  const { op, args } = node
  if ((op === 'call' || op === 'rcall') && Array.isArray(args) && typeof args[0] === 'string' && forbiddenFunctions.has(args[0])) {
    return { name: args[0], position: positionOf({ node }) }
  }
  return findForbiddenCall(args)
}

/** Null when the condition is a valid boolean expression over scoring fields; otherwise what is wrong and where. */
export const checkCondition = (source: string): ConditionProblem | null => {
  // Characters as the request schema counts them (code points): 300 emoji are 300 characters, not 600.
  const characters = Array.from(source)
  if (characters.length > MAX_CONDITION_LENGTH) {
    return { message: `is longer than ${MAX_CONDITION_LENGTH} characters`, ...locate(source, characters.slice(0, MAX_CONDITION_LENGTH).join('').length) }
  }
  const result = environment.check(source)
  if (!result.valid) return { message: firstLine(result.error?.message ?? 'invalid expression'), ...locate(source, positionOf(result.error)) }
  if (result.type !== 'bool') return { message: `must be a boolean expression, not ${result.type ?? 'unknown'}`, ...locate(source, 0) }
  const { ast } = environment.parse(source)
  const forbidden = findForbiddenCall(ast)
  if (forbidden !== null) return { message: `function ${forbidden.name}() is not allowed in conditions`, ...locate(source, forbidden.position) }
  const cost = estimateConditionCost(ast, CONDITION_COST_BUDGET)
  if (!(cost.steps <= CONDITION_COST_BUDGET)) {
    const message = Number.isFinite(cost.steps)
      ? `is too costly to evaluate: up to ${cost.steps} steps, more than ${CONDITION_COST_BUDGET} (macros nested over long lists multiply their lengths)`
      : 'is too costly to evaluate: its cost cannot be bounded'
    return { message, ...locate(source, cost.position ?? 0) }
  }
  return null
}

const compiled = new Map<string, ParseResult>()
const MAX_COMPILED = 1000

/** Parsed conditions, kept in a bounded cache (oldest out first) since models are evaluated far more often than written. */
const compile = (source: string): ParseResult => {
  const cached = compiled.get(source)
  if (cached !== undefined) return cached
  const parsed = environment.parse(source)
  if (compiled.size >= MAX_COMPILED) {
    const oldest = compiled.keys().next()
    if (oldest.done !== true) compiled.delete(oldest.value)
  }
  compiled.set(source, parsed)
  return parsed
}

/** CEL values of the fields: integers as BigInt (`int`), money as a double; absent fields stay absent. */
const celContext = (fields: ScoringFieldValues): Record<string, unknown> => {
  const context: Record<string, unknown> = {}
  for (const name of scoringFieldNames) {
    const value = fields[name]
    if (value === undefined) continue
    const kind = scoringFieldCatalogue[name].kind
    if (kind === 'integer') context[name] = BigInt(Math.trunc(Number(value)))
    else if (kind === 'money') context[name] = Number(value)
    else context[name] = value
  }
  return context
}

class StepBudgetExceeded extends Error {}
/** One instance: macros catch an element's error and go on to the next, which throws again at once. */
const budgetExceeded = new StepBudgetExceeded('evaluation step budget exceeded')

/** Steps left to the evaluation under way; evaluation is synchronous, so one counter serves. */
let stepsLeft = Infinity

interface EvaluatedNode {
  op: string
  args: unknown
}

/**
 * Counts steps in the environment's evaluator: cel-js evaluates every node
 * below the root through `evaluator.run`, which is reached through the root
 * node of a probe (the evaluator is private to the environment).
 */
const meterEvaluator = () => {
  const probe = environment.parse('true')
  const captured: { evaluator?: object } = {}
  Object.defineProperty(probe.ast, 'evaluate', { value: (evaluator: object) => ((captured.evaluator = evaluator), true) })
  probe({})
  const { evaluator } = captured
  if (evaluator === undefined) throw new Error('cel-js did not pass its evaluator to the root node')
  const run: unknown = Reflect.get(evaluator, 'run')
  if (typeof run !== 'function') throw new Error('cel-js evaluator has no run()')
  Object.defineProperty(evaluator, 'run', {
    value(this: object, node: EvaluatedNode, context: { accuValue?: unknown }) {
      stepsLeft -= extraStepsOf(node)
      if (stepsLeft < 0) throw budgetExceeded
      const value: unknown = run.call(this, node, context)
      // a macro's accumulator is returned at every iteration; its elements are charged as they are pushed
      stepsLeft -= 1 + (value === context.accuValue ? 0 : stepsOfValue(value))
      if (stepsLeft < 0) throw budgetExceeded
      return value
    },
  })
}
meterEvaluator()

export type ConditionOutcome = { holds: boolean; error: null } | { holds: false; error: string }

/**
 * Evaluates a checked condition. One that cannot be evaluated (it needs a field
 * the debtor lacks, a conversion fails, or it takes more than `budget` steps)
 * does not hold, and says why.
 */
export const evaluateCondition = (source: string, fields: ScoringFieldValues, budget = EVALUATION_STEP_BUDGET): ConditionOutcome => {
  const exceeded = { holds: false, error: `evaluation exceeded its budget of ${budget} steps` } as const
  stepsLeft = budget
  try {
    const value: unknown = compile(source)(celContext(fields))
    if (stepsLeft < 0) return exceeded
    return { holds: value === true, error: null }
  } catch (error) {
    if (stepsLeft < 0 || error instanceof StepBudgetExceeded) return exceeded
    return { holds: false, error: firstLine(errorMessage(error)) }
  } finally {
    stepsLeft = Infinity
  }
}

// The budget holds only while cel-js evaluates every node through `run` (its version is pinned for that): checked once at load,
// so a release that evaluated otherwise fails the start instead of letting a stored condition run unbounded.
if (evaluateCondition('[1, 2, 3].all(a, [1, 2, 3].all(b, a + b > 0))', {}, 5).error === null) {
  throw new Error('cel-js no longer evaluates through the metered run(): scoring conditions would have no step budget')
}

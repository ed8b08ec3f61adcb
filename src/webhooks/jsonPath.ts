import { JSONPath } from 'jsonpath-plus'

/** A node of the expression tree jsonpath-plus's safe evaluator parses a filter into (jsep's). */
interface ExpressionNode {
  type: string
  [field: string]: unknown
}

interface Script {
  ast: unknown
  runInNewContext(context: object): unknown
}

/** jsonpath-plus's own evaluator (jsep parse, a walk that blocks prototype access); `safeVm` is not in its types. */
const SafeScript: new (code: string) => Script = Reflect.get(Reflect.get(JSONPath.prototype, 'safeVm'), 'Script')

/** The names jsonpath-plus binds a filter's `@`, `@root`, `@parent`, `@property`, `@parentProperty` and `@path` to. */
const boundNames: ReadonlySet<string> = new Set(['_$_v', '_$_root', '_$_parent', '_$_property', '_$_parentProperty', '_$_path'])
const unaryOperators: ReadonlySet<string> = new Set(['!', '-', '+'])
// No binary `+`: on strings it builds text as long as the answer per use, per element. No `??`: jsonpath-plus's evaluator lacks it.
const binaryOperators: ReadonlySet<string> = new Set(['==', '===', '!=', '!==', '<', '<=', '>', '>=', '-', '*', '/', '%', '&&', '||'])

const isNode = (value: unknown): value is ExpressionNode =>
  typeof value === 'object' && value !== null && typeof Reflect.get(value, 'type') === 'string'

/**
 * Why a filter's expression is refused, or null. A filter compares and
 * combines values of the document: no calls (a method of a value, such as a
 * string's `repeat`, runs unmetered), no regular expressions (a pattern can
 * take exponential time), no assignments, arrays or sequences.
 */
export const expressionProblem = (node: unknown): string | null => {
  if (!isNode(node)) return 'is not an expression'
  switch (node.type) {
    case 'Identifier':
      return typeof node['name'] === 'string' && (boundNames.has(node['name']) || node['name'] === 'undefined') ? null : `names ${String(node['name'])}, not a value of the document`
    case 'Literal':
      return node['value'] instanceof RegExp ? 'uses a regular expression' : null
    case 'MemberExpression':
      return expressionProblem(node['object']) ?? (node['computed'] === true ? expressionProblem(node['property']) : null)
    case 'UnaryExpression':
      return unaryOperators.has(String(node['operator'])) ? expressionProblem(node['argument']) : `uses the operator ${String(node['operator'])}`
    case 'BinaryExpression':
    case 'LogicalExpression':
      return binaryOperators.has(String(node['operator']))
        ? expressionProblem(node['left']) ?? expressionProblem(node['right'])
        : `uses the operator ${String(node['operator'])}`
    case 'ConditionalExpression':
      return expressionProblem(node['test']) ?? expressionProblem(node['consequent']) ?? expressionProblem(node['alternate'])
    case 'CallExpression':
      return 'calls a function'
    default:
      return `uses ${node.type}`
  }
}

/**
 * The time left to the query being evaluated. Filters run once per element,
 * and even a comparison costs the length of the texts it compares: without a
 * bound, a filter over a megabyte answer holds the event loop for seconds.
 * Queries run synchronously, so one module-wide budget serves the one running.
 */
let budget: { deadline: number; exceeded: boolean } | null = null

/** A filter expression jsonpath-plus evaluates only once `expressionProblem` finds nothing in it, and only within the query's time. */
class RestrictedScript {
  private readonly script: Script

  constructor(code: string) {
    this.script = new SafeScript(code)
    const problem = expressionProblem(this.script.ast)
    if (problem !== null) throw new Error(`the filter ${problem}`)
  }

  runInNewContext(context: object): unknown {
    if (budget !== null && performance.now() > budget.deadline) {
      budget.exceeded = true
      throw new Error('the query ran out of time')
    }
    return this.script.runInNewContext(context)
  }
}

/** The filters and scripts of a path (`?(…)`, `(…)`) as jsonpath-plus evaluates them, its `@` names bound. */
const scriptsOf = (path: string): string[] =>
  JSONPath.toPathArray(path).flatMap((segment) => {
    const code = /^\??\((.*)\)$/su.exec(segment)?.[1]
    if (code === undefined) return []
    const bound = code
      .replaceAll('@parentProperty', '_$_parentProperty')
      .replaceAll('@parent', '_$_parent')
      .replaceAll('@property', '_$_property')
      .replaceAll('@root', '_$_root')
      .replaceAll(/@([.\s)[])/gu, '_$_v$1')
    return [bound.replaceAll('@path', '_$_path').replace(/^@$/u, '_$_v')]
  })

/**
 * Why a path's filters are refused (see `expressionProblem`), or null. A
 * filter the parser does not take whole (a nested `[?(…)]`, which
 * jsonpath-plus takes apart itself) is left to the check every filter meets
 * when it runs.
 */
export const filterProblem = (path: string): string | null => {
  for (const code of scriptsOf(path)) {
    let script: Script
    try {
      script = new SafeScript(code)
    } catch {
      continue
    }
    const problem = expressionProblem(script.ast)
    if (problem !== null) return `the filter ${problem}`
  }
  return null
}

/** jsonpath-plus keeps every path and filter it has parsed, for good: emptied when it holds this many. */
const MAX_CACHED = 10_000
let evaluations = 0

const boundCache = (): void => {
  evaluations++
  if (evaluations % 1000 === 0 && Object.keys(JSONPath.cache).length > MAX_CACHED) JSONPath.cache = {}
}

const asJson = (value: unknown): null | boolean | number | string | object => {
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' || typeof value === 'object') return value
  return null
}

/** Time one query may take by default, in milliseconds. */
export const QUERY_MILLISECONDS = 50

/**
 * Every match of `path` in `json`, its filters restricted as
 * `expressionProblem` says: a refused filter throws, as does a query still
 * running at `deadline` (a `performance.now()` time); a filter failing on an
 * element (`@.a.b` where `a` is missing) is no match for that element.
 */
export const jsonPathMatches = (path: string, json: unknown, deadline = performance.now() + QUERY_MILLISECONDS): unknown[] => {
  boundCache()
  budget = { deadline, exceeded: false }
  try {
    const matches: unknown = JSONPath({ path, json: asJson(json), wrap: true, eval: RestrictedScript, ignoreEvalErrors: true })
    if (budget.exceeded) throw new Error(`the query ${path.slice(0, 100)} ran out of time`)
    return Array.isArray(matches) ? matches : []
  } finally {
    budget = null
  }
}

import type { ASTNode } from '@marcbachmann/cel-js'
import { scoringFieldCatalogue, isScoringField } from './scoringFields.js'

/**
 * A static upper bound on what evaluating a condition can cost, in the steps
 * the evaluator's budget counts (scoringConditions.ts): one per syntax node
 * evaluated, plus the size of the value it produces (one per list element or
 * map entry half, one per CHARS_PER_STEP characters or bytes). Macros multiply
 * the cost of their body by the length bound of the list they iterate, so
 * nested macros over long lists are what this catches.
 */
export const CHARS_PER_STEP = 64

/**
 * String fields come from profiles and evaluation requests, both at most 200 characters, and a character
 * outside the BMP (an emoji) is two of the UTF-16 code units that lengths and steps count.
 */
const MAX_FIELD_TEXT = 400

/** Per macro iteration: the expanded step, its constant and, for filter(), the pushed element. */
const ITERATION_OVERHEAD = 3

/** Upper bounds on a value's size: characters (a string or bytes), elements (a list; a map counts each key and each value), and each element's bound. */
export interface SizeBound {
  text: number
  items: number
  element: SizeBound | null
}

const scalar: SizeBound = { text: 0, items: 0, element: null }
const unbounded: SizeBound = { text: Infinity, items: Infinity, element: null }

/** Products that stay 0 when a side is 0, even against Infinity (NaN would compare as affordable). */
const times = (a: number, b: number) => (a === 0 || b === 0 ? 0 : a * b)

const elementOf = (bound: SizeBound): SizeBound => bound.element ?? (bound.items === Infinity ? unbounded : scalar)

const join = (a: SizeBound, b: SizeBound): SizeBound => {
  if (a === unbounded || b === unbounded) return unbounded
  const element = a.element !== null && b.element !== null ? join(a.element, b.element) : (a.element ?? b.element)
  return { text: Math.max(a.text, b.text), items: Math.max(a.items, b.items), element }
}

const joinAll = (bounds: SizeBound[]): SizeBound | null => bounds.reduce<SizeBound | null>((all, b) => (all === null ? b : join(all, b)), null)

const text = (length: number): SizeBound => ({ text: length, items: 0, element: null })

/** Steps charged for a value within the bound (the evaluator charges the same measure of the actual value). */
export const stepsOfBound = (bound: SizeBound): number => {
  if (bound.text === Infinity || bound.items === Infinity) return Infinity
  const characters = Math.ceil(bound.text / CHARS_PER_STEP)
  const elements = bound.items + times(bound.items, bound.element === null ? 0 : stepsOfBound(bound.element))
  return Math.max(characters, elements)
}

/** Steps charged for an actual value: the runtime counterpart of stepsOfBound. */
export const stepsOfValue = (value: unknown): number => {
  if (typeof value === 'string') return Math.ceil(value.length / CHARS_PER_STEP)
  if (typeof value !== 'object' || value === null) return 0
  if (value instanceof Uint8Array) return Math.ceil(value.length / CHARS_PER_STEP)
  if (Array.isArray(value)) {
    let steps = value.length
    for (const element of value) steps += stepsOfValue(element)
    return steps
  }
  const prototype: unknown = Object.getPrototypeOf(value)
  if (prototype !== Object.prototype && prototype !== null) return 0
  let steps = 0
  for (const entry of Object.values(value)) steps += 2 + stepsOfValue(entry)
  return steps
}

interface Estimate {
  steps: number
  bound: SizeBound
}

type Scope = ReadonlyMap<string, SizeBound>

const quantifiers = new Set(['all', 'exists', 'exists_one'])

/** Constants in scope that are plain data (the others are types and namespaces, charged nothing). */
const constantBounds: Record<string, SizeBound> = {
  google: { text: 0, items: 2, element: { text: 0, items: 4, element: null } },
}

/** Result bounds of the global functions; absent ones are not bounded (a condition calling them is refused). */
const globalFunctions: Record<string, (args: SizeBound[]) => SizeBound> = {
  size: () => scalar,
  int: () => scalar,
  uint: () => scalar,
  double: () => scalar,
  bool: () => scalar,
  type: () => scalar,
  matches: () => scalar,
  timestamp: () => scalar,
  duration: () => scalar,
  dyn: ([value]) => value ?? scalar,
  // string(double) writes up to ~24 characters; string(bytes) at most one per byte
  string: ([value]) => text(Math.max(value?.text ?? 0, 32)),
  // a UTF-16 code unit encodes to at most 3 UTF-8 bytes
  bytes: ([value]) => text(3 * (value?.text ?? 0)),
}

const timestampGetters = new Set([
  'getDate', 'getDayOfMonth', 'getDayOfWeek', 'getDayOfYear', 'getFullYear', 'getHours', 'getMilliseconds', 'getMinutes', 'getMonth', 'getSeconds',
])

/** Result bounds of the methods (receiver first); absent ones are not bounded. */
const methods: Record<string, (receiver: SizeBound, args: SizeBound[]) => SizeBound> = {
  size: () => scalar,
  startsWith: () => scalar,
  endsWith: () => scalar,
  contains: () => scalar,
  indexOf: () => scalar,
  lastIndexOf: () => scalar,
  matches: () => scalar,
  at: () => scalar,
  trim: (receiver) => text(receiver.text),
  substring: (receiver) => text(receiver.text),
  // case mapping may lengthen a character: to two code units in lower case (İ → i̇), three in upper case (ΐ → Ϊ́)
  lowerAscii: (receiver) => text(2 * receiver.text),
  upperAscii: (receiver) => text(3 * receiver.text),
  split: (receiver) => ({ text: 0, items: receiver.text + 1, element: text(receiver.text) }),
  join: (receiver, [separator]) => text(times(receiver.items, elementOf(receiver).text + (separator?.text ?? 0))),
  hex: (receiver) => text(2 * receiver.text),
  base64: (receiver) => text(4 * Math.ceil(receiver.text / 3)),
  string: (receiver) => text(receiver.text),
  ...Object.fromEntries([...timestampGetters].map((name) => [name, () => scalar])),
}

/** Measured: parsing a timestamp or a duration costs about as much as 60 steps; converting to a time zone (ICU) as 4,000. */
const PARSING_STEPS = 100
const TIME_ZONE_STEPS = 5_000

/** Steps of a call beyond its node and the sizes of its arguments and result, charged alike by the estimate and the evaluator. */
export const extraStepsOf = (node: { op: string; args: unknown }): number => {
  if (!Array.isArray(node.args)) return 0
  const [name, , methodArgs]: unknown[] = node.args
  if (node.op === 'call') return name === 'timestamp' || name === 'duration' ? PARSING_STEPS : 0
  if (node.op === 'rcall') return typeof name === 'string' && timestampGetters.has(name) && Array.isArray(methodArgs) && methodArgs.length > 0 ? TIME_ZONE_STEPS : 0
  return 0
}

const identifierOf = (node: ASTNode | undefined): string | null => (node?.op === 'id' ? node.args : null)

const literalBound = (value: unknown): SizeBound => {
  if (typeof value === 'string') return text(value.length)
  if (value instanceof Uint8Array) return text(value.length)
  return scalar
}

const identifierBound = (name: string, scope: Scope): SizeBound => {
  const bound = scope.get(name)
  if (bound !== undefined) return bound
  if (isScoringField(name)) return scoringFieldCatalogue[name].kind === 'string' ? text(MAX_FIELD_TEXT) : scalar
  return constantBounds[name] ?? scalar
}

/** The step bound and the position of the innermost expression found over the budget. */
export interface CostEstimate {
  steps: number
  position: number | null
}

/** An upper bound on the steps of one evaluation of the parsed condition, whatever the debtor's fields. */
export const estimateConditionCost = (ast: ASTNode, budget: number): CostEstimate => {
  let position: number | null = null
  const charged = (node: ASTNode, steps: number, bound: SizeBound): Estimate => {
    const total = steps + stepsOfBound(bound)
    if (position === null && !(total <= budget)) position = node.pos
    return { steps: total, bound }
  }

  const comprehension = (node: ASTNode, name: string, receiver: ASTNode, args: ASTNode[], scope: Scope): Estimate => {
    const range = estimate(receiver, scope)
    const variable = identifierOf(args[0])
    if (variable === null) return charged(node, Infinity, unbounded)
    const element = elementOf(range.bound)
    const inner = new Map(scope).set(variable, element)
    const body = args.slice(1).map((arg) => estimate(arg, inner))
    const perIteration = ITERATION_OVERHEAD + stepsOfBound(element) + body.reduce((sum, b) => sum + b.steps, 0)
    const steps = 2 + range.steps + times(range.bound.items, perIteration)
    if (quantifiers.has(name)) return charged(node, steps, scalar)
    if (name === 'filter') return charged(node, steps, { text: 0, items: range.bound.items, element })
    return charged(node, steps, { text: 0, items: range.bound.items, element: body.at(-1)?.bound ?? scalar })
  }

  const estimate = (node: ASTNode, scope: Scope): Estimate => {
    switch (node.op) {
      case 'value':
        return charged(node, 1, literalBound(node.args))
      case 'id':
        return charged(node, 1, identifierBound(node.args, scope))
      case '.':
      case '.?': {
        const left = estimate(node.args[0], scope)
        return charged(node, 1 + left.steps, elementOf(left.bound))
      }
      case '[]':
      case '[?]': {
        const [left, index] = node.args.map((arg) => estimate(arg, scope)) as [Estimate, Estimate]
        return charged(node, 1 + left.steps + index.steps, elementOf(left.bound))
      }
      case '!_':
      case '-_':
        return charged(node, 1 + estimate(node.args, scope).steps, scalar)
      case '&&':
      case '||': {
        const [left, right] = node.args.map((arg) => estimate(arg, scope)) as [Estimate, Estimate]
        return charged(node, 1 + left.steps + right.steps, scalar)
      }
      case '?:': {
        const [condition, then, otherwise] = node.args.map((arg) => estimate(arg, scope)) as [Estimate, Estimate, Estimate]
        return charged(node, 1 + condition.steps + Math.max(then.steps, otherwise.steps), join(then.bound, otherwise.bound))
      }
      case 'list': {
        const elements = node.args.map((arg) => estimate(arg, scope))
        const steps = elements.reduce((sum, e) => sum + e.steps, 1)
        return charged(node, steps, { text: 0, items: elements.length, element: joinAll(elements.map((e) => e.bound)) })
      }
      case 'map': {
        const parts = node.args.flatMap(([key, value]) => [estimate(key, scope), estimate(value, scope)])
        const steps = parts.reduce((sum, e) => sum + e.steps, 1)
        return charged(node, steps, { text: 0, items: parts.length, element: joinAll(parts.map((e) => e.bound)) })
      }
      case 'call': {
        const [name, argNodes] = node.args
        if (name === 'has') return charged(node, 1 + argNodes.reduce((sum, arg) => sum + estimate(arg, scope).steps, 0), scalar)
        const args = argNodes.map((arg) => estimate(arg, scope))
        const result = globalFunctions[name]?.(args.map((a) => a.bound))
        if (result === undefined) return charged(node, Infinity, unbounded)
        return charged(node, 1 + extraStepsOf(node) + args.reduce((sum, a) => sum + a.steps, 0), result)
      }
      case 'rcall': {
        const [name, receiverNode, argNodes] = node.args
        if (identifierOf(receiverNode) === 'cel' && name === 'bind' && argNodes.length === 3) {
          const variable = identifierOf(argNodes[0])
          const [, valueNode, bodyNode] = argNodes as [ASTNode, ASTNode, ASTNode]
          if (variable === null) return charged(node, Infinity, unbounded)
          const value = estimate(valueNode, scope)
          const body = estimate(bodyNode, new Map(scope).set(variable, value.bound))
          return charged(node, 1 + value.steps + body.steps, body.bound)
        }
        if (quantifiers.has(name) || name === 'map' || name === 'filter') return comprehension(node, name, receiverNode, argNodes, scope)
        const receiver = estimate(receiverNode, scope)
        const args = argNodes.map((arg) => estimate(arg, scope))
        const result = methods[name]?.(receiver.bound, args.map((a) => a.bound))
        if (result === undefined) return charged(node, Infinity, unbounded)
        return charged(node, 1 + extraStepsOf(node) + receiver.steps + args.reduce((sum, a) => sum + a.steps, 0), result)
      }
      case '+': {
        const [left, right] = node.args.map((arg) => estimate(arg, scope)) as [Estimate, Estimate]
        const element = left.bound.element !== null && right.bound.element !== null ? join(left.bound.element, right.bound.element) : (left.bound.element ?? right.bound.element)
        return charged(node, 1 + left.steps + right.steps, { text: left.bound.text + right.bound.text, items: left.bound.items + right.bound.items, element })
      }
      default: {
        const [left, right] = node.args.map((arg) => estimate(arg, scope)) as [Estimate, Estimate]
        return charged(node, 1 + left.steps + right.steps, scalar)
      }
    }
  }

  return { steps: estimate(ast, new Map()).steps, position }
}

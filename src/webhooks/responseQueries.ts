import { JSONPath } from 'jsonpath-plus'
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../shared/jsonDepth.js'

/**
 * `responseQueries`: name → JSONPath (jsonpath-plus, safe evaluation: filters
 * cannot call JavaScript) over the destination's JSON response. A query with
 * no match gives null, one match its value, several matches the list of them.
 */
export const runResponseQueries = (queries: Record<string, string>, body: string): Record<string, unknown> => {
  let json: unknown
  try {
    json = JSON.parse(body)
  } catch {
    json = undefined
  }
  // A destination's answer is not ours to trust: a value nested too deep could not be recorded with the send.
  if (nestsDeeperThan(json, MAX_JSON_DEPTH)) json = undefined
  return Object.fromEntries(Object.entries(queries).map(([name, path]) => [name, json === undefined ? null : query(path, json)]))
}

const query = (path: string, json: unknown): unknown => {
  try {
    const matches = JSONPath({ path, json: json as object, wrap: true, eval: 'safe' }) as unknown[]
    return matches.length === 0 ? null : matches.length === 1 ? matches[0] : matches
  } catch {
    return null
  }
}

const balanced = (path: string): boolean => {
  const stack: string[] = []
  let quote: string | null = null
  for (const c of path) {
    if (quote !== null) {
      if (c === quote) quote = null
      continue
    }
    if (c === "'" || c === '"') quote = c
    else if (c === '[' || c === '(') stack.push(c)
    else if (c === ']' && stack.pop() !== '[') return false
    else if (c === ')' && stack.pop() !== '(') return false
  }
  return stack.length === 0 && quote === null
}

export const QUERY_NAME = /^[A-Za-z_][A-Za-z0-9_.-]{0,63}$/

/** Why a JSONPath expression is refused, or null. */
export const jsonPathProblem = (path: string): string | null => {
  if (!path.startsWith('$')) return 'must start with $'
  if (!balanced(path)) return 'has unbalanced brackets, parentheses or quotes'
  if (/\.\.\.|\[\]|\.\s*$|\.\[/.test(path)) return 'is not a valid JSONPath expression'
  try {
    JSONPath.toPathArray(path)
    JSONPath({ path, json: { probe: [{ probe: 1 }] }, wrap: true, eval: 'safe' })
  } catch (error) {
    return `is not a valid JSONPath expression (${error instanceof Error ? error.message : String(error)})`
  }
  return null
}

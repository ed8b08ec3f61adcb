import { JSONPath } from 'jsonpath-plus'
import { errorMessage } from '../shared/errors.js'
import { filterProblem, jsonPathMatches, QUERY_MILLISECONDS } from './jsonPath.js'
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../shared/jsonDepth.js'

/**
 * Largest JSON text, in bytes, of one query's result kept with a send, and of
 * all of a send's results together. A query over a large answer (`$..*`
 * repeats every subtree once per level above it) can give many times the
 * answer's size, and results are kept in the send's event, in both log
 * listings and in what `fromWebhook` reads.
 */
export const MAX_QUERY_RESULT_BYTES = 16 * 1024
export const MAX_QUERY_RESULTS_BYTES = 64 * 1024

/** Time all of a send's response queries may take together, in milliseconds (each at most QUERY_MILLISECONDS). */
export const RESPONSE_QUERIES_MILLISECONDS = 250

export interface QueryResults {
  /** name → value: null for no match, and for a result cut for its size. */
  results: Record<string, unknown>
  /** Names whose result was over a limit and is kept as null. */
  cut: string[]
}

/**
 * `responseQueries`: name → JSONPath (jsonpath-plus; filters only compare and
 * combine the document's values, see `jsonPath.ts`) over the destination's JSON response. A query with
 * no match gives null, one match its value, several matches the list of them;
 * a result over MAX_QUERY_RESULT_BYTES, or beyond MAX_QUERY_RESULTS_BYTES with
 * the results before it, is null and named in `cut`.
 */
export const runResponseQueries = (queries: Record<string, string>, body: string): QueryResults => {
  let json: unknown
  try {
    json = JSON.parse(body)
  } catch {
    json = undefined
  }
  // A destination's answer is not ours to trust: a value nested too deep could not be recorded with the send.
  if (nestsDeeperThan(json, MAX_JSON_DEPTH)) json = undefined
  const deadline = performance.now() + RESPONSE_QUERIES_MILLISECONDS
  return capped(Object.entries(queries).map(([name, path]) =>
    [name, json === undefined ? null : query(path, json, Math.min(deadline, performance.now() + QUERY_MILLISECONDS))]))
}

const capped = (entries: Array<[string, unknown]>): QueryResults => {
  const results: Record<string, unknown> = {}
  const cut: string[] = []
  let total = 0
  for (const [name, value] of entries) {
    const bytes = jsonBytesUpTo(value, Math.min(MAX_QUERY_RESULT_BYTES, MAX_QUERY_RESULTS_BYTES - total))
    if (bytes === null) {
      results[name] = null
      cut.push(name)
      continue
    }
    results[name] = value
    total += bytes
  }
  return { results, cut }
}

/**
 * Bytes of a value's JSON text, or null when that is over `limit`. The value
 * is walked first, adding up a lower bound of its text and stopping once that
 * passes the limit, so an answer's subtree repeated a hundred times costs no
 * more than `limit` to refuse; only a value that may fit is written.
 */
const jsonBytesUpTo = (value: unknown, limit: number): number | null => {
  let bound = 0
  const pending: unknown[] = [value]
  for (let next = pending.pop(); next !== undefined && bound <= limit; next = pending.pop()) {
    bound += typeof next === 'string' ? next.length + 2 : 1
    if (typeof next === 'object' && next !== null) {
      for (const [key, child] of Object.entries(next)) {
        bound += Array.isArray(next) ? 1 : key.length + 4
        pending.push(child)
      }
    }
  }
  if (bound > limit) return null
  const bytes = Buffer.byteLength(JSON.stringify(value) ?? 'null')
  return bytes > limit ? null : bytes
}

const query = (path: string, json: unknown, deadline: number): unknown => {
  try {
    const matches = jsonPathMatches(path, json, deadline)
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
  // `.[` is refused, `..[` (recursive descent, then a bracket) is not.
  if (/\.\.\.|\[\]|\.\s*$|(?<!\.)\.\[/.test(path)) return 'is not a valid JSONPath expression'
  try {
    JSONPath.toPathArray(path)
    jsonPathMatches(path, { probe: [{ probe: 1 }] })
  } catch (error) {
    return `is not a valid JSONPath expression (${errorMessage(error)})`
  }
  const filter = filterProblem(path)
  return filter === null ? null : `is refused: ${filter}`
}

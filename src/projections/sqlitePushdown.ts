import type { Filter, Sort } from './readStore.js'

/**
 * What part of a MongoDB filter or sort the SQLite read store can hand to
 * SQL. Only "plain" fields are pushed down: indexed fields, kept in a column
 * of their own beside the document, on which every stored document holds a
 * string, a number, null or nothing (the store keeps that flag per field,
 * like MongoDB's multikey flag; an array, an object or a boolean there would
 * compare differently in SQL). On those, SQLite's order (NULL, numbers, then
 * text by UTF-8 bytes) is MongoDB's.
 *
 * A pushed-down condition never drops a matching document; `exact` says it
 * also selects no other, so counts, skip and limit may be done in SQL. The
 * caller re-checks every document against the whole filter either way.
 */
export interface Pushdown {
  where: string
  params: unknown[]
  exact: boolean
  /** The conditions ANDed in `where`, each with the field it reads. */
  terms: FieldTerm[]
}

/** The SQL column of a plain field (`_id` for the key), or null when the field is not plain in the collection queried. */
export type PlainColumn = (field: string) => string | null

interface Term {
  sql: string
  params: unknown[]
}

export interface FieldTerm extends Term {
  field: string
}

/** Conditions ANDed into a WHERE clause (`1` when none). */
export const conjunction = (terms: readonly Term[]): { where: string; params: unknown[] } =>
  terms.length === 0
    ? { where: '1', params: [] }
    : { where: terms.map((term) => `(${term.sql})`).join(' AND '), params: terms.flatMap((term) => term.params) }

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

const isStringOrNumber = (value: unknown): value is string | number => typeof value === 'string' || typeof value === 'number'

/**
 * Ranges in MongoDB compare values of the bound's type only. SQLite orders
 * NULL < numbers < text, so a text bound from below and a number bound from
 * above need no guard; the other two get a guard that keeps the other type out.
 */
const rangeTerm = (expression: string, operator: string, bound: string | number): Term => {
  const sign = { $gt: '>', $gte: '>=', $lt: '<', $lte: '<=' }[operator] ?? '='
  const above = operator === '$gt' || operator === '$gte'
  if (typeof bound === 'string' && !above) return { sql: `${expression} ${sign} ? AND ${expression} >= ''`, params: [bound] }
  if (typeof bound === 'number' && above) return { sql: `${expression} ${sign} ? AND ${expression} < ''`, params: [bound] }
  return { sql: `${expression} ${sign} ?`, params: [bound] }
}

/** One operator on a plain field, or null when it is not translated exactly. */
const operatorTerm = (expression: string, operator: string, operand: unknown): Term | null => {
  switch (operator) {
    case '$eq':
      return equalityTerm(expression, operand)
    case '$in':
      if (!Array.isArray(operand) || operand.length === 0 || !operand.every(isStringOrNumber)) return null
      return { sql: `${expression} IN (${operand.map(() => '?').join(', ')})`, params: operand }
    case '$gt':
    case '$gte':
    case '$lt':
    case '$lte':
      return isStringOrNumber(operand) ? rangeTerm(expression, operator, operand) : null
    default:
      return null
  }
}

const equalityTerm = (expression: string, operand: unknown): Term | null => {
  if (operand === null) return { sql: `${expression} IS NULL`, params: [] }
  return isStringOrNumber(operand) ? { sql: `${expression} = ?`, params: [operand] } : null
}

/** The terms of one field's condition; `exact` false when some of it stays for the JavaScript check. */
const fieldTerms = (expression: string, condition: unknown): { terms: Term[]; exact: boolean } => {
  if (!isPlainObject(condition)) {
    const term = equalityTerm(expression, condition)
    return term === null ? { terms: [], exact: false } : { terms: [term], exact: true }
  }
  const entries = Object.entries(condition)
  if (entries.length === 0 || !entries.every(([key]) => key.startsWith('$'))) return { terms: [], exact: false }
  const terms: Term[] = []
  let exact = true
  for (const [operator, operand] of entries) {
    const term = operatorTerm(expression, operator, operand)
    if (term === null) exact = false
    else terms.push(term)
  }
  return { terms, exact }
}

const stringOperands = (condition: unknown): boolean =>
  typeof condition === 'string' ||
  (isPlainObject(condition) && Object.values(condition).every((v) => typeof v === 'string' || (Array.isArray(v) && v.every((e) => typeof e === 'string'))))

/** Translates what it can of a filter into a WHERE clause (`1` when nothing). */
export const pushdown = (filter: Filter, column: PlainColumn): Pushdown => {
  const terms: FieldTerm[] = []
  let exact = true
  for (const [key, condition] of Object.entries(filter)) {
    if (key === '$and' && Array.isArray(condition) && condition.length > 0 && condition.every(isPlainObject)) {
      for (const part of condition) {
        const inner = pushdown(part, column)
        terms.push(...inner.terms)
        exact &&= inner.exact
      }
      continue
    }
    const expression = key.startsWith('$') ? null : column(key)
    // _id is a text column: only string operands mean the same in SQL (its affinity would turn 5 into '5').
    if (expression === null || (key === '_id' && !stringOperands(condition))) {
      exact = false
      continue
    }
    const field = fieldTerms(expression, condition)
    terms.push(...field.terms.map((term) => ({ ...term, field: key })))
    exact &&= field.exact
  }
  return { ...conjunction(terms), exact, terms }
}

export interface OrderKey {
  expression: string
  descending: boolean
}

/** The SQL order of a sort over `_id` and plain fields, or null when JavaScript has to sort. */
export const orderKeys = (sort: Sort, column: PlainColumn): OrderKey[] | null => {
  const keys: OrderKey[] = []
  for (const [field, direction] of Object.entries(sort)) {
    const expression = column(field)
    if (expression === null) return null
    keys.push({ expression, descending: direction === -1 })
  }
  return keys
}

/**
 * The condition "comes after this row" for keyset pagination over the keys
 * followed by rowid (unique, so the order is total): for each key, the rows
 * equal on every key before it and past it on this one. NULL sorts first
 * ascending and last descending, in SQLite as in MongoDB; a NULL bound is
 * spelled out because comparisons with NULL are never true.
 */
export const after = (keys: readonly OrderKey[], last: readonly unknown[], rowid: number): Term => {
  // Ascending past a row without NULLs, rows after it have no NULL on any key that decides: a row value SQLite can seek an index with.
  if (keys.every((key, index) => !key.descending && last[index] !== null && last[index] !== undefined)) {
    return { sql: `(${[...keys.map((key) => key.expression), 'rowid'].join(', ')}) > (${[...keys.map(() => '?'), '?'].join(', ')})`, params: [...last.slice(0, keys.length), rowid] }
  }
  const alternatives: string[] = []
  const params: unknown[] = []
  const equalSoFar: Term[] = []
  for (const [index, key] of keys.entries()) {
    const value = last[index] ?? null
    const past: Term | null = value === null
      ? (key.descending ? null : { sql: `${key.expression} IS NOT NULL`, params: [] })
      : key.descending
        ? { sql: `(${key.expression} < ? OR ${key.expression} IS NULL)`, params: [value] }
        : { sql: `${key.expression} > ?`, params: [value] }
    if (past !== null) {
      alternatives.push([...equalSoFar, past].map((term) => term.sql).join(' AND '))
      params.push(...equalSoFar.flatMap((term) => term.params), ...past.params)
    }
    equalSoFar.push(value === null ? { sql: `${key.expression} IS NULL`, params: [] } : { sql: `${key.expression} = ?`, params: [value] })
  }
  alternatives.push([...equalSoFar, { sql: 'rowid > ?', params: [] }].map((term) => term.sql).join(' AND '))
  params.push(...equalSoFar.flatMap((term) => term.params), rowid)
  return { sql: alternatives.map((alternative) => `(${alternative})`).join(' OR '), params }
}

export const orderBy = (keys: readonly OrderKey[]): string =>
  [...keys.map((key) => `${key.expression}${key.descending ? ' DESC' : ''}`), 'rowid'].join(', ')

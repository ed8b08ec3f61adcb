import type { Filter, Sort } from './readStore.js'
import { isScalar } from './memoryFilter.js'
import { sqlOf, type SqlValue } from './sqliteTables.js'

/**
 * What part of a MongoDB filter or sort the SQLite read store can hand to
 * SQL. Only indexed fields are pushed down, by their kind in the collection
 * (sqliteTables.ts): a plain field, on which every stored document holds a
 * string, a number, a boolean, null or nothing, by its own column (booleans
 * as one-byte BLOBs: SQLite's order of NULL, numbers, text by UTF-8 bytes,
 * then BLOBs is MongoDB's); a multikey field, which also holds arrays of
 * those, by its element rows, for equality, `$in` and `$ne` (as MongoDB
 * matches any element). `$or` goes to SQL when every branch does.
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

/** How a collection's fields are kept: a column for plain fields, element rows for multikey ones. */
export interface Columns {
  column: PlainColumn
  multikey(field: string): boolean
  /** The element table (path, value, rid: the document's rowid). */
  readonly elementsIdentifier: string
}

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
 * NULL < numbers < text < BLOBs (booleans), so a number bound from above and
 * a text bound from below each need a guard keeping the other types out.
 */
const rangeTerm = (expression: string, operator: string, bound: string | number): Term => {
  const sign = { $gt: '>', $gte: '>=', $lt: '<', $lte: '<=' }[operator] ?? '='
  const above = operator === '$gt' || operator === '$gte'
  if (typeof bound === 'string' && !above) return { sql: `${expression} ${sign} ? AND ${expression} >= ''`, params: [bound] }
  if (typeof bound === 'string') return { sql: `${expression} ${sign} ? AND ${expression} < x''`, params: [bound] }
  if (above) return { sql: `${expression} ${sign} ? AND ${expression} < ''`, params: [bound] }
  return { sql: `${expression} ${sign} ?`, params: [bound] }
}

/** Scalars of an `$in`/`$nin` list as SQL holds them, or null when the list is empty or holds anything else (null included). */
const inList = (operand: unknown): SqlValue[] | null => {
  if (!Array.isArray(operand) || operand.length === 0 || !operand.every((v) => v !== null && isScalar(v))) return null
  return operand.map(sqlOf)
}

/** One operator on a plain field's column, or null when it is not translated exactly. */
const operatorTerm = (expression: string, operator: string, operand: unknown): Term | null => {
  switch (operator) {
    case '$eq':
      return equalityTerm(expression, operand)
    case '$ne':
      // IS NOT treats NULL as a value: a missing or null field differs from any non-null operand, as in MongoDB.
      return isScalar(operand) ? { sql: `${expression} IS NOT ?`, params: [sqlOf(operand)] } : null
    case '$in': {
      const values = inList(operand)
      return values === null ? null : { sql: `${expression} IN (${values.map(() => '?').join(', ')})`, params: values }
    }
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
  return isScalar(operand) ? { sql: `${expression} = ?`, params: [sqlOf(operand)] } : null
}

/** The documents some element of whose field matches: a rowid subquery on the element table. */
const elementTerm = (columns: Columns, field: string, negated: boolean, value: string, params: unknown[]): Term => ({
  sql: `rowid ${negated ? 'NOT IN' : 'IN'} (SELECT rid FROM ${columns.elementsIdentifier} WHERE path = ? AND ${value})`,
  params: [field, ...params],
})

/** One operator on a multikey field (MongoDB matches a document when any element does; `$ne` when none does), or null. */
const elementOperatorTerm = (columns: Columns, field: string, operator: string, operand: unknown): Term | null => {
  switch (operator) {
    case '$eq':
    case '$ne': {
      if (!isScalar(operand)) return null
      const negated = operator === '$ne'
      return operand === null ? elementTerm(columns, field, negated, 'value IS NULL', []) : elementTerm(columns, field, negated, 'value = ?', [sqlOf(operand)])
    }
    case '$in': {
      const values = inList(operand)
      return values === null ? null : elementTerm(columns, field, false, `value IN (${values.map(() => '?').join(', ')})`, values)
    }
    default:
      return null
  }
}

/** The terms of one field's condition; `exact` false when some of it stays for the JavaScript check. */
const fieldTerms = (condition: unknown, translate: (operator: string, operand: unknown) => Term | null): { terms: Term[]; exact: boolean } => {
  if (!isPlainObject(condition)) {
    const term = translate('$eq', condition)
    return term === null ? { terms: [], exact: false } : { terms: [term], exact: true }
  }
  const entries = Object.entries(condition)
  if (entries.length === 0 || !entries.every(([key]) => key.startsWith('$'))) return { terms: [], exact: false }
  const terms: Term[] = []
  let exact = true
  for (const [operator, operand] of entries) {
    const term = translate(operator, operand)
    if (term === null) exact = false
    else terms.push(term)
  }
  return { terms, exact }
}

const stringOperands = (condition: unknown): boolean =>
  typeof condition === 'string' ||
  (isPlainObject(condition) && Object.values(condition).every((v) => typeof v === 'string' || (Array.isArray(v) && v.every((e) => typeof e === 'string'))))

/** An `$or` whose every branch SQL selects exactly, as one term; null otherwise (left to JavaScript). */
const disjunction = (branches: unknown, columns: Columns): { term: FieldTerm | null } | null => {
  if (!Array.isArray(branches) || branches.length === 0 || !branches.every(isPlainObject)) return null
  const parts = branches.map((branch) => pushdown(branch, columns))
  if (!parts.every((part) => part.exact)) return null
  // A branch with no condition matches every document.
  if (parts.some((part) => part.where === '1')) return { term: null }
  return { term: { sql: parts.map((part) => `(${part.where})`).join(' OR '), params: parts.flatMap((part) => part.params), field: '$or' } }
}

/** Translates what it can of a filter into a WHERE clause (`1` when nothing). */
export const pushdown = (filter: Filter, columns: Columns): Pushdown => {
  const terms: FieldTerm[] = []
  let exact = true
  for (const [key, condition] of Object.entries(filter)) {
    if (key === '$and' && Array.isArray(condition) && condition.length > 0 && condition.every(isPlainObject)) {
      for (const part of condition) {
        const inner = pushdown(part, columns)
        terms.push(...inner.terms)
        exact &&= inner.exact
      }
      continue
    }
    if (key === '$or') {
      const either = disjunction(condition, columns)
      if (either === null) exact = false
      else if (either.term !== null) terms.push(either.term)
      continue
    }
    if (key.startsWith('$')) {
      exact = false
      continue
    }
    const expression = columns.column(key)
    // _id is a text column: only string operands mean the same in SQL (its affinity would turn 5 into '5').
    if (expression !== null && !(key === '_id' && !stringOperands(condition))) {
      const field = fieldTerms(condition, (operator, operand) => operatorTerm(expression, operator, operand))
      terms.push(...field.terms.map((term) => ({ ...term, field: key })))
      exact &&= field.exact
    } else if (columns.multikey(key)) {
      const field = fieldTerms(condition, (operator, operand) => elementOperatorTerm(columns, key, operator, operand))
      // Not the field's column: no index of the table holds these terms.
      terms.push(...field.terms.map((term) => ({ ...term, field: `${key}[]` })))
      exact &&= field.exact
    } else {
      exact = false
    }
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

import { LRUCache } from 'lru-cache'
import { Query } from 'mingo'
import { compareText } from '../shared/text.js'
import { compileFilter, UNKNOWN, valueAt } from './memoryFilter.js'
import type { Filter, ReadDocument, Sort } from './readStore.js'

/*
 * The MongoDB query language evaluated in JavaScript over read-model
 * documents, for the embedded stores (memory, and SQLite's re-check of what
 * it could not push down to SQL).
 */

/**
 * mingo evaluates the MongoDB query language over plain objects; read-model
 * documents are plain JSON objects, only their TypeScript interfaces lack an
 * index signature. Compiling a mingo query copies its operator tables, so
 * compiled queries are kept (most requests repeat the same filter).
 */
const compiledQueries = new LRUCache<string, Query>({ max: 2000 })

const mingoQuery = (filter: Filter): Query => {
  const key = JSON.stringify(filter)
  let query = compiledQueries.get(key)
  if (query === undefined) {
    query = new Query(filter)
    compiledQueries.set(key, query)
  }
  return query
}

/** The compiled scalar predicate where it can answer; mingo (compiled on first need) for the rest. */
const generalMatcher = (filter: Filter): ((doc: ReadDocument) => boolean) => {
  const fast = compileFilter(filter)
  const full = (doc: ReadDocument) => mingoQuery(filter).test(doc as unknown as Record<string, unknown>)
  if (fast === null) return full
  return (doc) => fast(doc) ?? full(doc)
}

type Scalar = string | number | boolean

/** The filter as field → value when it is only equalities of top-level fields with strings, numbers or booleans. */
const plainEqualities = (filter: Filter): Array<[string, Scalar]> | null => {
  const fields = Object.keys(filter)
  const pairs: Array<[string, Scalar]> = []
  for (const field of fields) {
    const value: unknown = filter[field]
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') return null
    if (field.charCodeAt(0) === 36 /* $ */ || field.includes('.')) return null
    pairs.push([field, value])
  }
  return pairs
}

/**
 * A predicate for a MongoDB filter. The usual filter of a lookup (a few
 * top-level fields equal to scalars) is answered by direct comparison, with
 * nothing compiled: a scalar field either is the value or does not match.
 * Only a document holding an array or object there (MongoDB looks inside it)
 * goes to the general matcher, compiled on first need.
 */
export const documentMatcher = (filter: Filter): ((doc: ReadDocument) => boolean) => {
  let general: ((doc: ReadDocument) => boolean) | undefined
  const generally = (doc: ReadDocument) => (general ??= generalMatcher(filter))(doc)
  const pairs = plainEqualities(filter)
  if (pairs === null) return generally
  return (doc) => {
    for (const [field, expected] of pairs) {
      const value: unknown = Reflect.get(doc, field)
      if (value === expected) continue
      return value !== null && typeof value === 'object' ? generally(doc) : false
    }
    return true
  }
}

/** MongoDB's order between missing/null, numbers, strings and booleans (BSON type order, then value). */
const rank = (value: unknown): number => {
  if (value === undefined || value === null) return 1
  if (typeof value === 'number') return 2
  if (typeof value === 'string') return 3
  return 8
}

/** MongoDB's order of two primitive (or missing) values. */
export const comparePrimitives = (a: unknown, b: unknown): number => {
  const byType = rank(a) - rank(b)
  if (byType !== 0) return byType
  if (typeof a === 'number' && typeof b === 'number') return a - b
  if (typeof a === 'string' && typeof b === 'string') return compareText(a, b)
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b)
  return 0
}

/** Sorts when every sort key of every document is a primitive (or missing); null means "ask mingo". */
const sortPrimitive = <T extends ReadDocument>(docs: T[], sort: Sort): T[] | null => {
  const keys = Object.entries(sort).map(([field, direction]) => [field.split('.'), direction] as const)
  const rows: Array<{ doc: T; values: unknown[] }> = []
  for (const doc of docs) {
    const values = keys.map(([parts]) => valueAt(doc, parts))
    if (values.some((v) => v === UNKNOWN || (v !== null && typeof v === 'object'))) return null
    rows.push({ doc, values })
  }
  rows.sort((x, y) => {
    for (const [index, [, direction]] of keys.entries()) {
      const order = comparePrimitives(x.values[index], y.values[index])
      if (order !== 0) return order * direction
    }
    return 0
  })
  return rows.map((row) => row.doc)
}

/** The documents in MongoDB's order for `sort`: compared directly when every key is a primitive, by mingo otherwise. */
export const sortDocuments = <T extends ReadDocument>(docs: T[], sort: Sort): T[] =>
  sortPrimitive(docs, sort) ?? mingoQuery({}).find<T>(docs).sort(sort).all()

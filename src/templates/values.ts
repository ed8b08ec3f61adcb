import { Decimal } from 'decimal.js'

/**
 * The values a template works with: JSON data (null, strings, numbers,
 * booleans, arrays, objects) and times (Date, from `now`). Nothing else ever
 * reaches a template: no functions, no class instances.
 */
export type Kind = 'nil' | 'string' | 'number' | 'bool' | 'time' | 'list' | 'map'

export const isTime = (value: unknown): value is Date => value instanceof Date

export const isList = (value: unknown): value is unknown[] => Array.isArray(value)

/** A plain data object (object literal, JSON, or a null-prototype dict). */
export const isMap = (value: unknown): value is Record<string, unknown> => {
  if (value === null || typeof value !== 'object' || Array.isArray(value) || value instanceof Date) return false
  const proto: unknown = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

export const kindOf = (value: unknown): Kind => {
  if (value === null || value === undefined) return 'nil'
  if (typeof value === 'string') return 'string'
  if (typeof value === 'number') return 'number'
  if (typeof value === 'boolean') return 'bool'
  if (isTime(value)) return 'time'
  if (isList(value)) return 'list'
  if (isMap(value)) return 'map'
  throw new Error(`a template value of an unexpected type: ${typeof value}`)
}

/** An own property of a data object, never anything inherited. */
export const ownValue = (map: Record<string, unknown>, key: string): { found: boolean; value: unknown } =>
  Object.hasOwn(map, key) ? { found: true, value: map[key] } : { found: false, value: null }

/** Go's truth: false, 0, nil, and empty strings, lists and maps are false; everything else is true. */
export const truth = (value: unknown): boolean => {
  switch (kindOf(value)) {
    case 'nil': return false
    case 'string': return value !== ''
    case 'number': return value !== 0
    case 'bool': return value === true
    case 'time': return true
    case 'list': return (value as unknown[]).length > 0
    case 'map': return Object.keys(value as object).length > 0
  }
}

/** A new data object without a prototype: `dict "__proto__" 1` is just a key. */
export const newMap = (entries: Iterable<[string, unknown]> = []): Record<string, unknown> => {
  const map: Record<string, unknown> = Object.create(null)
  for (const [key, value] of entries) map[key] = value
  return map
}

const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/

/**
 * How far from 1 a template's decimals may go: 10^±1000. Written in full, as
 * the functions give results, `1e999999999` is a billion digits, which would
 * exhaust memory before any output limit could see them.
 */
export const MAX_DECIMAL_EXPONENT = 1000

export const inDecimalRange = (value: Decimal): boolean => value.isZero() || Math.abs(value.e) <= MAX_DECIMAL_EXPONENT

/** A number or a decimal string (money) within 10^±1000 as a Decimal; null for anything else. */
export const asDecimal = (value: unknown): Decimal | null => {
  if (typeof value === 'number' && Number.isFinite(value)) return new Decimal(value)
  if (typeof value !== 'string' || !DECIMAL.test(value.trim())) return null
  const decimal = new Decimal(value.trim())
  return inDecimalRange(decimal) ? decimal : null
}

export const formatNumber = (value: number): string => (Object.is(value, -0) ? '0' : String(value))

/** Go's `%v`: how print, printf and template output show a value. At the top of an action nil is `<no value>`. */
export const formatValue = (value: unknown, topLevel = false): string => {
  switch (kindOf(value)) {
    case 'nil': return topLevel ? '<no value>' : '<nil>'
    case 'string': return value as string
    case 'number': return formatNumber(value as number)
    case 'bool': return String(value)
    case 'time': return (value as Date).toISOString()
    case 'list': return `[${(value as unknown[]).map((v) => formatValue(v)).join(' ')}]`
    case 'map': {
      const map = value as Record<string, unknown>
      return `map[${Object.keys(map).sort().map((k) => `${k}:${formatValue(map[k])}`).join(' ')}]`
    }
  }
}

/** The Go type name a value stands for, for error messages and `%T`. */
export const goTypeName = (value: unknown): string => {
  switch (kindOf(value)) {
    case 'nil': return '<nil>'
    case 'string': return 'string'
    case 'number': return Number.isInteger(value) ? 'int' : 'float64'
    case 'bool': return 'bool'
    case 'time': return 'time.Time'
    case 'list': return '[]interface {}'
    case 'map': return 'map[string]interface {}'
  }
}

/** JSON text of a value (times as ISO 8601), as Sprig's toJson. */
export const toJsonText = (value: unknown, indent?: number): string => JSON.stringify(value ?? null, null, indent) ?? 'null'

import { Decimal } from 'decimal.js'
import { compareText } from '../shared/text.js'

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
    case 'map': return hasOwnKey(value as object)
  }
}

/** Whether a data object has any key, without listing them all (a map of a million keys is as quick as one). */
const hasOwnKey = (map: object): boolean => {
  for (const key in map) if (Object.hasOwn(map, key)) return true
  return false
}

/**
 * Data of unknown shape as Go holds it: every object in it a map (a data
 * object without a prototype, as `dict` and `fromJson` make), so `toJson`
 * writes its keys sorted. Values from outside the template (`fromWebhook`)
 * come as plain objects; one step is paid per element and key copied.
 */
export const asGoData = (value: unknown, meter: Meter): unknown => {
  if (isList(value)) {
    meter.charge(value.length)
    return value.map((element) => asGoData(element, meter))
  }
  if (!isMap(value)) return value
  const entries = Object.entries(value)
  meter.charge(entries.length)
  return newMap(entries.map(([key, element]) => [key, asGoData(element, meter)]))
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

/**
 * Longest text read as a decimal. Parsing a decimal costs several times more
 * per character than the steps its text pays for: a string of a million
 * digits compared in a loop took minutes. Money never comes near this.
 */
const MAX_DECIMAL_TEXT = 4096

/** A number or a decimal string (money) of at most 4,096 characters within 10^±1000 as a Decimal; null for anything else. */
export const asDecimal = (value: unknown): Decimal | null => {
  if (typeof value === 'number' && Number.isFinite(value)) return new Decimal(value)
  if (typeof value !== 'string' || value.length > MAX_DECIMAL_TEXT || !DECIMAL.test(value.trim())) return null
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
      return `map[${Object.keys(map).sort(compareText).map((k) => `${k}:${formatValue(map[k])}`).join(' ')}]`
    }
  }
}

/** Longest text of a value an error message shows. */
const SHOWN_TEXT = 100

/** A value in an error message: a scalar as its type and quoted text cut at 100 characters, a list or map as its type only (its text may be huge). */
export const describeValue = (value: unknown): string => {
  const kind = kindOf(value)
  if (kind === 'list' || kind === 'map') return goTypeName(value)
  const text = formatValue(value)
  return `${goTypeName(value)} ${JSON.stringify(text.length > SHOWN_TEXT ? `${text.slice(0, SHOWN_TEXT)}…` : text)}`
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

/**
 * JSON text of a value as Sprig's toJson writes it with Go's encoding/json: a
 * map's keys in sorted order (`dict`, `fromJson` and `fromWebhook` make maps:
 * the data objects without a prototype), the context's objects in their field
 * order as Go's structs; times as ISO 8601. Maps are written here rather than
 * by JSON.stringify, which puts integer-like keys first in numeric order ("9"
 * before "10", where Go sorts "10" first) whatever order they were put in.
 */
export const toJsonText = (value: unknown, indent = 0): string =>
  holdsMapToSort(value) ? jsonText(value, indent === 0 ? '' : ' '.repeat(indent), '') : JSON.stringify(value ?? null, null, indent) ?? 'null'

const isGoMap = (value: object): boolean => Object.getPrototypeOf(value) === null

/** Whether a map of two keys or more is anywhere inside: without one, JSON.stringify (several times quicker) writes the same text. */
const holdsMapToSort = (value: unknown): boolean => {
  if (value === null || typeof value !== 'object' || isTime(value)) return false
  if (isList(value)) return value.some(holdsMapToSort)
  let keys = 0
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue
    keys += 1
    if (holdsMapToSort(Reflect.get(value, key))) return true
  }
  return keys > 1 && isGoMap(value)
}

const jsonText = (value: unknown, step: string, margin: string): string => {
  if (value === null || value === undefined) return 'null'
  if (typeof value === 'string' || typeof value === 'boolean') return JSON.stringify(value)
  if (typeof value === 'number') return Number.isFinite(value) ? JSON.stringify(value) : 'null'
  if (isTime(value)) return Number.isNaN(value.getTime()) ? 'null' : JSON.stringify(value.toISOString())
  if (typeof value !== 'object') return 'null'
  const inner = margin + step
  const open = step === '' ? '' : `\n${inner}`
  const close = step === '' ? '' : `\n${margin}`
  const separator = step === '' ? ',' : `,\n${inner}`
  if (isList(value)) {
    return value.length === 0 ? '[]' : `[${open}${value.map((element) => jsonText(element, step, inner)).join(separator)}${close}]`
  }
  const record = value as Record<string, unknown>
  const keys = isGoMap(value) ? Object.keys(record).sort(compareText) : Object.keys(record)
  const members = keys.filter((key) => record[key] !== undefined)
    .map((key) => `${JSON.stringify(key)}${step === '' ? ':' : ': '}${jsonText(record[key], step, inner)}`)
  return members.length === 0 ? '{}' : `{${open}${members.join(separator)}${close}}`
}

/**
 * What a render may still spend, as functions see it. The step budget bounds
 * the work inside a call too: a list that holds itself twice, 24 times over,
 * is 16 million strings to print though it took 24 calls to build.
 */
export interface Meter {
  /** Spends steps of the render's budget; the render fails once the budget is spent. */
  charge(steps: number): void
  /** Fails the render at the call in progress. */
  refuse(reason: string): never
  /** Longest text a function may build, in characters. */
  readonly maxText: number
}

/**
 * Characters of text one step pays for when a function reads, walks or
 * builds text: about what a step of the render itself costs when text is
 * split into characters, the slowest thing the functions do per character.
 */
const TEXT_PER_STEP = 16

export const textSteps = (length: number): number => Math.floor(length / TEXT_PER_STEP)

/** Steps for reading the text of a call's string arguments once. */
export const argumentTextSteps = (args: readonly unknown[]): number => {
  let steps = 0
  for (const arg of args) if (typeof arg === 'string') steps += textSteps(arg.length)
  return steps
}

/**
 * Walks a value as formatValue and toJsonText will write it, paying one step
 * per element and the text of its strings, and answers a lower bound of the
 * length of that text; it stops walking once that passes `room`. The text is
 * built (natively) only after, so a value too large to write costs no more
 * than `room` characters of walking. `indent` counts the indentation of
 * pretty JSON.
 */
export const textLength = (value: unknown, meter: Meter, room: number, indent = 0): number => {
  const walk: Walk = { meter, room, indent, length: 0 }
  visit(value, 0, walk)
  return walk.length
}

interface Walk {
  readonly meter: Meter
  readonly room: number
  readonly indent: number
  length: number
}

// A module-level function, not a closure made per call: renders call this for every value they print.
const visit = (item: unknown, depth: number, walk: Walk): void => {
  walk.meter.charge(1)
  walk.length += walk.indent * depth
  if (typeof item === 'string') {
    walk.meter.charge(textSteps(item.length))
    walk.length += item.length
  } else if (isList(item)) {
    walk.length += 1 + item.length
    for (const element of item) {
      if (walk.length > walk.room) return
      visit(element, depth + 1, walk)
    }
  } else if (isMap(item)) {
    const keys = Object.keys(item)
    walk.meter.charge(keys.length)
    walk.length += 1 + keys.length
    for (const key of keys) {
      if (walk.length > walk.room) return
      walk.length += key.length
      visit(item[key], depth + 1, walk)
    }
  } else {
    walk.length += 1
  }
}

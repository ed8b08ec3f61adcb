import { createHash } from 'node:crypto'
import { Decimal } from 'decimal.js'
import { instantOf } from '../shared/instant.js'
import { compareText } from '../shared/text.js'
import { formatGoTime, zoneOffsetMinutes } from './goTime.js'
import { sprintf } from './printf.js'
import {
  argumentTextSteps, asDecimal, asGoData, describeValue, formatValue, goTypeName, inDecimalRange, isList, isMap, isTime, kindOf, MAX_DECIMAL_EXPONENT, newMap, ownValue, textLength, textSteps, toJsonText, truth,
  type Meter,
} from './values.js'

/**
 * The allow-list: every function a template may call. Go's built-ins and the
 * common Sprig functions, each a pure function of its arguments except `now`
 * (the render's clock) and `fromWebhook` (values injected per render).
 */
export interface RenderEnvironment {
  /** The instant `now` returns. */
  now: Date
  /** The value a webhook with this tag stored under this response-query name for the credit being rendered; null when none. */
  fromWebhook(tag: string, query: string): unknown
}

/** A refusal inside a function; the runtime adds the template position. */
export class FunctionError extends Error {}

export interface TemplateFunction {
  /** Fewest and most arguments (the piped value counts as the last one). */
  arity: readonly [number, number]
  /**
   * Steps a call costs before the work it pays through the meter (walking
   * lists and values, building text) and the text of its arguments: 1, or
   * more for functions that parse decimals or times, which cost several steps.
   */
  steps: number
  call(args: unknown[], env: RenderEnvironment, meter: Meter): unknown
  /** Short description for the documentation. */
  doc: string
}

/** What a call that parses decimals or times costs: measured, about eight times a plain call. */
const PARSING_STEPS = 8

/** dateInZone asks the platform's time-zone data twice per call: measured, about fifty plain calls. */
const ZONE_STEPS = 48

/** Formatting a Go layout, per character of the layout: measured, about 170 ns, some thirty plain steps. */
const LAYOUT_STEPS_PER_CHARACTER = 32

/** `title`'s word-start pattern and callback, per character of the text: measured, about 30 ns, six plain steps. */
const TITLE_STEPS_PER_CHARACTER = 6

/** A layout for `date` and `dateInZone`, paid for by its length before it is formatted. */
const layoutOf = (value: unknown, meter: Meter): string => {
  const layout = text(value, meter)
  meter.charge(layout.length * LAYOUT_STEPS_PER_CHARACTER)
  return layout
}

/** Digit pairs multiplied per step: a product of two 500-digit decimals takes about as long as a thousand steps. */
const DIGIT_PAIRS_PER_STEP = 256

const PRETTY_INDENT = 2

const fail = (message: string): never => {
  throw new FunctionError(message)
}

/** Refuses text longer than a function may build, before it is built. */
const withinText = (length: number, meter: Meter, what: string): void => {
  if (length > meter.maxText) fail(`${what} would be ${length} characters, more than ${meter.maxText}`)
}

/** Pays for walking a value and refuses it, before any text is built, when its text would be longer than a function may build. */
const affordText = (value: unknown, meter: Meter, indent = 0): void => {
  if (textLength(value, meter, meter.maxText, indent) > meter.maxText) meter.refuse('value too large')
}

const padding = (count: unknown, name: string, meter: Meter): string => {
  const n = Math.max(0, integer(count, name))
  return n > meter.maxText ? fail(`${name}: ${n} is too large`) : ' '.repeat(n)
}

/** A value as text (nil is empty); lists and maps are walked and paid for first. */
const text = (value: unknown, meter: Meter): string => {
  if (typeof value === 'string') return value
  if (kindOf(value) === 'nil') return ''
  affordText(value, meter)
  return formatValue(value)
}

/** `text` for values already walked and paid for (elements of a list the caller measured). */
const plainText = (value: unknown): string => (typeof value === 'string' ? value : kindOf(value) === 'nil' ? '' : formatValue(value))

const chars = (value: string): string[] => [...value]

const integer = (value: unknown, name: string): number => {
  const decimal = asDecimal(value)
  if (decimal === null) return fail(`${name}: expected a number, got ${goTypeName(value)}`)
  return decimal.trunc().toNumber()
}

/**
 * Parsing a decimal costs about twice what reading its text does: the
 * functions that parse their arguments pay for the text once more.
 */
const chargeDecimalText = (args: readonly unknown[], meter: Meter): void => {
  meter.charge(argumentTextSteps(args))
}

const decimalOf = (value: unknown, name: string): Decimal => {
  if (value === null || value === undefined || value === '') return new Decimal(0)
  return asDecimal(value)
    ?? fail(`${name}: expected a number or a decimal string within 1e±${MAX_DECIMAL_EXPONENT}, got ${describeValue(value)}`)
}

/** Integer arithmetic (Sprig's add, sub…): a number when it fits, else a decimal string. */
const intResult = (value: Decimal): number | string => {
  const truncated = value.trunc()
  return truncated.abs().lte(Number.MAX_SAFE_INTEGER) ? truncated.toNumber() : truncated.toFixed()
}

const list = (value: unknown, name: string): unknown[] => {
  if (value === null || value === undefined) return []
  if (isList(value)) return value
  return fail(`${name}: expected a list, got ${goTypeName(value)}`)
}

const map = (value: unknown, name: string): Record<string, unknown> => {
  if (value === null || value === undefined) return newMap()
  if (isMap(value)) return value
  return fail(`${name}: expected a map, got ${goTypeName(value)}`)
}

/** The keys of a map, paid for: listing them is work in proportion to their number. */
const keysOf = (value: Record<string, unknown>, meter: Meter): string[] => {
  const keys = Object.keys(value)
  meter.charge(keys.length)
  return keys
}

/** Pays for comparison sorting n items: n·log2(n) comparisons. */
const chargeSort = (count: number, meter: Meter): void => {
  meter.charge(count * Math.ceil(Math.log2(count + 1)))
}

/**
 * What uniq and has compare values by: a key equal exactly when their JSON
 * texts are (a time equals its ISO 8601 string, 1 differs from "1"), computed
 * once per element and paid for as it is walked, so a list is deduplicated in
 * one pass. A string is its own key behind a quote, as JSON would start it,
 * which saves escaping every element of a long list of strings.
 */
const sameness = (value: unknown, meter: Meter): string => {
  if (typeof value === 'string') {
    meter.charge(1 + textSteps(value.length))
    return `"${value}`
  }
  if (isTime(value)) return `"${value.toISOString()}`
  affordText(value, meter)
  return toJsonText(value)
}

const uniq = (items: readonly unknown[], meter: Meter): unknown[] => {
  const seen = new Set<string>()
  return items.filter((item) => {
    const key = sameness(item, meter)
    if (seen.has(key)) return false
    seen.add(key)
    return true
  })
}

const has = (needle: unknown, items: readonly unknown[], meter: Meter): boolean => {
  const key = sameness(needle, meter)
  return items.some((item) => sameness(item, meter) === key)
}

/** The list's elements as text, joined by `separator`: the text is measured before it is built. */
const join = (separator: string, items: readonly unknown[], meter: Meter): string => {
  affordText(items, meter)
  withinText(separator.length * Math.max(0, items.length - 1), meter, 'join')
  return items.map(plainText).join(separator)
}

const sortAlpha = (items: readonly unknown[], meter: Meter): string[] => {
  affordText(items, meter)
  chargeSort(items.length, meter)
  return items.map(plainText).sort(compareText)
}

/** How many times `part` occurs in `whole` without overlapping (as split finds them); '' between UTF-16 units, as split('') cuts. */
const occurrences = (whole: string, part: string): number => {
  if (part === '') return Math.max(0, whole.length - 1)
  let count = 0
  for (let at = whole.indexOf(part); at >= 0; at = whole.indexOf(part, at + part.length)) count++
  return count
}

const replace = (old: string, replacement: string, whole: string, meter: Meter): string => {
  const count = occurrences(whole, old)
  withinText(whole.length + count * (replacement.length - old.length), meter, 'replace')
  return whole.split(old).join(replacement)
}

const lineCount = (value: string): number => occurrences(value, '\n') + 1

const indent = (count: unknown, value: string, name: string, meter: Meter, leadingNewline: boolean): string => {
  const pad = padding(count, name, meter)
  withinText(value.length + lineCount(value) * pad.length + (leadingNewline ? 1 : 0), meter, name)
  return `${leadingNewline ? '\n' : ''}${pad}${value.replace(/\n/g, `\n${pad}`)}`
}

const TIME_TEXT = 'a date such as 2026-03-07, or a timestamp such as 2026-03-07T10:00:00Z, or 2026-03-07T10:00:00 read as UTC'

/** An ISO 8601 date and time without an offset, as other systems' answers often carry them. */
const WITHOUT_OFFSET = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?$/

/**
 * A time of the value (a number is Unix seconds), or null for an empty one; a
 * value outside JavaScript's dates fails, it is not printed as NaN. Text is
 * read strictly, as the context writes times: JavaScript's own reading rolls
 * 2026-02-30 over to March, reads 7/3/2026 US-style and "1" as 2001. A
 * timestamp without an offset is UTC, as every day the service computes is,
 * never the host's zone, so a template reading one from another system's
 * answer works the same on every host.
 */
const time = (value: unknown, name: string): Date | null => {
  if (value === null || value === undefined || value === '') return null
  const text = typeof value === 'string' && WITHOUT_OFFSET.test(value) ? `${value}Z` : value
  const parsed = isTime(text) ? text : typeof text === 'number' ? new Date(text * 1000) : typeof text === 'string' ? instantOf(text) : null
  if (parsed !== null && !Number.isNaN(parsed.getTime())) return parsed
  return fail(`${name}: cannot read ${describeValue(value)} as a time${typeof value === 'string' ? ` (${TIME_TEXT})` : ''}`)
}

/** The latest instant a JavaScript Date holds, in milliseconds (the earliest is its negation). */
const MAX_DATE_MS = 8.64e15

/**
 * Whether a zone's wall clock of the time is a JavaScript Date too: it is the
 * time shifted by the zone's offset (at most 14 hours), which near either end
 * of the range falls outside it and would print as NaN.
 */
const wallClockInRange = (t: Date, zone: string): boolean => {
  if (Math.abs(t.getTime()) <= MAX_DATE_MS - 86_400_000) return true
  const offset = zoneOffsetMinutes(t, zone)
  return Number.isFinite(offset) && Math.abs(t.getTime() + offset * 60_000) <= MAX_DATE_MS
}

const isTimeZone = (zone: string): boolean => {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone })
    return true
  } catch {
    return false
  }
}

/** Go's eq/lt operands: numbers and decimal strings compare as numbers; other kinds only with their own kind. */
const comparable = (a: unknown, b: unknown, name: string): number => {
  const ka = kindOf(a)
  const kb = kindOf(b)
  if (ka === 'list' || ka === 'map' || kb === 'list' || kb === 'map') fail(`${name}: non-comparable type ${goTypeName(ka === 'list' || ka === 'map' ? a : b)}`)
  const numeric = (ka === 'number' || kb === 'number' || name !== 'eq') && !(ka === 'bool' || kb === 'bool')
  const da = numeric ? asDecimal(a) : null
  const db = da === null ? null : asDecimal(b)
  if (da !== null && db !== null) return da.comparedTo(db)
  if (ka !== kb) {
    if (ka === 'nil' || kb === 'nil') return name === 'eq' ? 1 : fail(`${name}: invalid type for comparison`)
    return fail(`${name}: incompatible types for comparison: ${goTypeName(a)} and ${goTypeName(b)}`)
  }
  if (ka === 'nil') return 0
  if (ka === 'time') return Math.sign((a as Date).getTime() - (b as Date).getTime())
  if (ka === 'bool') return a === b ? 0 : name === 'eq' ? 1 : fail(`${name}: invalid type for comparison: bool`)
  const sa = a as string
  const sb = b as string
  return Math.sign(compareText(sa, sb))
}

const escapeHtml = (text: string) => text.replace(/[&<>"'\0]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&#34;', "'": '&#39;', '\0': '\uFFFD' })[c] ?? c)
const escapeJs = (text: string) => text.replace(/[\\'"<>&=\u0000-\u001f]/g, (c) => {
  const named: Record<string, string> = { '\\': '\\\\', "'": "\\'", '"': '\\"', '\n': '\\n', '\r': '\\r', '\t': '\\t' }
  return named[c] ?? `\\u${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`
})
const queryEscape = (text: string) => encodeURIComponent(text).replace(/%20/g, '+').replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)

/** Go's fmt.Sprint: a space between operands when neither is a string; the operands are measured before they are written. */
const sprint = (args: unknown[], meter: Meter) => {
  affordText(args, meter)
  return args.map((a, i) => {
    const spaced = i > 0 && typeof a !== 'string' && typeof args[i - 1] !== 'string'
    return (spaced ? ' ' : '') + formatValue(a)
  }).join('')
}

/** The non-nil arguments as text, measured first (cat, quote, squote). */
const presentTexts = (args: unknown[], meter: Meter): string[] => {
  const present = args.filter((a) => a !== null && a !== undefined)
  affordText(present, meter)
  return present.map(plainText)
}

type Call = (args: unknown[], env: RenderEnvironment, meter: Meter) => unknown

const fn = (min: number, max: number, doc: string, call: Call, steps = 1): TemplateFunction => ({ arity: [min, max], call, doc, steps })
const unary = (doc: string, call: (value: unknown, meter: Meter) => unknown, steps = 1) => fn(1, 1, doc, (args, _env, meter) => call(args[0], meter), steps)
const text1 = (doc: string, call: (value: string) => unknown, steps = 1) => unary(doc, (v, meter) => call(text(v, meter)), steps)
const many = Number.POSITIVE_INFINITY

/** Pays for multiplying: schoolbook, in proportion to the product of the digits (a thousand digits squared is a million). */
const multiplying = (meter: Meter) => (a: Decimal, b: Decimal): Decimal => {
  meter.charge(Math.floor((a.sd() * b.sd()) / DIGIT_PAIRS_PER_STEP))
  return a.times(b)
}

const arithmetic = (doc: string, integerResult: boolean, reduce: (meter: Meter) => (a: Decimal, b: Decimal) => Decimal, min = 2) => fn(min, many, doc, (args, _env, meter) => {
  chargeDecimalText(args, meter)
  const [first, ...rest] = args.map((a, i) => decimalOf(a, `argument ${i + 1}`))
  const result = rest.reduce(reduce(meter), first ?? new Decimal(0))
  if (!inDecimalRange(result)) fail(`the result is beyond 1e±${MAX_DECIMAL_EXPONENT}`)
  return integerResult ? intResult(result) : result.toFixed()
}, PARSING_STEPS)

/** An operation whose cost the call's own steps cover (all but multiplying). */
const unmetered = (reduce: (a: Decimal, b: Decimal) => Decimal) => () => reduce

const divide = (a: Decimal, b: Decimal) => (b.isZero() ? fail('division by zero') : a.div(b))

const decimal1 = (doc: string, call: (value: unknown) => unknown) => unary(doc, (v, meter) => {
  chargeDecimalText([v], meter)
  return call(v)
}, PARSING_STEPS)
const compare = (doc: string, call: (args: unknown[]) => unknown, max = 2) => fn(2, max, doc, (args, _env, meter) => {
  chargeDecimalText(args, meter)
  return call(args)
}, PARSING_STEPS)

const builtins: Record<string, TemplateFunction> = {
  // Go's text/template built-ins (and, or are short-circuit and compiled inline).
  and: fn(1, many, 'the first empty argument, or the last', (args) => args.find((a) => !truth(a)) ?? args[args.length - 1]),
  or: fn(1, many, 'the first non-empty argument, or the last', (args) => args.find((a) => truth(a)) ?? args[args.length - 1]),
  not: unary('boolean negation of the truth of its argument', (v) => !truth(v)),
  eq: compare('arg1 == arg2 (or any of the following)', (args) => args.slice(1).some((b) => comparable(args[0], b, 'eq') === 0), many),
  ne: compare('arg1 != arg2', (args) => comparable(args[0], args[1], 'eq') !== 0),
  lt: compare('arg1 < arg2', (args) => comparable(args[0], args[1], 'lt') < 0),
  le: compare('arg1 <= arg2', (args) => comparable(args[0], args[1], 'le') <= 0),
  gt: compare('arg1 > arg2', (args) => comparable(args[0], args[1], 'gt') > 0),
  ge: compare('arg1 >= arg2', (args) => comparable(args[0], args[1], 'ge') >= 0),
  len: unary('length of a string (characters), list or map', (v, meter) => {
    if (typeof v === 'string') return chars(v).length
    if (isList(v)) return v.length
    if (isMap(v)) return keysOf(v, meter).length
    return fail(`len of type ${goTypeName(v)}`)
  }),
  index: fn(1, many, 'index x 1 2: x[1][2]; lists by position, maps by key', (args) => args.slice(1).reduce((value: unknown, key) => {
    if (isList(value)) {
      const position = integer(key, 'index')
      if (position < 0 || position >= value.length) return fail(`index out of range: ${position}`)
      return value[position]
    }
    if (isMap(value)) return typeof key === 'string' ? ownValue(value, key).value : fail(`index: map key must be a string, got ${goTypeName(key)}`)
    if (value === null || value === undefined) return fail('index of untyped nil')
    return fail(`can't index item of type ${goTypeName(value)}`)
  }, args[0])),
  slice: fn(1, 3, 'slice x 1 3: x[1:3] of a list or string', (args) => {
    const [value, from, to] = args
    const items = typeof value === 'string' ? chars(value) : isList(value) ? value : fail(`can't slice item of type ${goTypeName(value)}`)
    const start = from === undefined ? 0 : integer(from, 'slice')
    const end = to === undefined ? items.length : integer(to, 'slice')
    if (start < 0 || end > items.length || start > end) fail(`slice: index out of range [${start}:${end}] with length ${items.length}`)
    const part = items.slice(start, end)
    return typeof value === 'string' ? part.join('') : part
  }),
  print: fn(0, many, 'the operands formatted as Go fmt.Sprint', (args, _env, meter) => sprint(args, meter)),
  println: fn(0, many, 'the operands separated by spaces, then a newline', (args, _env, meter) => {
    affordText(args, meter)
    return `${args.map((a) => formatValue(a)).join(' ')}\n`
  }),
  printf: fn(1, many, 'Go fmt.Sprintf (see the verbs in the docs)', (args, _env, meter) => sprintf(text(args[0], meter), args.slice(1), meter)),
  html: fn(1, many, 'HTML-escapes the text of its arguments', (args, _env, meter) => escapeHtml(sprint(args, meter))),
  js: fn(1, many, 'JavaScript-escapes the text of its arguments', (args, _env, meter) => escapeJs(sprint(args, meter))),
  urlquery: fn(1, many, 'query-escapes the text of its arguments', (args, _env, meter) => queryEscape(sprint(args, meter))),

  // Sprig: strings.
  upper: text1('upper case', (s) => s.toUpperCase()),
  lower: text1('lower case', (s) => s.toLowerCase()),
  title: unary('first letter of each word in upper case', (value, meter) => {
    const s = text(value, meter)
    meter.charge(s.length * TITLE_STEPS_PER_CHARACTER)
    return s.replace(/(^|[\s\-_])(\p{L})/gu, (_m, sep: string, c: string) => sep + c.toUpperCase())
  }),
  trim: text1('removes leading and trailing white space', (s) => s.trim()),
  trimAll: fn(2, 2, 'trimAll "$" s: removes the characters given from both ends', (args, _env, meter) => {
    const cut = new Set(chars(text(args[0], meter)))
    const cs = chars(text(args[1], meter))
    let a = 0
    let b = cs.length
    while (a < b && cut.has(cs[a] ?? '')) a++
    while (b > a && cut.has(cs[b - 1] ?? '')) b--
    return cs.slice(a, b).join('')
  }),
  trimPrefix: fn(2, 2, 'trimPrefix "-" s', (args, _env, meter) => {
    const [prefix, s] = [text(args[0], meter), text(args[1], meter)]
    return s.startsWith(prefix) ? s.slice(prefix.length) : s
  }),
  trimSuffix: fn(2, 2, 'trimSuffix "-" s', (args, _env, meter) => {
    const [suffix, s] = [text(args[0], meter), text(args[1], meter)]
    return suffix !== '' && s.endsWith(suffix) ? s.slice(0, -suffix.length) : s
  }),
  trunc: fn(2, 2, 'trunc 5 s: the first 5 characters (negative: the last)', (args, _env, meter) => {
    const n = integer(args[0], 'trunc')
    const cs = chars(text(args[1], meter))
    return (n >= 0 ? cs.slice(0, n) : cs.slice(Math.max(0, cs.length + n))).join('')
  }),
  abbrev: fn(2, 2, 'abbrev 5 s: truncates with "..." to at most 5 characters', (args, _env, meter) => {
    const n = integer(args[0], 'abbrev')
    const cs = chars(text(args[1], meter))
    if (cs.length <= n) return cs.join('')
    return n < 4 ? cs.join('') : `${cs.slice(0, n - 3).join('')}...`
  }),
  substr: fn(3, 3, 'substr 0 5 s: characters 0 to 5', (args, _env, meter) => {
    const cs = chars(text(args[2], meter))
    const start = Math.max(0, integer(args[0], 'substr'))
    const end = integer(args[1], 'substr')
    return cs.slice(start, end < 0 || end > cs.length ? cs.length : end).join('')
  }),
  replace: fn(3, 3, 'replace "old" "new" s: every occurrence', (args, _env, meter) => replace(text(args[0], meter), text(args[1], meter), text(args[2], meter), meter)),
  repeat: fn(2, 2, 'repeat 3 s', (args, _env, meter) => {
    const n = integer(args[0], 'repeat')
    const repeated = text(args[1], meter)
    if (n < 0) fail('repeat: negative count')
    if (n * repeated.length > meter.maxText) fail(`repeat: ${n} × ${repeated.length} characters is too large`)
    return repeated.repeat(n)
  }),
  contains: fn(2, 2, 'contains "needle" s', (args, _env, meter) => text(args[1], meter).includes(text(args[0], meter))),
  hasPrefix: fn(2, 2, 'hasPrefix "pre" s', (args, _env, meter) => text(args[1], meter).startsWith(text(args[0], meter))),
  hasSuffix: fn(2, 2, 'hasSuffix "suf" s', (args, _env, meter) => text(args[1], meter).endsWith(text(args[0], meter))),
  quote: fn(0, many, 'each argument as a JSON string, space-separated', (args, _env, meter) => presentTexts(args, meter).map((a) => JSON.stringify(a)).join(' ')),
  squote: fn(0, many, 'each argument in single quotes, space-separated', (args, _env, meter) => presentTexts(args, meter).map((a) => `'${a}'`).join(' ')),
  cat: fn(0, many, 'the arguments joined with spaces (nil skipped)', (args, _env, meter) => presentTexts(args, meter).join(' ')),
  nospace: text1('removes all white space', (s) => s.replace(/\s+/g, '')),
  indent: fn(2, 2, 'indent 4 s: indents every line', (args, _env, meter) => indent(args[0], text(args[1], meter), 'indent', meter, false)),
  nindent: fn(2, 2, 'nindent 4 s: a newline, then indent', (args, _env, meter) => indent(args[0], text(args[1], meter), 'nindent', meter, true)),
  join: fn(2, 2, 'join ", " list', (args, _env, meter) => join(text(args[0], meter), list(args[1], 'join'), meter)),
  splitList: fn(2, 2, 'splitList "," s: a list of the parts', (args, _env, meter) => text(args[1], meter).split(text(args[0], meter))),
  toString: unary('the value as text', (v, meter) => text(v, meter)),

  // Sprig: lists and maps.
  list: fn(0, many, 'a list of the arguments', (args) => [...args]),
  first: unary('first element of a list (nil when empty)', (v) => list(v, 'first')[0] ?? null),
  last: unary('last element of a list (nil when empty)', (v) => list(v, 'last').at(-1) ?? null),
  rest: unary('all but the first element', (v) => list(v, 'rest').slice(1)),
  initial: unary('all but the last element', (v) => list(v, 'initial').slice(0, -1)),
  append: fn(2, 2, 'append list x: a new list with x at the end', (args) => [...list(args[0], 'append'), args[1]]),
  prepend: fn(2, 2, 'prepend list x: a new list with x at the start', (args) => [args[1], ...list(args[0], 'prepend')]),
  concat: fn(0, many, 'the lists joined into one', (args, _env, meter) => {
    const lists = args.map((a) => list(a, 'concat'))
    meter.charge(lists.reduce((total, l) => total + l.length, 0))
    return lists.flat(1)
  }),
  reverse: unary('a reversed copy of a list', (v) => [...list(v, 'reverse')].reverse()),
  uniq: unary('the list without repeated elements', (v, meter) => uniq(list(v, 'uniq'), meter)),
  compact: unary('the list without empty elements', (v, meter) => {
    const items = list(v, 'compact')
    meter.charge(items.length)
    return items.filter(truth)
  }),
  has: fn(2, 2, 'has x list: whether the list contains x', (args, _env, meter) => has(args[0], list(args[1], 'has'), meter)),
  sortAlpha: unary('the list sorted as text', (v, meter) => sortAlpha(list(v, 'sortAlpha'), meter)),
  dict: fn(0, many, 'dict "k1" v1 "k2" v2: a map', (args, _env, meter) => {
    const entries: Array<[string, unknown]> = []
    for (let i = 0; i < args.length; i += 2) entries.push([text(args[i], meter), args[i + 1] ?? null])
    return newMap(entries)
  }),
  get: fn(2, 2, 'get map "key": the value or ""', (args, _env, meter) => {
    const found = ownValue(map(args[0], 'get'), text(args[1], meter))
    return found.found ? found.value : ''
  }),
  hasKey: fn(2, 2, 'hasKey map "key"', (args, _env, meter) => ownValue(map(args[0], 'hasKey'), text(args[1], meter)).found),
  keys: fn(1, many, 'the sorted keys of the maps', (args, _env, meter) => {
    const keys = [...new Set(args.flatMap((a) => keysOf(map(a, 'keys'), meter)))]
    chargeSort(keys.length, meter)
    return keys.sort(compareText)
  }),
  values: unary('the values of a map, by sorted key', (v, meter) => {
    const m = map(v, 'values')
    const keys = keysOf(m, meter)
    chargeSort(keys.length, meter)
    return keys.sort(compareText).map((k) => m[k])
  }),
  pick: fn(1, many, 'pick map "k1" "k2": a map of only those keys', (args, _env, meter) => {
    const m = map(args[0], 'pick')
    return newMap(args.slice(1).map((k) => text(k, meter)).filter((k) => Object.hasOwn(m, k)).map((k) => [k, m[k]]))
  }),
  omit: fn(1, many, 'omit map "k1": a map without those keys', (args, _env, meter) => {
    const m = map(args[0], 'omit')
    const drop = new Set(args.slice(1).map((k) => text(k, meter)))
    return newMap(keysOf(m, meter).filter((k) => !drop.has(k)).map((k) => [k, m[k]]))
  }),

  // Sprig: defaults and flow.
  default: fn(1, 2, 'default "x" .V: .V, or "x" when .V is empty', (args) => (args.length < 2 || !truth(args[1]) ? args[0] : args[1])),
  empty: unary('whether the value is empty', (v) => !truth(v)),
  coalesce: fn(0, many, 'the first non-empty argument', (args) => args.find(truth) ?? null),
  ternary: fn(3, 3, 'ternary "yes" "no" cond', (args) => (truth(args[2]) ? args[0] : args[1])),
  required: fn(2, 2, 'required "message" .V: fails the render when .V is empty', (args, _env, meter) => (truth(args[1]) ? args[1] : fail(text(args[0], meter)))),
  fail: unary('fails the render with a message', (v, meter) => fail(text(v, meter))),

  // Sprig: encodings.
  toJson: unary('JSON text of the value', (v, meter) => {
    affordText(v, meter)
    return toJsonText(v)
  }),
  toRawJson: unary('JSON text of the value (same as toJson)', (v, meter) => {
    affordText(v, meter)
    return toJsonText(v)
  }),
  toPrettyJson: unary('indented JSON text of the value', (v, meter) => {
    affordText(v, meter, PRETTY_INDENT)
    return toJsonText(v, PRETTY_INDENT)
  }),
  fromJson: text1('the value of a JSON text (nil when invalid)', (s) => {
    try {
      return JSON.parse(s, (_key, value: unknown) => (isMap(value) ? newMap(Object.entries(value)) : value))
    } catch {
      return null
    }
  }, 4),
  b64enc: text1('base64 of the UTF-8 text', (s) => Buffer.from(s, 'utf8').toString('base64')),
  b64dec: text1('text of a base64 string', (s) => Buffer.from(s, 'base64').toString('utf8')),
  sha256sum: text1('hex SHA-256 of the text', (s) => createHash('sha256').update(s, 'utf8').digest('hex'), 4),

  // Sprig: numbers. Integer functions truncate; the *f functions keep decimals (exact, decimal.js).
  add: arithmetic('sum (integer)', true, unmetered((a, b) => a.plus(b)), 1),
  add1: decimal1('x + 1 (integer)', (v) => intResult(decimalOf(v, 'add1').plus(1))),
  sub: arithmetic('difference (integer)', true, unmetered((a, b) => a.minus(b))),
  mul: arithmetic('product (integer)', true, multiplying, 1),
  div: arithmetic('quotient, truncated (integer)', true, unmetered(divide)),
  mod: arithmetic('remainder (integer)', true, unmetered((a, b) => (b.isZero() ? fail('division by zero') : a.trunc().mod(b.trunc())))),
  max: arithmetic('largest (integer)', true, unmetered((a, b) => Decimal.max(a, b)), 1),
  min: arithmetic('smallest (integer)', true, unmetered((a, b) => Decimal.min(a, b)), 1),
  addf: arithmetic('exact sum, as a decimal string', false, unmetered((a, b) => a.plus(b)), 1),
  subf: arithmetic('exact difference, as a decimal string', false, unmetered((a, b) => a.minus(b))),
  mulf: arithmetic('exact product, as a decimal string', false, multiplying, 1),
  divf: arithmetic('quotient, as a decimal string (up to 20 significant digits)', false, unmetered((a, b) => divide(a, b).toSignificantDigits(20))),
  maxf: arithmetic('largest, as a decimal string', false, unmetered((a, b) => Decimal.max(a, b)), 1),
  minf: arithmetic('smallest, as a decimal string', false, unmetered((a, b) => Decimal.min(a, b)), 1),
  floor: decimal1('rounded down, as a decimal string', (v) => decimalOf(v, 'floor').floor().toFixed()),
  ceil: decimal1('rounded up, as a decimal string', (v) => decimalOf(v, 'ceil').ceil().toFixed()),
  round: fn(2, 3, 'round x 2: half up to 2 decimals, as a decimal string', (args, _env, meter) => {
    chargeDecimalText(args, meter)
    const places = integer(args[1], 'round')
    if (places < 0 || places > 20) fail('round: places must be between 0 and 20')
    return decimalOf(args[0], 'round').toDecimalPlaces(places, Decimal.ROUND_HALF_UP).toFixed(places)
  }, PARSING_STEPS),
  atoi: decimal1('the integer a text holds (0 when none)', (v) => {
    const d = asDecimal(v)
    return d === null || !d.isInteger() ? 0 : intResult(d)
  }),
  int: decimal1('the value as an integer (truncated; 0 when not a number)', (v) => {
    const d = asDecimal(v)
    return d === null ? 0 : intResult(d)
  }),
  int64: decimal1('same as int', (v) => {
    const d = asDecimal(v)
    return d === null ? 0 : intResult(d)
  }),
  float64: decimal1('the value as a number (0 when not a number)', (v) => asDecimal(v)?.toNumber() ?? 0),

  // Sprig: dates. Times are Date values, ISO 8601 dates or timestamps (UTC when without an offset); layouts are Go's (2006-01-02).
  now: fn(0, 0, 'the time of the render', (_args, env) => new Date(env.now.getTime())),
  date: fn(2, 2, 'date "2006-01-02" t: the time in UTC with a Go layout ("" for an empty time)', (args, _env, meter) => {
    const t = time(args[1], 'date')
    return t === null ? '' : formatGoTime(t, layoutOf(args[0], meter))
  }, PARSING_STEPS),
  dateInZone: fn(3, 3, 'dateInZone "2006-01-02 15:04" t "America/Bogota"', (args, _env, meter) => {
    const t = time(args[1], 'dateInZone')
    if (t === null) return ''
    const zone = text(args[2], meter)
    const layout = layoutOf(args[0], meter)
    try {
      if (wallClockInRange(t, zone)) return formatGoTime(t, layout, zone)
    } catch (error) {
      // The zone is asked about again only on failure (a render may call this in a loop), so that no other RangeError passes for the zone's.
      return fail(error instanceof RangeError && !isTimeZone(zone) ? `unknown time zone ${zone}` : `dateInZone: ${String(error)}`)
    }
    return fail(`dateInZone: cannot read ${describeValue(args[1])} as a time in ${zone}`)
  }, ZONE_STEPS),
  unixEpoch: unary('seconds since 1970 of a time', (v) => {
    const t = time(v, 'unixEpoch')
    return t === null ? 0 : Math.floor(t.getTime() / 1000)
  }, PARSING_STEPS),

  // Service: values other webhooks' responseQueries stored for the same credit.
  fromWebhook: fn(2, 2, 'fromWebhook "tag" "query": a value stored by that webhook\'s responseQueries for this credit (nil when none)', (args, env, meter) =>
    asGoData(env.fromWebhook(text(args[0], meter), text(args[1], meter)) ?? null, meter)),
}

/** Name → function, with no prototype: only the names above exist. */
export const templateFunctions: ReadonlyMap<string, TemplateFunction> = new Map(Object.entries(builtins))

export const isTemplateFunction = (name: string): boolean => templateFunctions.has(name)

import { createHash } from 'node:crypto'
import { Decimal } from 'decimal.js'
import { formatGoTime } from './goTime.js'
import { sprintf } from './printf.js'
import { asDecimal, formatValue, goTypeName, inDecimalRange, isList, isMap, isTime, kindOf, MAX_DECIMAL_EXPONENT, newMap, ownValue, toJsonText, truth } from './values.js'

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
  call(args: unknown[], env: RenderEnvironment): unknown
  /** Short description for the documentation. */
  doc: string
}

const fail = (message: string): never => {
  throw new FunctionError(message)
}

/** Longest string repeat and indent may build: they check before allocating. */
const MAX_BUILT = 10_000_000

const padding = (count: unknown, name: string): string => {
  const n = Math.max(0, integer(count, name))
  return n > MAX_BUILT ? fail(`${name}: ${n} is too large`) : ' '.repeat(n)
}

const str = (value: unknown): string => (typeof value === 'string' ? value : kindOf(value) === 'nil' ? '' : formatValue(value))
const chars = (value: string): string[] => [...value]

const integer = (value: unknown, name: string): number => {
  const decimal = asDecimal(value)
  if (decimal === null) return fail(`${name}: expected a number, got ${goTypeName(value)}`)
  return decimal.trunc().toNumber()
}

const decimalOf = (value: unknown, name: string): Decimal => {
  if (value === null || value === undefined || value === '') return new Decimal(0)
  return asDecimal(value)
    ?? fail(`${name}: expected a number or a decimal string within 1e±${MAX_DECIMAL_EXPONENT}, got ${goTypeName(value)} ${JSON.stringify(formatValue(value))}`)
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

const time = (value: unknown, name: string): Date | null => {
  if (isTime(value)) return value
  if (value === null || value === undefined || value === '') return null
  if (typeof value === 'number') return new Date(value * 1000)
  if (typeof value === 'string') {
    const parsed = new Date(value)
    if (!Number.isNaN(parsed.getTime())) return parsed
  }
  return fail(`${name}: cannot read ${JSON.stringify(formatValue(value))} as a time`)
}

/** Go's eq/lt operands: numbers and decimal strings compare as numbers; other kinds only with their own kind. */
const comparable = (a: unknown, b: unknown, name: string): number => {
  const ka = kindOf(a)
  const kb = kindOf(b)
  if (ka === 'list' || ka === 'map' || kb === 'list' || kb === 'map') fail(`${name}: non-comparable type ${goTypeName(ka === 'list' || ka === 'map' ? a : b)}`)
  const numericPair = (ka === 'number' || kb === 'number' || name !== 'eq') && asDecimal(a) !== null && asDecimal(b) !== null && !(ka === 'bool' || kb === 'bool')
  if (numericPair) return (asDecimal(a) as Decimal).comparedTo(asDecimal(b) as Decimal)
  if (ka !== kb) {
    if (ka === 'nil' || kb === 'nil') return name === 'eq' ? 1 : fail(`${name}: invalid type for comparison`)
    return fail(`${name}: incompatible types for comparison: ${goTypeName(a)} and ${goTypeName(b)}`)
  }
  if (ka === 'nil') return 0
  if (ka === 'time') return Math.sign((a as Date).getTime() - (b as Date).getTime())
  if (ka === 'bool') return a === b ? 0 : name === 'eq' ? 1 : fail(`${name}: invalid type for comparison: bool`)
  const sa = a as string
  const sb = b as string
  return sa === sb ? 0 : sa < sb ? -1 : 1
}

const escapeHtml = (text: string) => text.replace(/[&<>"'\0]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&#34;', "'": '&#39;', '\0': '\uFFFD' })[c] ?? c)
const escapeJs = (text: string) => text.replace(/[\\'"<>&=\u0000-\u001f]/g, (c) => {
  const named: Record<string, string> = { '\\': '\\\\', "'": "\\'", '"': '\\"', '\n': '\\n', '\r': '\\r', '\t': '\\t' }
  return named[c] ?? `\\u${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`
})
const queryEscape = (text: string) => encodeURIComponent(text).replace(/%20/g, '+').replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)

/** Go's fmt.Sprint: a space between operands when neither is a string. */
const sprint = (args: unknown[]) => args.map((a, i) => {
  const spaced = i > 0 && typeof a !== 'string' && typeof args[i - 1] !== 'string'
  return (spaced ? ' ' : '') + formatValue(a)
}).join('')

const fn = (min: number, max: number, doc: string, call: (args: unknown[], env: RenderEnvironment) => unknown): TemplateFunction => ({ arity: [min, max], call, doc })
const unary = (doc: string, call: (value: unknown) => unknown) => fn(1, 1, doc, (args) => call(args[0]))
const text1 = (doc: string, call: (value: string) => unknown) => unary(doc, (v) => call(str(v)))
const many = Number.POSITIVE_INFINITY

const arithmetic = (doc: string, integerResult: boolean, reduce: (a: Decimal, b: Decimal) => Decimal, min = 2) => fn(min, many, doc, (args) => {
  const [first, ...rest] = args.map((a, i) => decimalOf(a, `argument ${i + 1}`))
  const result = rest.reduce(reduce, first ?? new Decimal(0))
  if (!inDecimalRange(result)) fail(`the result is beyond 1e±${MAX_DECIMAL_EXPONENT}`)
  return integerResult ? intResult(result) : result.toFixed()
})

const divide = (a: Decimal, b: Decimal) => (b.isZero() ? fail('division by zero') : a.div(b))

const builtins: Record<string, TemplateFunction> = {
  // Go's text/template built-ins (and, or are short-circuit and compiled inline).
  and: fn(1, many, 'the first empty argument, or the last', (args) => args.find((a) => !truth(a)) ?? args[args.length - 1]),
  or: fn(1, many, 'the first non-empty argument, or the last', (args) => args.find((a) => truth(a)) ?? args[args.length - 1]),
  not: unary('boolean negation of the truth of its argument', (v) => !truth(v)),
  eq: fn(2, many, 'arg1 == arg2 (or any of the following)', (args) => args.slice(1).some((b) => comparable(args[0], b, 'eq') === 0)),
  ne: fn(2, 2, 'arg1 != arg2', (args) => comparable(args[0], args[1], 'eq') !== 0),
  lt: fn(2, 2, 'arg1 < arg2', (args) => comparable(args[0], args[1], 'lt') < 0),
  le: fn(2, 2, 'arg1 <= arg2', (args) => comparable(args[0], args[1], 'le') <= 0),
  gt: fn(2, 2, 'arg1 > arg2', (args) => comparable(args[0], args[1], 'gt') > 0),
  ge: fn(2, 2, 'arg1 >= arg2', (args) => comparable(args[0], args[1], 'ge') >= 0),
  len: unary('length of a string (characters), list or map', (v) => {
    if (typeof v === 'string') return chars(v).length
    if (isList(v)) return v.length
    if (isMap(v)) return Object.keys(v).length
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
  print: fn(0, many, 'the operands formatted as Go fmt.Sprint', (args) => sprint(args)),
  println: fn(0, many, 'the operands separated by spaces, then a newline', (args) => `${args.map((a) => formatValue(a)).join(' ')}\n`),
  printf: fn(1, many, 'Go fmt.Sprintf (see the verbs in the docs)', (args) => sprintf(str(args[0]), args.slice(1))),
  html: fn(1, many, 'HTML-escapes the text of its arguments', (args) => escapeHtml(sprint(args))),
  js: fn(1, many, 'JavaScript-escapes the text of its arguments', (args) => escapeJs(sprint(args))),
  urlquery: fn(1, many, 'query-escapes the text of its arguments', (args) => queryEscape(sprint(args))),

  // Sprig: strings.
  upper: text1('upper case', (s) => s.toUpperCase()),
  lower: text1('lower case', (s) => s.toLowerCase()),
  title: text1('first letter of each word in upper case', (s) => s.replace(/(^|[\s\-_])(\p{L})/gu, (_m, sep: string, c: string) => sep + c.toUpperCase())),
  trim: text1('removes leading and trailing white space', (s) => s.trim()),
  trimAll: fn(2, 2, 'trimAll "$" s: removes the characters given from both ends', (args) => {
    const cut = new Set(chars(str(args[0])))
    const cs = chars(str(args[1]))
    let a = 0
    let b = cs.length
    while (a < b && cut.has(cs[a] ?? '')) a++
    while (b > a && cut.has(cs[b - 1] ?? '')) b--
    return cs.slice(a, b).join('')
  }),
  trimPrefix: fn(2, 2, 'trimPrefix "-" s', (args) => {
    const [prefix, s] = [str(args[0]), str(args[1])]
    return s.startsWith(prefix) ? s.slice(prefix.length) : s
  }),
  trimSuffix: fn(2, 2, 'trimSuffix "-" s', (args) => {
    const [suffix, s] = [str(args[0]), str(args[1])]
    return suffix !== '' && s.endsWith(suffix) ? s.slice(0, -suffix.length) : s
  }),
  trunc: fn(2, 2, 'trunc 5 s: the first 5 characters (negative: the last)', (args) => {
    const n = integer(args[0], 'trunc')
    const cs = chars(str(args[1]))
    return (n >= 0 ? cs.slice(0, n) : cs.slice(Math.max(0, cs.length + n))).join('')
  }),
  abbrev: fn(2, 2, 'abbrev 5 s: truncates with "..." to at most 5 characters', (args) => {
    const n = integer(args[0], 'abbrev')
    const cs = chars(str(args[1]))
    if (cs.length <= n) return cs.join('')
    return n < 4 ? cs.join('') : `${cs.slice(0, n - 3).join('')}...`
  }),
  substr: fn(3, 3, 'substr 0 5 s: characters 0 to 5', (args) => {
    const cs = chars(str(args[2]))
    const start = Math.max(0, integer(args[0], 'substr'))
    const end = integer(args[1], 'substr')
    return cs.slice(start, end < 0 || end > cs.length ? cs.length : end).join('')
  }),
  replace: fn(3, 3, 'replace "old" "new" s: every occurrence', (args) => str(args[2]).split(str(args[0])).join(str(args[1]))),
  repeat: fn(2, 2, 'repeat 3 s', (args) => {
    const n = integer(args[0], 'repeat')
    const text = str(args[1])
    if (n < 0) fail('repeat: negative count')
    if (n * text.length > MAX_BUILT) fail(`repeat: ${n} × ${text.length} characters is too large`)
    return text.repeat(n)
  }),
  contains: fn(2, 2, 'contains "needle" s', (args) => str(args[1]).includes(str(args[0]))),
  hasPrefix: fn(2, 2, 'hasPrefix "pre" s', (args) => str(args[1]).startsWith(str(args[0]))),
  hasSuffix: fn(2, 2, 'hasSuffix "suf" s', (args) => str(args[1]).endsWith(str(args[0]))),
  quote: fn(0, many, 'each argument as a JSON string, space-separated', (args) => args.filter((a) => a !== null && a !== undefined).map((a) => JSON.stringify(str(a))).join(' ')),
  squote: fn(0, many, 'each argument in single quotes, space-separated', (args) => args.filter((a) => a !== null && a !== undefined).map((a) => `'${str(a)}'`).join(' ')),
  cat: fn(0, many, 'the arguments joined with spaces (nil skipped)', (args) => args.filter((a) => a !== null && a !== undefined).map(str).join(' ')),
  nospace: text1('removes all white space', (s) => s.replace(/\s+/g, '')),
  indent: fn(2, 2, 'indent 4 s: indents every line', (args) => {
    const pad = padding(args[0], 'indent')
    return pad + str(args[1]).replace(/\n/g, `\n${pad}`)
  }),
  nindent: fn(2, 2, 'nindent 4 s: a newline, then indent', (args) => {
    const pad = padding(args[0], 'nindent')
    return `\n${pad}${str(args[1]).replace(/\n/g, `\n${pad}`)}`
  }),
  join: fn(2, 2, 'join ", " list', (args) => list(args[1], 'join').map(str).join(str(args[0]))),
  splitList: fn(2, 2, 'splitList "," s: a list of the parts', (args) => str(args[1]).split(str(args[0]))),
  toString: unary('the value as text', (v) => str(v)),

  // Sprig: lists and maps.
  list: fn(0, many, 'a list of the arguments', (args) => [...args]),
  first: unary('first element of a list (nil when empty)', (v) => list(v, 'first')[0] ?? null),
  last: unary('last element of a list (nil when empty)', (v) => list(v, 'last').at(-1) ?? null),
  rest: unary('all but the first element', (v) => list(v, 'rest').slice(1)),
  initial: unary('all but the last element', (v) => list(v, 'initial').slice(0, -1)),
  append: fn(2, 2, 'append list x: a new list with x at the end', (args) => [...list(args[0], 'append'), args[1]]),
  prepend: fn(2, 2, 'prepend list x: a new list with x at the start', (args) => [args[1], ...list(args[0], 'prepend')]),
  concat: fn(0, many, 'the lists joined into one', (args) => args.flatMap((a) => list(a, 'concat'))),
  reverse: unary('a reversed copy of a list', (v) => [...list(v, 'reverse')].reverse()),
  uniq: unary('the list without repeated elements', (v) => list(v, 'uniq').filter((x, i, all) => all.findIndex((y) => toJsonText(y) === toJsonText(x)) === i)),
  compact: unary('the list without empty elements', (v) => list(v, 'compact').filter(truth)),
  has: fn(2, 2, 'has x list: whether the list contains x', (args) => list(args[1], 'has').some((y) => toJsonText(y) === toJsonText(args[0]))),
  sortAlpha: unary('the list sorted as text', (v) => list(v, 'sortAlpha').map(str).sort()),
  dict: fn(0, many, 'dict "k1" v1 "k2" v2: a map', (args) => {
    const entries: Array<[string, unknown]> = []
    for (let i = 0; i < args.length; i += 2) entries.push([str(args[i]), args[i + 1] ?? null])
    return newMap(entries)
  }),
  get: fn(2, 2, 'get map "key": the value or ""', (args) => {
    const found = ownValue(map(args[0], 'get'), str(args[1]))
    return found.found ? found.value : ''
  }),
  hasKey: fn(2, 2, 'hasKey map "key"', (args) => ownValue(map(args[0], 'hasKey'), str(args[1])).found),
  keys: fn(1, many, 'the sorted keys of the maps', (args) => [...new Set(args.flatMap((a) => Object.keys(map(a, 'keys'))))].sort()),
  values: unary('the values of a map, by sorted key', (v) => {
    const m = map(v, 'values')
    return Object.keys(m).sort().map((k) => m[k])
  }),
  pick: fn(1, many, 'pick map "k1" "k2": a map of only those keys', (args) => {
    const m = map(args[0], 'pick')
    return newMap(args.slice(1).map(str).filter((k) => Object.hasOwn(m, k)).map((k) => [k, m[k]]))
  }),
  omit: fn(1, many, 'omit map "k1": a map without those keys', (args) => {
    const m = map(args[0], 'omit')
    const drop = new Set(args.slice(1).map(str))
    return newMap(Object.keys(m).filter((k) => !drop.has(k)).map((k) => [k, m[k]]))
  }),

  // Sprig: defaults and flow.
  default: fn(1, 2, 'default "x" .V: .V, or "x" when .V is empty', (args) => (args.length < 2 || !truth(args[1]) ? args[0] : args[1])),
  empty: unary('whether the value is empty', (v) => !truth(v)),
  coalesce: fn(0, many, 'the first non-empty argument', (args) => args.find(truth) ?? null),
  ternary: fn(3, 3, 'ternary "yes" "no" cond', (args) => (truth(args[2]) ? args[0] : args[1])),
  required: fn(2, 2, 'required "message" .V: fails the render when .V is empty', (args) => (truth(args[1]) ? args[1] : fail(str(args[0])))),
  fail: unary('fails the render with a message', (v) => fail(str(v))),

  // Sprig: encodings.
  toJson: unary('JSON text of the value', (v) => toJsonText(v)),
  toRawJson: unary('JSON text of the value (same as toJson)', (v) => toJsonText(v)),
  toPrettyJson: unary('indented JSON text of the value', (v) => toJsonText(v, 2)),
  fromJson: text1('the value of a JSON text (nil when invalid)', (s) => {
    try {
      return JSON.parse(s, (_key, value: unknown) => (isMap(value) ? newMap(Object.entries(value)) : value))
    } catch {
      return null
    }
  }),
  b64enc: text1('base64 of the UTF-8 text', (s) => Buffer.from(s, 'utf8').toString('base64')),
  b64dec: text1('text of a base64 string', (s) => Buffer.from(s, 'base64').toString('utf8')),
  sha256sum: text1('hex SHA-256 of the text', (s) => createHash('sha256').update(s, 'utf8').digest('hex')),

  // Sprig: numbers. Integer functions truncate; the *f functions keep decimals (exact, decimal.js).
  add: arithmetic('sum (integer)', true, (a, b) => a.plus(b), 1),
  add1: unary('x + 1 (integer)', (v) => intResult(decimalOf(v, 'add1').plus(1))),
  sub: arithmetic('difference (integer)', true, (a, b) => a.minus(b)),
  mul: arithmetic('product (integer)', true, (a, b) => a.times(b), 1),
  div: arithmetic('quotient, truncated (integer)', true, divide),
  mod: arithmetic('remainder (integer)', true, (a, b) => (b.isZero() ? fail('division by zero') : a.trunc().mod(b.trunc()))),
  max: arithmetic('largest (integer)', true, (a, b) => Decimal.max(a, b), 1),
  min: arithmetic('smallest (integer)', true, (a, b) => Decimal.min(a, b), 1),
  addf: arithmetic('exact sum, as a decimal string', false, (a, b) => a.plus(b), 1),
  subf: arithmetic('exact difference, as a decimal string', false, (a, b) => a.minus(b)),
  mulf: arithmetic('exact product, as a decimal string', false, (a, b) => a.times(b), 1),
  divf: arithmetic('quotient, as a decimal string (up to 20 significant digits)', false, (a, b) => divide(a, b).toSignificantDigits(20)),
  maxf: arithmetic('largest, as a decimal string', false, (a, b) => Decimal.max(a, b), 1),
  minf: arithmetic('smallest, as a decimal string', false, (a, b) => Decimal.min(a, b), 1),
  floor: unary('rounded down, as a decimal string', (v) => decimalOf(v, 'floor').floor().toFixed()),
  ceil: unary('rounded up, as a decimal string', (v) => decimalOf(v, 'ceil').ceil().toFixed()),
  round: fn(2, 3, 'round x 2: half up to 2 decimals, as a decimal string', (args) => {
    const places = integer(args[1], 'round')
    if (places < 0 || places > 20) fail('round: places must be between 0 and 20')
    return decimalOf(args[0], 'round').toDecimalPlaces(places, Decimal.ROUND_HALF_UP).toFixed(places)
  }),
  atoi: unary('the integer a text holds (0 when none)', (v) => {
    const d = asDecimal(v)
    return d === null || !d.isInteger() ? 0 : intResult(d)
  }),
  int: unary('the value as an integer (truncated; 0 when not a number)', (v) => {
    const d = asDecimal(v)
    return d === null ? 0 : intResult(d)
  }),
  int64: unary('same as int', (v) => {
    const d = asDecimal(v)
    return d === null ? 0 : intResult(d)
  }),
  float64: unary('the value as a number (0 when not a number)', (v) => asDecimal(v)?.toNumber() ?? 0),

  // Sprig: dates. Times are Date values or ISO 8601 strings; layouts are Go's (2006-01-02).
  now: fn(0, 0, 'the time of the render', (_args, env) => new Date(env.now.getTime())),
  date: fn(2, 2, 'date "2006-01-02" t: the time in UTC with a Go layout ("" for an empty time)', (args) => {
    const t = time(args[1], 'date')
    return t === null ? '' : formatGoTime(t, str(args[0]))
  }),
  dateInZone: fn(3, 3, 'dateInZone "2006-01-02 15:04" t "America/Bogota"', (args) => {
    const t = time(args[1], 'dateInZone')
    if (t === null) return ''
    try {
      return formatGoTime(t, str(args[0]), str(args[2]))
    } catch (error) {
      return fail(error instanceof RangeError ? `unknown time zone ${str(args[2])}` : String(error))
    }
  }),
  unixEpoch: unary('seconds since 1970 of a time', (v) => {
    const t = time(v, 'unixEpoch')
    return t === null ? 0 : Math.floor(t.getTime() / 1000)
  }),

  // Service: values other webhooks' responseQueries stored for the same credit.
  fromWebhook: fn(2, 2, 'fromWebhook "tag" "query": a value stored by that webhook\'s responseQueries for this credit (nil when none)', (args, env) =>
    env.fromWebhook(str(args[0]), str(args[1])) ?? null),
}

/** Name → function, with no prototype: only the names above exist. */
export const templateFunctions: ReadonlyMap<string, TemplateFunction> = new Map(Object.entries(builtins))

export const isTemplateFunction = (name: string): boolean => templateFunctions.has(name)


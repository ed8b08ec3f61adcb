import { Decimal } from 'decimal.js'
import { asDecimal, formatValue, goTypeName, kindOf, textLength, type Meter } from './values.js'

/**
 * Go's fmt.Sprintf for template values: verbs v s q d f F e E g G t x X o b c
 * T and %%, flags `- + # 0 space`, width and precision. Decimal strings
 * (money) format exactly with the numeric verbs. Mistakes print as Go does:
 * `%!d(string=abc)`, `%!d(MISSING)`, `%!(EXTRA int=3)`.
 */
interface Spec {
  minus: boolean
  plus: boolean
  sharp: boolean
  zero: boolean
  space: boolean
  width: number | null
  precision: number | null
  verb: string
}

const bad = (spec: Spec, arg: unknown) => `%!${spec.verb}(${goTypeName(arg)}=${formatValue(arg)})`

const pad = (text: string, spec: Spec, numeric: boolean): string => {
  if (spec.width === null || text.length >= spec.width) return text
  const fill = spec.width - text.length
  if (spec.minus) return text + ' '.repeat(fill)
  if (spec.zero && numeric) {
    const sign = /^[+\- ]/.test(text) ? text[0] ?? '' : ''
    return sign + '0'.repeat(fill) + text.slice(sign.length)
  }
  return ' '.repeat(fill) + text
}

const signed = (text: string, negative: boolean, spec: Spec): string => {
  if (negative) return `-${text}`
  if (spec.plus) return `+${text}`
  if (spec.space) return ` ${text}`
  return text
}

/** Go prints exponents with at least two digits: 1.5e+03. */
const goExponent = (text: string): string => text.replace(/e([+-])(\d)$/, 'e$10$2')

const formatFloat = (value: Decimal, spec: Spec): string => {
  const magnitude = value.abs()
  const negative = value.isNegative() && !value.isZero()
  let text: string
  switch (spec.verb) {
    case 'f':
    case 'F':
      text = magnitude.toFixed(spec.precision ?? 6)
      break
    case 'e':
    case 'E':
      text = goExponent(magnitude.toExponential(spec.precision ?? 6))
      break
    default: {
      text = spec.precision === null
        ? magnitude.toString()
        : magnitude.toSignificantDigits(Math.max(spec.precision, 1)).toString()
      if (text.includes('e')) text = goExponent(text)
    }
  }
  if (spec.verb === 'E' || spec.verb === 'G') text = text.toUpperCase()
  return signed(text, negative, spec)
}

const formatInteger = (value: Decimal, spec: Spec): string => {
  const negative = value.isNegative() && !value.isZero()
  const magnitude = BigInt(value.abs().toFixed(0))
  const radix = { d: 10, x: 16, X: 16, o: 8, b: 2 }[spec.verb] ?? 10
  let text = magnitude.toString(radix)
  if (spec.verb === 'X') text = text.toUpperCase()
  if (spec.sharp && spec.verb === 'x') text = `0x${text}`
  if (spec.sharp && spec.verb === 'X') text = `0X${text}`
  if (spec.sharp && spec.verb === 'o') text = `0${text}`
  if (spec.precision !== null) text = text.padStart(spec.precision, '0')
  return signed(text, negative, spec)
}

const hexOfText = (text: string, upper: boolean) => {
  const hex = Buffer.from(text, 'utf8').toString('hex')
  return upper ? hex.toUpperCase() : hex
}

const formatOne = (spec: Spec, arg: unknown): string => {
  const kind = kindOf(arg)
  const decimal = asDecimal(arg)
  switch (spec.verb) {
    case 'v':
      return pad(spec.sharp ? JSON.stringify(arg ?? null) : formatValue(arg), spec, false)
    case 's': {
      const text = formatValue(arg)
      return pad(spec.precision === null ? text : [...text].slice(0, spec.precision).join(''), spec, false)
    }
    case 'q':
      if (kind !== 'string') return bad(spec, arg)
      return pad(JSON.stringify(arg), spec, false)
    case 't':
      return kind === 'bool' ? pad(String(arg), spec, false) : bad(spec, arg)
    case 'T':
      return pad(goTypeName(arg), spec, false)
    case 'c':
      return typeof arg === 'number' && Number.isInteger(arg) && arg >= 0 && arg <= 0x10ffff ? pad(String.fromCodePoint(arg), spec, false) : bad(spec, arg)
    case 'd':
    case 'o':
    case 'b':
      return decimal !== null && decimal.isInteger() && kind !== 'bool' ? pad(formatInteger(decimal, spec), spec, true) : bad(spec, arg)
    case 'x':
    case 'X':
      if (kind === 'string' && decimal === null) return pad(hexOfText(arg as string, spec.verb === 'X'), spec, false)
      return decimal !== null && decimal.isInteger() ? pad(formatInteger(decimal, spec), spec, true) : bad(spec, arg)
    case 'f':
    case 'F':
    case 'e':
    case 'E':
    case 'g':
    case 'G':
      return decimal !== null ? pad(formatFloat(decimal, spec), spec, true) : bad(spec, arg)
    default:
      return `%!${spec.verb}(${goTypeName(arg)}=${formatValue(arg)})`
  }
}

/** Widths and precisions beyond this are refused, so a format cannot allocate without bound. */
const MAX_WIDTH = 1000

const SPEC = /%([-+# 0]*)(\d+)?(?:\.(\d*))?([a-zA-Z%])?/y

/** Steps a verb costs: formatting a number parses it as a decimal, which costs several steps. */
const VERB_STEPS = 4

/**
 * The arguments are measured (and paid for) before anything is formatted, and
 * the text is checked as it grows: widths, precisions and a long format are
 * each bounded, but not their product.
 */
export const sprintf = (format: string, args: readonly unknown[], meter: Meter): string => {
  if (textLength(args, meter, meter.maxText) > meter.maxText) meter.refuse('value too large')
  let out = ''
  let next = 0
  let i = 0
  while (i < format.length) {
    if (out.length > meter.maxText) meter.refuse('value too large')
    const percent = format.indexOf('%', i)
    if (percent < 0) {
      out += format.slice(i)
      break
    }
    out += format.slice(i, percent)
    SPEC.lastIndex = percent
    const match = SPEC.exec(format)
    const flags = match?.[1] ?? ''
    const verb = match?.[4]
    i = SPEC.lastIndex
    if (verb === undefined) {
      out += '%!(NOVERB)'
      continue
    }
    if (verb === '%') {
      out += '%'
      continue
    }
    meter.charge(VERB_STEPS)
    const spec: Spec = {
      minus: flags.includes('-'), plus: flags.includes('+'), sharp: flags.includes('#'), zero: flags.includes('0'), space: flags.includes(' '),
      width: match?.[2] === undefined ? null : Number(match[2]),
      precision: match?.[3] === undefined ? null : Number(match[3] === '' ? 0 : match[3]),
      verb,
    }
    if ((spec.width ?? 0) > MAX_WIDTH || (spec.precision ?? 0) > MAX_WIDTH) {
      out += '%!(BADWIDTH)'
      next++
      continue
    }
    if (next >= args.length) {
      out += `%!${verb}(MISSING)`
      continue
    }
    out += formatOne(spec, args[next++])
  }
  if (next < args.length) {
    out += `%!(EXTRA ${args.slice(next).map((a) => `${goTypeName(a)}=${formatValue(a)}`).join(', ')})`
  }
  return out
}

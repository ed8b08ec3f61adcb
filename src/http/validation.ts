import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv'
import formats from 'ajv-formats'
import type { FastifySchemaCompiler } from 'fastify'
import { LAST_YEAR } from '../shared/amortization.js'

const common: Options = { allErrors: true, removeAdditional: false, useDefaults: true, strict: false }

/** ajv-formats' own full RFC 3339 check, before ours replaces the format. */
const isRfc3339DateTime = formats.default(new Ajv()).compile<string>({ type: 'string', format: 'date-time' })

/**
 * RFC 3339 allows a leap second (23:59:60), which a JavaScript Date cannot
 * hold, and an offset that moves 9999-12-31 into the year 10000 in UTC (or
 * 0000-01-01 into year -1), which `toISOString` writes as `+010000-…`: text
 * that sorts below every real time. Either would pass the schema and fail,
 * or compare wrongly, deeper in.
 */
const isUsableDateTime = (text: string): boolean => {
  if (!isRfc3339DateTime(text)) return false
  const time = Date.parse(text)
  if (!Number.isFinite(time)) return false
  const year = new Date(time).getUTCFullYear()
  return year >= 0 && year <= LAST_YEAR
}

const withFormats = (ajv: Ajv): Ajv => {
  formats.default(ajv)
  ajv.addFormat('date-time', { type: 'string', validate: isUsableDateTime })
  return ajv
}

const bounds = { integer: Number.MAX_SAFE_INTEGER, number: Number.MAX_VALUE } as const
type NumericType = keyof typeof bounds

const numericTypeOf = (type: unknown): NumericType | null => {
  const types: unknown[] = Array.isArray(type) ? type : [type]
  if (types.includes('integer')) return 'integer'
  return types.includes('number') ? 'number' : null
}

/** Keywords holding data, not schemas; and keywords holding schemas by a name that may itself be a keyword (a field called `default`). */
const VALUES = new Set(['const', 'default', 'enum', 'examples'])
const SCHEMAS_BY_NAME = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'])

/**
 * A copy of a schema whose numbers are finite and whose integers are safe.
 * Query text "1e999" coerces to Infinity, and so does a JSON body's 1e999;
 * ajv's number and integer checks accept Infinity, which would then pass a
 * lone `minimum` and break whatever counts with it. Bounds a schema already
 * has are kept.
 */
export const withFiniteNumbers = (schema: unknown): unknown => {
  if (Array.isArray(schema)) return schema.map(withFiniteNumbers)
  if (typeof schema !== 'object' || schema === null) return schema
  const copy: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(schema)) {
    if (VALUES.has(key)) copy[key] = value
    else if (SCHEMAS_BY_NAME.has(key) && typeof value === 'object' && value !== null) {
      copy[key] = Object.fromEntries(Object.entries(value).map(([name, inner]) => [name, withFiniteNumbers(inner)]))
    } else copy[key] = withFiniteNumbers(value)
  }
  const numeric = numericTypeOf(copy['type'])
  if (numeric !== null) {
    if (copy['maximum'] === undefined && copy['exclusiveMaximum'] === undefined) copy['maximum'] = bounds[numeric]
    if (copy['minimum'] === undefined && copy['exclusiveMinimum'] === undefined) copy['minimum'] = -bounds[numeric]
  }
  return copy
}

/**
 * Request validation with one ajv per part of the request. Query strings,
 * path parameters and headers are text, so their values are coerced to the
 * declared types (and a lone value to an array). Bodies are JSON and are
 * never coerced: a JSON number where the schema wants a decimal string is an
 * error, not a silently rounded amount. A oneOf tagged by a property (POST
 * /exports `type`) checks only the branch its tag names.
 */
const compilers = {
  body: withFormats(new Ajv({ ...common, coerceTypes: false, discriminator: true })),
  text: withFormats(new Ajv({ ...common, coerceTypes: 'array' })),
}

/** A number as text: digits, an optional fraction and exponent. */
const DECIMAL_TEXT = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/

/** An integer as text: digits alone, signed as a number may be (`1e2`, `1.` and `1.0` are numbers written as decimals, not integers). */
const INTEGER_TEXT = /^[+-]?\d+$/

const textPatterns: Record<NumericType, RegExp> = { integer: INTEGER_TEXT, number: DECIMAL_TEXT }

/** The top-level properties of a text part's schema that hold a number (or a list of numbers), with the type named. */
const numericProperties = (schema: object): Array<[string, NumericType]> => {
  const properties: unknown = 'properties' in schema ? schema.properties : undefined
  if (typeof properties !== 'object' || properties === null) return []
  return Object.entries(properties).flatMap(([name, property]): Array<[string, NumericType]> => {
    if (typeof property !== 'object' || property === null) return []
    const items: unknown = 'items' in property ? property.items : undefined
    const numeric = numericTypeOf('type' in property ? property.type : undefined)
      ?? (typeof items === 'object' && items !== null && 'type' in items ? numericTypeOf(items.type) : null)
      ?? numericChoice('anyOf' in property ? property.anyOf : undefined)
    return numeric === null ? [] : [[name, numeric]]
  })
}

/** A choice of numbers (`Type.Union([Type.Literal(1), Type.Literal(2)])`): integers when every choice is a whole number. */
const numericChoice = (choices: unknown): NumericType | null => {
  if (!Array.isArray(choices) || choices.length === 0) return null
  const values = choices.map((choice: unknown) => (typeof choice === 'object' && choice !== null && 'const' in choice ? choice.const : undefined))
  if (!values.every((value) => typeof value === 'number')) return null
  return values.every((value) => Number.isInteger(value)) ? 'integer' : 'number'
}

type TextValidator = ReturnType<FastifySchemaCompiler<object>>

/**
 * ajv coerces any text JavaScript's `Number` reads: " " to 0, "0x10" to 16,
 * and takes "1e2" and "1." as integers. A text part's numbers must be written
 * as decimals, and its integers as digits alone, or the value is refused as
 * the wrong type, as ajv refuses "abc".
 */
const withDecimalText = (validate: ValidateFunction, numeric: ReadonlyArray<[string, NumericType]>): TextValidator => {
  const checked: TextValidator = (data: unknown) => {
    const misspelt: ErrorObject[] = typeof data !== 'object' || data === null ? [] : numeric.flatMap(([name, type]): ErrorObject[] => {
      const value: unknown = Object.getOwnPropertyDescriptor(data, name)?.value
      const texts: unknown[] = Array.isArray(value) ? value : [value]
      return texts.some((text) => typeof text === 'string' && !textPatterns[type].test(text))
        ? [{ instancePath: `/${name}`, schemaPath: `#/properties/${name}/type`, keyword: 'type', params: { type }, message: `must be ${type}` }]
        : []
    })
    if (misspelt.length > 0) {
      checked.errors = misspelt
      return false
    }
    const valid = validate(data)
    checked.errors = validate.errors ?? null
    return valid
  }
  return checked
}

export const validatorCompiler: FastifySchemaCompiler<object> = ({ schema, httpPart }) => {
  if (httpPart === 'body') return compilers.body.compile(withFiniteNumbers(schema) as object)
  const validate = compilers.text.compile(withFiniteNumbers(schema) as object)
  const numeric = numericProperties(schema)
  return numeric.length === 0 ? validate : withDecimalText(validate, numeric)
}

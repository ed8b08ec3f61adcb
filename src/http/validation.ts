import { Ajv, type Options } from 'ajv'
import formats from 'ajv-formats'
import type { FastifySchemaCompiler } from 'fastify'

const common: Options = { allErrors: true, removeAdditional: false, useDefaults: true, strict: false }

const withFormats = (ajv: Ajv): Ajv => {
  formats.default(ajv)
  return ajv
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

export const validatorCompiler: FastifySchemaCompiler<object> = ({ schema, httpPart }) =>
  (httpPart === 'body' ? compilers.body : compilers.text).compile(schema)

// fastify's own response-serializer factory (a dependency of fastify, which builds its default from it).
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler'
import type { FastifySchemaCompiler } from 'fastify'
import { validatorCompiler } from './validation.js'

/**
 * The app's schema compilers, each compiling a schema the first time the process sees its JSON text and handing
 * out the same function for it after. Many routes share schemas (the error envelopes of every route, page
 * queries, ids), and compiling them is most of an app's start: about a second without this, half with it; a test
 * process, which builds an app per test, compiles each schema once. These wrap the service's own compilers (ajv
 * through validation.ts, fastify's default fast-json-stringify factory). Both kinds of function are pure (a
 * validator sets its `errors` and the caller reads them at once, synchronously), so an app sees no trace of another.
 */
type Validator = ReturnType<FastifySchemaCompiler<object>>
const validators = new Map<string, Validator>()

export const sharedValidatorCompiler: FastifySchemaCompiler<object> = (route) => {
  // validatorCompiler reads only the schema and the part of the request it is for.
  const key = JSON.stringify([route.httpPart, route.schema])
  let validate = validators.get(key)
  if (validate === undefined) {
    validate = validatorCompiler(route)
    validators.set(key, validate)
  }
  return validate
}

type SerializerFactory = ReturnType<typeof SerializerSelector>
type Serializer = ReturnType<ReturnType<SerializerFactory>>
const serializers = new Map<string, Serializer>()
const defaultSerializerFactory = SerializerSelector()

/** fastify's default factory: it reads the shared schemas, the serializer options and the route's schema, nothing else. */
export const sharedSerializerFactory: SerializerFactory = (externalSchemas, options) => {
  const compile = defaultSerializerFactory(externalSchemas, options)
  const context = JSON.stringify([externalSchemas, options])
  return (route) => {
    const key = `${context}\n${JSON.stringify(route.schema)}`
    let serialize = serializers.get(key)
    if (serialize === undefined) {
      serialize = compile(route)
      serializers.set(key, serialize)
    }
    return serialize
  }
}

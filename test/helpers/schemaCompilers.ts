// fastify's own response-serializer factory (a dependency of fastify, which builds its default from it).
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler'
import type { FastifySchemaCompiler } from 'fastify'
import type { BuildAppOptions } from '../../src/http/app.js'
import { validatorCompiler } from '../../src/http/validation.js'

/**
 * Compilers for the apps a test process builds (buildApp's test seam). Compiling the route schemas is most of
 * an app's start, about a second, and a test file builds an app per test from the same schemas. These compile
 * with the service's own compilers, the first time a schema is seen in the process, and hand later apps the same
 * functions for a schema of the same JSON text. Both kinds of function are pure (a validator sets its `errors`
 * and the caller reads them at once, synchronously), so an app sees no trace of another.
 */
type Validator = ReturnType<FastifySchemaCompiler<object>>
const validators = new Map<string, Validator>()

const sharedValidatorCompiler: FastifySchemaCompiler<object> = (route) => {
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
const sharedSerializerFactory: SerializerFactory = (externalSchemas, options) => {
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

export const sharedSchemaCompilers: BuildAppOptions = {
  validatorCompiler: sharedValidatorCompiler,
  schemaController: { compilersFactory: { buildSerializer: sharedSerializerFactory } },
}

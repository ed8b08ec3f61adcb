import type { FastifyInstance, RouteOptions } from 'fastify'
import fp from 'fastify-plugin'
import { failures } from '../schemas.js'

type ResponseSchemas = Record<string, unknown>

const isJson = (mediaType: string) => mediaType === 'application/json' || mediaType.endsWith('+json')

/** An error answer of a route that produces files or events is still the JSON envelope: said so per media type. */
const asJsonContent = (schema: unknown): unknown => {
  const description = typeof schema === 'object' && schema !== null && 'description' in schema ? schema.description : undefined
  return { ...(typeof description === 'string' ? { description } : {}), content: { 'application/json': { schema } } }
}

/**
 * What every route answers besides the failures it lists itself, added to its
 * OpenAPI description when it is declared: 400 when it takes path parameters
 * (a malformed id), 404 for a legacy route (after its sunset); and on a route
 * whose `produces` is not JSON (a CSV file, an event stream), each failure
 * under `application/json`, the type the envelope is sent with.
 */
export const documentedFailuresPlugin = fp(async (app: FastifyInstance) => {
  app.addHook('onRoute', (route: RouteOptions) => {
    const schema = route.schema
    if (schema?.response === undefined || typeof schema.response !== 'object' || schema.response === null) return
    const response: ResponseSchemas = { ...schema.response }
    const implied = [...(schema.params === undefined ? [] : [400]), ...(route.config?.legacy === undefined ? [] : [404])]
    for (const [code, failure] of Object.entries(failures(...implied))) if (!(code in response)) response[code] = failure
    const produces = schema.produces ?? []
    if (produces.length > 0 && !produces.some(isJson)) {
      for (const [code, failure] of Object.entries(response)) if (Number(code) >= 400) response[code] = asJsonContent(failure)
    }
    route.schema = { ...schema, response }
  })
})

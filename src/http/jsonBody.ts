import type { FastifyInstance, FastifyRequest } from 'fastify'
import { AppError } from '../shared/errors.js'
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../shared/jsonDepth.js'

type ParsedBody = (error: Error | null, value?: unknown) => void

/** fastify's own JSON parser (`__proto__` and `constructor.prototype` refused), refusing bodies nested deeper than MAX_JSON_DEPTH too. */
export const depthLimitedJsonParser = (app: FastifyInstance) => {
  const parse = app.getDefaultJsonParser('error', 'error')
  return (request: FastifyRequest, body: string | Buffer, done: ParsedBody): void => {
    parse(request, typeof body === 'string' ? body : body.toString('utf8'), (error, value: unknown) => {
      if (error !== null) done(error)
      else if (nestsDeeperThan(value, MAX_JSON_DEPTH)) done(new AppError('BAD_REQUEST', `the JSON body nests deeper than ${MAX_JSON_DEPTH} levels`))
      else done(null, value)
    })
  }
}

/** Replaces the application/json parser of `app` (and its children) with the depth-limited one. */
export const limitJsonDepth = (app: FastifyInstance): void => {
  const parse = depthLimitedJsonParser(app)
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'string' }, parse)
}

import { errorCodes, type FastifyInstance, type FastifyRequest } from 'fastify'
import { AppError } from '../shared/errors.js'
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../shared/jsonDepth.js'
import { illFormedText } from '../shared/text.js'

type ParsedBody = (error: Error | null, value?: unknown) => void

/** Text decoded from UTF-8 holds no half surrogate pair: only a `\uD800`–`\uDFFF` escape can put one in the parsed value. */
const surrogateEscape = /\\u[dD][89a-fA-F]/

/** fastify's own JSON parser (`__proto__` and `constructor.prototype` refused), refusing bodies nested deeper than MAX_JSON_DEPTH or holding ill-formed text too. */
export const depthLimitedJsonParser = (app: FastifyInstance) => {
  const parse = app.getDefaultJsonParser('error', 'error')
  return (request: FastifyRequest, body: string | Buffer, done: ParsedBody): void => {
    const text = typeof body === 'string' ? body : body.toString('utf8')
    parse(request, text, (error, value: unknown) => {
      if (error !== null) done(error)
      else if (nestsDeeperThan(value, MAX_JSON_DEPTH)) done(new AppError('BAD_REQUEST', `the JSON body nests deeper than ${MAX_JSON_DEPTH} levels`))
      else if (surrogateEscape.test(text) && illFormedText(value) !== null) done(new AppError('BAD_REQUEST', 'the JSON body holds half a UTF-16 surrogate pair (an escape such as \\ud800 alone), which is not text'))
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

/**
 * fastify parses text/plain bodies by default (into a string), so a JSON body sent as text/plain reached the route's
 * schema and answered 400 `body must be object`, while every other type no parser takes answers 415. No route takes
 * text: the OAuth routes add their own form parser, the upload routes take any type as bytes in their own scope, and
 * the export routes answer BIND_ERROR to any type but JSON. So text/plain answers 415 UNSUPPORTED_MEDIA_TYPE like
 * the others, unless it is empty: a POST without a body (`approve`, `unlock`…) that a browser's fetch labels
 * text/plain goes through, as it did.
 */
export const refuseTextBodies = (app: FastifyInstance): void => {
  app.removeContentTypeParser('text/plain')
  app.addContentTypeParser('text/plain', { parseAs: 'string' }, (_request, body, done) => {
    if (body === '') return done(null, undefined)
    // fastify's own error for a type no parser takes, so every handler answers it as it answers the others.
    done(new errorCodes.FST_ERR_CTP_INVALID_MEDIA_TYPE(), undefined)
  })
}

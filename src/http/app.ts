import { randomUUID } from 'node:crypto'
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Services } from '../services.js'
import { answerClientError } from './clientErrors.js'
import { limitJsonDepth, refuseTextBodies } from './jsonBody.js'
import { authPlugin } from './plugins/auth.js'
import { answerError, registerErrorHandling } from './plugins/errors.js'
import { documentedFailuresPlugin } from './plugins/documentedFailures.js'
import { openapiPlugin } from './plugins/openapi.js'
import { organizationPlugin } from './plugins/organization.js'
import { rootMetadataRoutes } from './oauth.js'
import { requestLoggerFactory } from './requestLogger.js'
import { StreamCounts } from './exportStream.js'
import { routePlugins } from './routes.js'
import { sharedSerializerFactory, sharedValidatorCompiler } from './schemaCompilers.js'
import { ErrorEnvelope, FailEnvelope } from './schemas.js'

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/
const MAX_PATH_PARAMETER = 256

/**
 * Node checks request deadlines on an interval (30 s by default), so a short
 * REQUEST_TIMEOUT_MS needs a shorter one. And Node 20 enforces none of the
 * request's deadline while its headers timeout (60 s by default) is longer
 * than it: fastify sets the request timeout after the server is made, past
 * Node's own check of the pair, so the headers timeout is bounded here.
 */
const deadlineOptions = (requestTimeoutMs: number) => requestTimeoutMs === 0 ? {} : {
  connectionsCheckingInterval: Math.max(100, Math.min(30_000, Math.floor(requestTimeoutMs / 4))),
  headersTimeout: Math.min(60_000, requestTimeoutMs),
}

/** The fastify application: plugins, error envelope, OpenAPI, and every route family under /v1. */
export const buildApp = async (services: Services): Promise<FastifyInstance> => {
  const logger: FastifyBaseLogger = services.logger
  const app = Fastify({
    loggerInstance: logger,
    childLoggerFactory: requestLoggerFactory,
    bodyLimit: services.config.bodyLimit,
    requestTimeout: services.config.requestTimeoutMs,
    http: deadlineOptions(services.config.requestTimeoutMs),
    clientErrorHandler: answerClientError,
    requestIdHeader: false,
    genReqId: (request) => {
      const given = request.headers['x-request-id']
      return typeof given === 'string' && SAFE_REQUEST_ID.test(given) ? given : randomUUID()
    },
    return503OnClosing: true,
    // The longest parameter a route takes is a 128-character file id; the router refuses longer ones before any schema sees them.
    routerOptions: { maxParamLength: MAX_PATH_PARAMETER },
    frameworkErrors: answerError,
    schemaController: { compilersFactory: { buildSerializer: sharedSerializerFactory } },
  }).withTypeProvider<TypeBoxTypeProvider>()

  app.setValidatorCompiler(sharedValidatorCompiler)
  app.decorate('exportStreams', new StreamCounts(services.config.exportsSseMaxStreamsPerPrincipal))
  limitJsonDepth(app)
  refuseTextBodies(app)
  app.addSchema(FailEnvelope)
  app.addSchema(ErrorEnvelope)
  registerErrorHandling(app)
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id)
    done()
  })
  // Long-lived streams (SSE) end when the server starts closing, so in-flight requests can drain.
  app.addHook('preClose', async () => services.hub.close())

  await app.register(openapiPlugin, { services })
  await app.register(documentedFailuresPlugin)
  await app.register(authPlugin, { services })
  await app.register(organizationPlugin, { services })
  await app.register(async (v1) => {
    for (const plugin of routePlugins) await v1.register(plugin, { services })
  }, { prefix: '/v1' })
  await app.register(rootMetadataRoutes, { services })
  return app
}

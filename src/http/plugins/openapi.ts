import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import type { Services } from '../../services.js'
import { baseUrl } from '../../shared/config.js'
import { scopeCatalogue } from '../../shared/permissions.js'

/** The OpenAPI 3.1 document generated from the route schemas, at /v1/openapi.json, and its UI at /docs. */
export const openapiPlugin = fp(async (app: FastifyInstance, options: { services: Services }) => {
  const issuer = baseUrl(options.services.config)
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Credit management service',
        version: '1.0.0',
        description: 'Event-sourced credit-management backend. Every 4xx answers `{status:"fail", data:{code, message, ...}}`; ' +
          'every 5xx `{status:"error", message}`. Money is a decimal string. Besides the answers each operation lists: any ' +
          'request that records a change may answer 409 `CONCURRENCY_CONFLICT` when its resource changed concurrently more ' +
          'often than the service\'s retries absorb (nothing was changed; repeat it), and any path may answer 400 ' +
          '`BAD_REQUEST` (a percent-escape that does not decode) or 414 `URI_TOO_LONG` (a path parameter over 256 characters).',
      },
      servers: [{ url: issuer }],
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
          oauth2: {
            type: 'oauth2',
            flows: {
              clientCredentials: { tokenUrl: `${issuer}/v1/oauth/token`, scopes: { ...scopeCatalogue } },
              password: { tokenUrl: `${issuer}/v1/oauth/token`, scopes: { ...scopeCatalogue } },
            },
          },
        },
      },
      security: [{ bearer: [] }],
    },
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json['$id'] === 'string' ? json['$id'] : `Schema${i}`),
    },
    transform: ({ schema, url, route }) => {
      if (route.config?.auth === 'public') return { schema: { ...schema, security: [] }, url }
      return { schema, url }
    },
  })
  await app.register(swaggerUi, { routePrefix: '/docs' })
  app.get('/v1/openapi.json', { config: { auth: 'public' }, schema: { hide: true } }, async () => app.swagger())
})

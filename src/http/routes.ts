import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { Services } from '../services.js'
import { administrationRoutes } from './administration.js'
import { healthRoutes } from './health.js'
import { meRoutes } from './me.js'
import { oauthRoutes } from './oauth.js'
import { roleTemplateRoutes } from './roleTemplates.js'
import { scoringModelRoutes } from './scoringModels.js'
import { taxRoutes } from './taxes.js'
import { creditLimitRoutes } from './creditLimits.js'

/** Every resource family, each an encapsulated plugin mounted under /v1. */
export const routePlugins: ReadonlyArray<FastifyPluginAsyncTypebox<{ services: Services }>> = [
  healthRoutes,
  oauthRoutes,
  administrationRoutes,
  meRoutes,
  roleTemplateRoutes,
  scoringModelRoutes,
  taxRoutes,
  creditLimitRoutes,
]

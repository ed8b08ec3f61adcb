import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { Services } from '../services.js'
import { administrationRoutes } from './administration.js'
import { clientRoutes } from './clients.js'
import { healthRoutes } from './health.js'
import { meRoutes } from './me.js'
import { userRoutes } from './users.js'
import { oauthRoutes } from './oauth.js'
import { roleTemplateRoutes } from './roleTemplates.js'
import { webhookRoutes } from './webhooks.js'
import { webhookTestRoutes } from './webhookTest.js'
import { exportRoutes } from './exports.js'
import { legacyExportRoutes } from './exportsLegacy.js'
import { cityRoutes } from './cities.js'
import { profileRoutes } from './profiles.js'
import { profileFileRoutes } from './profileFiles.js'
import { signatureRoutes } from './signatures.js'
import { creditLineRoutes } from './creditLines.js'
import { productRoutes } from './products.js'
import { creditRoutes } from './credits.js'
import { payableRoutes } from './payables.js'
import { payoffRoutes } from './payoff.js'
import { scoringModelRoutes } from './scoringModels.js'
import { taxRoutes } from './taxes.js'
import { creditLimitRoutes } from './creditLimits.js'
import { webhookDeliveryRoutes } from './webhookDeliveries.js'

/** Every resource family, each an encapsulated plugin mounted under /v1. */
export const routePlugins: ReadonlyArray<FastifyPluginAsyncTypebox<{ services: Services }>> = [
  healthRoutes,
  oauthRoutes,
  administrationRoutes,
  userRoutes,
  clientRoutes,
  meRoutes,
  roleTemplateRoutes,
  webhookRoutes,
  webhookTestRoutes,
  exportRoutes,
  legacyExportRoutes,
  cityRoutes,
  profileRoutes,
  profileFileRoutes,
  signatureRoutes,
  creditLineRoutes,
  productRoutes,
  creditRoutes,
  payableRoutes,
  payoffRoutes,
  scoringModelRoutes,
  taxRoutes,
  creditLimitRoutes,
  webhookDeliveryRoutes,
]

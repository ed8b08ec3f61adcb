import { membershipsProjection } from './memberships.js'
import { organizationsProjection } from './organizations.js'
import { principalsProjection } from './principals.js'
import type { Projection } from './projection.js'
import { roleTemplatesProjection } from './roleTemplates.js'
import { creditLinesProjection } from './creditLines.js'
import { creditsProjection } from './credits.js'
import { paymentOrdersProjection } from './paymentOrders.js'

/** Every read model of the service. */
export const allProjections: readonly Projection[] = [
  organizationsProjection,
  principalsProjection,
  membershipsProjection,
  roleTemplatesProjection,
  creditLinesProjection,
  creditsProjection,
  paymentOrdersProjection,
]

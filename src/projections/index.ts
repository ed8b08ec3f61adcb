import { membershipsProjection } from './memberships.js'
import { organizationsProjection } from './organizations.js'
import { principalsProjection } from './principals.js'
import type { Projection } from './projection.js'
import { roleTemplatesProjection } from './roleTemplates.js'
import { scoringModelsProjection } from './scoringModels.js'
import { taxesProjection } from './taxes.js'
import { creditLimitsProjection } from './creditLimits.js'

/** Every read model of the service. */
export const allProjections: readonly Projection[] = [
  organizationsProjection,
  principalsProjection,
  membershipsProjection,
  roleTemplatesProjection,
  scoringModelsProjection,
  taxesProjection,
  creditLimitsProjection,
]

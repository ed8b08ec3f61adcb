import { membershipsProjection } from './memberships.js'
import { organizationsProjection } from './organizations.js'
import { principalsProjection } from './principals.js'
import type { Projection } from './projection.js'
import { roleTemplatesProjection } from './roleTemplates.js'
import { webhooksProjection } from './webhooks.js'
import { webhookSendsProjection } from './webhookSends.js'
import { exportJobsProjection } from './exports.js'
import { exportBlobsProjection } from './exportBlobs.js'
import { legacyExportUsageProjection } from './legacyExportUsage.js'
import { profilesProjection } from './profiles.js'
import { signaturesProjection } from './signatures.js'
import { signatureAuditProjection } from './signatureAudit.js'
import { creditLinesProjection } from './creditLines.js'
import { creditsProjection } from './credits.js'
import { paymentOrdersProjection } from './paymentOrders.js'
import { scoringModelsProjection } from './scoringModels.js'
import { taxesProjection } from './taxes.js'
import { creditLimitsProjection } from './creditLimits.js'
import { webhookResponseValuesProjection } from './webhookResponseValues.js'
import { creditMovementsProjection } from './creditMovements.js'
import { pendingRegistrationsProjection } from './pendingRegistrations.js'

/** Every read model of the service. */
export const allProjections: readonly Projection[] = [
  organizationsProjection,
  principalsProjection,
  membershipsProjection,
  roleTemplatesProjection,
  webhooksProjection,
  webhookSendsProjection,
  exportJobsProjection,
  exportBlobsProjection,
  legacyExportUsageProjection,
  profilesProjection,
  signaturesProjection,
  signatureAuditProjection,
  creditLinesProjection,
  creditsProjection,
  paymentOrdersProjection,
  scoringModelsProjection,
  taxesProjection,
  creditLimitsProjection,
  webhookResponseValuesProjection,
  creditMovementsProjection,
  pendingRegistrationsProjection,
]

import { membershipQueries } from './memberships.js'
import { organizationQueries } from './organizations.js'
import { principalQueries } from './principals.js'
import type { ReadStore } from './readStore.js'
import { roleTemplateQueries } from './roleTemplates.js'
import { webhookQueries } from './webhooks.js'
import { webhookSendQueries } from './webhookSends.js'
import { exportJobQueries } from './exports.js'
import { exportBlobQueries } from './exportBlobs.js'
import { legacyExportUsageQueries } from './legacyExportUsage.js'
import { profileQueries } from './profiles.js'
import { signatureQueries } from './signatures.js'
import { signatureAuditQueries } from './signatureAudit.js'
import { creditLineQueries } from './creditLines.js'
import { creditQueries } from './credits.js'
import { paymentOrderQueries } from './paymentOrders.js'
import { scoringModelQueries } from './scoringModels.js'
import { taxQueries } from './taxes.js'
import { creditLimitQueries } from './creditLimits.js'
import { webhookResponseValueQueries } from './webhookResponseValues.js'
import { creditMovementQueries } from './creditMovements.js'
import { pendingRegistrationQueries } from './pendingRegistrations.js'

/** Every query function the HTTP layer and the process managers may call, bound to the read store. */
export const createQueries = (store: ReadStore) => ({
  organizations: organizationQueries(store),
  principals: principalQueries(store),
  memberships: membershipQueries(store),
  roleTemplates: roleTemplateQueries(store),
  webhooks: webhookQueries(store),
  webhookSends: webhookSendQueries(store),
  exportJobs: exportJobQueries(store),
  exportBlobs: exportBlobQueries(store),
  legacyExportUsage: legacyExportUsageQueries(store),
  profiles: profileQueries(store),
  signatures: signatureQueries(store),
  signatureAudit: signatureAuditQueries(store),
  creditLines: creditLineQueries(store),
  credits: creditQueries(store),
  paymentOrders: paymentOrderQueries(store),
  scoringModels: scoringModelQueries(store),
  taxes: taxQueries(store),
  creditLimits: creditLimitQueries(store),
  webhookResponseValues: webhookResponseValueQueries(store),
  creditMovements: creditMovementQueries(store),
  pendingRegistrations: pendingRegistrationQueries(store),
})

export type Queries = ReturnType<typeof createQueries>

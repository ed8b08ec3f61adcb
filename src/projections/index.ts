import { membershipsProjection } from './memberships.js'
import { organizationsProjection } from './organizations.js'
import { principalsProjection } from './principals.js'
import type { Projection } from './projection.js'
import { roleTemplatesProjection } from './roleTemplates.js'
import { profilesProjection } from './profiles.js'
import { signaturesProjection } from './signatures.js'
import { signatureAuditProjection } from './signatureAudit.js'

/** Every read model of the service. */
export const allProjections: readonly Projection[] = [
  organizationsProjection,
  principalsProjection,
  membershipsProjection,
  roleTemplatesProjection,
  profilesProjection,
  signaturesProjection,
  signatureAuditProjection,
]

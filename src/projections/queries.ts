import { membershipQueries } from './memberships.js'
import { organizationQueries } from './organizations.js'
import { principalQueries } from './principals.js'
import type { ReadStore } from './readStore.js'
import { roleTemplateQueries } from './roleTemplates.js'
import { profileQueries } from './profiles.js'
import { signatureQueries } from './signatures.js'
import { signatureAuditQueries } from './signatureAudit.js'

/** Every query function the HTTP layer and the process managers may call, bound to the read store. */
export const createQueries = (store: ReadStore) => ({
  organizations: organizationQueries(store),
  principals: principalQueries(store),
  memberships: membershipQueries(store),
  roleTemplates: roleTemplateQueries(store),
  profiles: profileQueries(store),
  signatures: signatureQueries(store),
  signatureAudit: signatureAuditQueries(store),
})

export type Queries = ReturnType<typeof createQueries>

import { membershipQueries } from './memberships.js'
import { organizationQueries } from './organizations.js'
import { principalQueries } from './principals.js'
import type { ReadStore } from './readStore.js'
import { roleTemplateQueries } from './roleTemplates.js'
import { scoringModelQueries } from './scoringModels.js'
import { taxQueries } from './taxes.js'
import { creditLimitQueries } from './creditLimits.js'

/** Every query function the HTTP layer and the process managers may call, bound to the read store. */
export const createQueries = (store: ReadStore) => ({
  organizations: organizationQueries(store),
  principals: principalQueries(store),
  memberships: membershipQueries(store),
  roleTemplates: roleTemplateQueries(store),
  scoringModels: scoringModelQueries(store),
  taxes: taxQueries(store),
  creditLimits: creditLimitQueries(store),
})

export type Queries = ReturnType<typeof createQueries>

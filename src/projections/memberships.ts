import { applyAt, defineProjection, updateAt } from './projection.js'
import { readsOf, type ReadStore } from './readStore.js'

export interface MembershipDoc {
  _id: string
  _position?: number
  organizationId: string
  principalId: string
  principalType: 'user' | 'client'
  roleTemplateId: string
  active: boolean
}

const collection = { name: 'memberships', indexes: [{ principalId: 1 }, { organizationId: 1 }, { roleTemplateId: 1 }] } as const

export const membershipsProjection = defineProjection({
  name: 'memberships',
  handles: ['MembershipGranted', 'MembershipRoleChanged'],
  collections: [collection],
  async project(store, event, position) {
    const docs = store.collection<MembershipDoc>(collection)
    switch (event.type) {
      case 'MembershipGranted':
        return applyAt(docs, event.data.membershipId, position, () => ({
          _id: event.data.membershipId, organizationId: event.data.organizationId, principalId: event.data.principalId,
          principalType: event.data.principalType, roleTemplateId: event.data.roleTemplateId, active: true,
        }))
      case 'MembershipRoleChanged':
        return updateAt(docs, event.data.membershipId, position, (doc) => ({ ...doc, roleTemplateId: event.data.roleTemplateId }))
      default: {
        const _never: never = event
        return _never
      }
    }
  },
})

export const membershipQueries = (store: ReadStore) => {
  const docs = store.collection<MembershipDoc>(collection)
  // Looked up by every request acting in an organization: answered without a promise where the store can.
  const reads = readsOf(docs)
  return {
    of: (principalId: string, organizationId: string) => reads.findOne({ principalId, organizationId, active: true }),
    /** The active memberships in the organization of each of these principals, by principal: one query for a page of members. */
    activeOf: async (principalIds: readonly string[], organizationId: string): Promise<ReadonlyMap<string, MembershipDoc>> => {
      if (principalIds.length === 0) return new Map()
      const found = await docs.find({ principalId: { $in: [...principalIds] }, organizationId, active: true })
      return new Map(found.map((membership) => [membership.principalId, membership]))
    },
    organizationsOf: async (principalId: string) =>
      (await docs.find({ principalId, active: true })).map((m) => m.organizationId),
    countUsing: (roleTemplateId: string) => docs.count({ roleTemplateId, active: true }),
  }
}

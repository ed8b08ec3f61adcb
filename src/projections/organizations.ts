import { defineProjection, updateAt, applyAt } from './projection.js'
import { readsOf, type ReadStore } from './readStore.js'

export interface OrganizationDoc {
  _id: string
  _position?: number
  name: string
  defaultConfigId: string
  active: boolean
  /** Why and when a platform administrator deactivated it; null while active. */
  deactivationReason: string | null
  deactivatedAt: string | null
  createdAt: string
  updatedAt: string
}

const collection = { name: 'organizations', indexes: [{ name: 1 }, { createdAt: 1, _id: 1 }] } as const

export const organizationsProjection = defineProjection({
  name: 'organizations',
  version: 2,
  handles: ['OrganizationCreated', 'OrganizationRenamed', 'OrganizationDeactivated', 'OrganizationActivated'],
  collections: [collection],
  async project(store, event, position) {
    const docs = store.collection<OrganizationDoc>(collection)
    const at = event.metadata.occurredAt
    switch (event.type) {
      case 'OrganizationCreated':
        return applyAt(docs, event.data.organizationId, position, () => ({
          _id: event.data.organizationId, name: event.data.name, defaultConfigId: event.data.defaultConfigId,
          active: true, deactivationReason: null, deactivatedAt: null, createdAt: event.data.createdAt, updatedAt: event.data.createdAt,
        }))
      case 'OrganizationRenamed':
        return updateAt(docs, event.data.organizationId, position, (doc) => ({ ...doc, name: event.data.name, updatedAt: at }))
      case 'OrganizationDeactivated':
        return updateAt(docs, event.data.organizationId, position, (doc) => ({ ...doc, active: false, deactivationReason: event.data.reason, deactivatedAt: at, updatedAt: at }))
      case 'OrganizationActivated':
        return updateAt(docs, event.data.organizationId, position, (doc) => ({ ...doc, active: true, deactivationReason: null, deactivatedAt: null, updatedAt: at }))
      default: {
        const _never: never = event
        return _never
      }
    }
  },
})

export const organizationQueries = (store: ReadStore) => {
  const docs = store.collection<OrganizationDoc>(collection)
  // Looked up by every request acting in an organization: answered without a promise where the store can.
  const reads = readsOf(docs)
  return {
    get: (id: string) => reads.get(id),
    list: async (page: { offset: number; limit: number }, ids?: readonly string[]) => {
      const filter = ids === undefined ? {} : { _id: { $in: [...ids] } }
      const [items, total] = await Promise.all([
        docs.find(filter, { sort: { createdAt: 1, _id: 1 }, skip: page.offset, limit: page.limit }),
        docs.count(filter),
      ])
      return { items, total }
    },
  }
}

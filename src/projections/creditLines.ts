import { keptChanges, keptConfiguration, type CreditLineConfiguration } from '../events/creditLine.js'
import { applyAt, defineProjection, updateAt } from './projection.js'
import type { Filter, ReadStore } from './readStore.js'

/** A credit line with its whole configuration: serves the three product shapes and GET /credit-lines. */
export interface CreditLineDoc extends CreditLineConfiguration {
  _id: string
  _position?: number
  organizationId: string
  /** False while its organization is deactivated: the public marketplace leaves the line out. */
  organizationActive: boolean
  createdAt: string
  updatedAt: string
}

/** The organizations this projection saw deactivated, with their state: a line recorded after a deactivation it raced starts hidden. */
interface OrganizationStateDoc {
  _id: string
  _position?: number
  active: boolean
}

const organizationStates = { name: 'credit_line_organizations' } as const

const collection = {
  name: 'credit_lines',
  // The marketplace's order leads with its two booleans. An index led by `active` alone (`{active, currency}` before
  // version 3) was taken by SQLite, which has no statistics, over the organization's for an organization's active lines.
  indexes: [{ organizationId: 1 }, { jurisdictionCode: 1 }, { organizationId: 1, createdAt: 1, _id: 1 }, { organizationActive: 1, active: 1, createdAt: 1, _id: 1 }],
} as const

export const creditLinesProjection = defineProjection({
  name: 'creditLines',
  // 3: the same documents; the rebuild drops the superseded `{active, currency}` index from persistent stores.
  // 4: fields an update recorded outside the configuration (an `organizationId` among them) are not applied.
  version: 4,
  handles: ['CreditLineCreated', 'CreditLineUpdated', 'OrganizationDeactivated', 'OrganizationActivated'],
  collections: [collection, organizationStates],
  async project(store, event, position) {
    const docs = store.collection<CreditLineDoc>(collection)
    const states = store.collection<OrganizationStateDoc>(organizationStates)
    switch (event.type) {
      case 'CreditLineCreated': {
        // The route checked the organization before the command, so a deactivation can land between the two.
        const organizationActive = (await states.get(event.data.organizationId))?.active ?? true
        return applyAt(docs, event.data.creditLineId, position, () => ({
          _id: event.data.creditLineId, organizationId: event.data.organizationId, ...keptConfiguration(event.data.configuration), organizationActive,
          createdAt: event.data.createdAt, updatedAt: event.data.createdAt,
        }))
      }
      case 'CreditLineUpdated':
        return updateAt(docs, event.data.creditLineId, position, (doc) => ({ ...doc, ...keptChanges(event.data.changes), updatedAt: event.data.updatedAt }))
      case 'OrganizationDeactivated':
      case 'OrganizationActivated': {
        const organizationActive = event.type === 'OrganizationActivated'
        await applyAt(states, event.data.organizationId, position, () => ({ _id: event.data.organizationId, active: organizationActive }))
        for (const line of await docs.find({ organizationId: event.data.organizationId })) {
          await updateAt(docs, line._id, position, (doc) => ({ ...doc, organizationActive }))
        }
        return
      }
      default: {
        const _never: never = event
        return _never
      }
    }
  },
})

export interface CreditLineListQuery {
  /** Omitted: every active organization (the public marketplace). */
  organizationId?: string
  active?: boolean
  currency?: string
  jurisdictionCode?: string
  offset: number
  limit: number
}

export const creditLineQueries = (store: ReadStore) => {
  const docs = store.collection<CreditLineDoc>(collection)
  return {
    /** A line by id, whatever its organization (webhook firing, the marketplace). */
    get: (id: string) => docs.get(id),
    /** A line of one organization; another organization's line is null. */
    getIn: async (organizationId: string, id: string) => {
      const doc = await docs.get(id)
      return doc !== null && doc.organizationId === organizationId ? doc : null
    },
    list: async (query: CreditLineListQuery) => {
      const filter: Filter = {}
      if (query.organizationId !== undefined) filter['organizationId'] = query.organizationId
      else filter['organizationActive'] = true
      if (query.active !== undefined) filter['active'] = query.active
      if (query.currency !== undefined) filter['currency'] = query.currency
      if (query.jurisdictionCode !== undefined) filter['jurisdictionCode'] = query.jurisdictionCode
      const [items, total] = await Promise.all([
        docs.find(filter, { sort: { createdAt: 1, _id: 1 }, skip: query.offset, limit: query.limit }),
        docs.count(filter),
      ])
      return { items, total }
    },
    /** Lines of an organization, for exports: streamed in no particular order. */
    stream: (organizationId: string, filter: Filter = {}) => docs.stream({ ...filter, organizationId }),
  }
}

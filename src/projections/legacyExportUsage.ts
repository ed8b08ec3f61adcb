import { applyAt, defineProjection } from './projection.js'
import type { Filter, ReadStore } from './readStore.js'

/** Calls of one legacy export route by one organization. */
export interface LegacyExportUsageDoc {
  _id: string
  _position?: number
  organizationId: string
  route: string
  calls: number
  callsAfterSunset: number
  firstCalledAt: string
  lastCalledAt: string
}

const collection = { name: 'legacy_export_usage', indexes: [{ organizationId: 1 }] } as const

export const legacyExportUsageProjection = defineProjection({
  name: 'legacyExportUsage',
  handles: ['LegacyExportRouteCalled'],
  collections: [collection],
  async project(store, event, position) {
    const { organizationId, route, afterSunset, calledAt } = event.data
    const id = `${organizationId} ${route}`
    await applyAt(store.collection<LegacyExportUsageDoc>(collection), id, position, (doc) => ({
      _id: id, organizationId, route,
      calls: (doc?.calls ?? 0) + 1,
      callsAfterSunset: (doc?.callsAfterSunset ?? 0) + (afterSunset ? 1 : 0),
      firstCalledAt: doc?.firstCalledAt ?? calledAt,
      lastCalledAt: calledAt,
    }))
  },
})

export const legacyExportUsageQueries = (store: ReadStore) => {
  const docs = store.collection<LegacyExportUsageDoc>(collection)
  return {
    list: async (query: { organizationId?: string; offset: number; limit: number }) => {
      const filter: Filter = query.organizationId === undefined ? {} : { organizationId: query.organizationId }
      const [items, total] = await Promise.all([
        docs.find(filter, { sort: { lastCalledAt: -1, _id: 1 }, skip: query.offset, limit: query.limit }),
        docs.count(filter),
      ])
      return { items, total }
    },
  }
}

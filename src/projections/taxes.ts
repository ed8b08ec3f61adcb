import type { TaxBase, TaxFields, TaxType, TaxRate } from '../events/tax.js'
import { whenReady, type Maybe } from '../shared/maybe.js'
import { applyAt, defineProjection, updateAt } from './projection.js'
import { readsOf, type ReadStore } from './readStore.js'

export interface TaxDoc extends TaxFields {
  _id: string
  _position?: number
  organizationId: string
  isActive: boolean
  /** TaxApplied events counted so far. */
  usageCount: number
  createdAt: string
  updatedAt: string
}

const collection = { name: 'taxes', indexes: [{ organizationId: 1 }] } as const

export const taxesProjection = defineProjection({
  name: 'taxes',
  handles: ['TaxCreated', 'TaxUpdated', 'TaxActivated', 'TaxDeactivated', 'TaxApplied'],
  collections: [collection],
  async project(store, event, position) {
    const docs = store.collection<TaxDoc>(collection)
    switch (event.type) {
      case 'TaxCreated': {
        const { taxId, createdAt, idempotency: _idempotency, ...fields } = event.data
        return applyAt(docs, taxId, position, () => ({ _id: taxId, ...fields, usageCount: 0, createdAt, updatedAt: createdAt }))
      }
      case 'TaxUpdated':
        return updateAt(docs, event.data.taxId, position, (doc) => ({ ...doc, ...event.data.changes, updatedAt: event.data.updatedAt }))
      case 'TaxActivated':
      case 'TaxDeactivated':
        return updateAt(docs, event.data.taxId, position, (doc) => ({ ...doc, isActive: event.type === 'TaxActivated', updatedAt: event.data.at }))
      case 'TaxApplied':
        return updateAt(docs, event.data.taxId, position, (doc) => ({ ...doc, usageCount: doc.usageCount + 1 }))
      default: {
        const _never: never = event
        return _never
      }
    }
  },
})

/** By creation time, then id (ISO times and UUIDs are ASCII, so this is the store's byte order too). */
const oldestFirst = (a: TaxDoc, b: TaxDoc): number =>
  a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a._id < b._id ? -1 : a._id > b._id ? 1 : 0

export interface TaxListQuery {
  organizationId: string
  isActive?: boolean
  type?: TaxType
}

export const taxQueries = (store: ReadStore) => {
  const docs = store.collection<TaxDoc>(collection)
  const reads = readsOf(docs)
  return {
    get: async (organizationId: string, id: string) => {
      const doc = await docs.get(id)
      return doc !== null && doc.organizationId === organizationId ? doc : null
    },
    /**
     * An organization's taxes, oldest first; an organization configures a handful, so the list is not paged.
     * Fetched by the indexed organization alone and narrowed and ordered here: a read on every guarded list request,
     * and a plain comparison costs less than the store's general filter and sort.
     */
    list: (query: TaxListQuery): Maybe<TaxDoc[]> => {
      const { isActive, type } = query
      return whenReady(reads.find({ organizationId: query.organizationId }), (all) =>
        all.filter((doc) => (isActive === undefined || doc.isActive === isActive) && (type === undefined || doc.type === type)).sort(oldestFirst))
    },
    /** The active taxes that apply to a kind of base: the input of the taxation rule (src/commands/taxation.ts). */
    activeFor: (organizationId: string, appliesTo: TaxBase) => docs.find({ organizationId, isActive: true, appliesTo }, { sort: { createdAt: 1, _id: 1 } }),
    /** The active taxes on any of these kinds of base, as the taxation rule takes them (passed in a command, like `now`). */
    ratesFor: async (organizationId: string, kinds: readonly TaxBase[]): Promise<TaxRate[]> =>
      (await docs.find({ organizationId, isActive: true, appliesTo: { $in: [...kinds] } }, { sort: { createdAt: 1, _id: 1 } })).map((doc) => ({
        taxId: doc._id, organizationId: doc.organizationId, name: doc.name, type: doc.type, isActive: doc.isActive, percentage: doc.percentage,
        appliesTo: doc.appliesTo, minimumAmount: doc.minimumAmount,
      })),
  }
}

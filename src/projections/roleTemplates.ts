import { applyAt, defineProjection, updateAt } from './projection.js'
import { readsOf, type Filter, type ReadStore } from './readStore.js'
import { whenReady } from '../shared/maybe.js'

export interface RoleTemplateDoc {
  _id: string
  _position?: number
  organizationId: string
  name: string
  description: string
  permissions: string[]
  isDefault: boolean
  usageCount: number
  createdAt: string
  updatedAt: string
}

const collection = { name: 'role_templates', indexes: [{ organizationId: 1, createdAt: 1, _id: 1 }] } as const

export const roleTemplatesProjection = defineProjection({
  name: 'roleTemplates',
  handles: ['RoleTemplateCreated', 'RoleTemplateUpdated', 'RoleTemplateAssigned', 'RoleTemplateUnassigned', 'RoleTemplateDeleted'],
  collections: [collection],
  async project(store, event, position) {
    const docs = store.collection<RoleTemplateDoc>(collection)
    switch (event.type) {
      case 'RoleTemplateCreated':
        return applyAt(docs, event.data.roleTemplateId, position, () => ({
          _id: event.data.roleTemplateId, organizationId: event.data.organizationId, name: event.data.name,
          description: event.data.description, permissions: event.data.permissions, isDefault: event.data.isDefault,
          usageCount: 0, createdAt: event.data.createdAt, updatedAt: event.data.createdAt,
        }))
      case 'RoleTemplateUpdated': {
        const { name, description, permissions, isDefault, updatedAt } = event.data
        return updateAt(docs, event.data.roleTemplateId, position, (doc) => ({
          ...doc,
          name: name ?? doc.name,
          description: description ?? doc.description,
          permissions: permissions ?? doc.permissions,
          isDefault: isDefault ?? doc.isDefault,
          updatedAt,
        }))
      }
      // A membership starting or stopping to use the template changes its usage, not the template: updated_at stays.
      case 'RoleTemplateAssigned':
        return updateAt(docs, event.data.roleTemplateId, position, (doc) => ({ ...doc, usageCount: doc.usageCount + 1 }))
      case 'RoleTemplateUnassigned':
        return updateAt(docs, event.data.roleTemplateId, position, (doc) => ({ ...doc, usageCount: Math.max(0, doc.usageCount - 1) }))
      case 'RoleTemplateDeleted':
        return applyAt(docs, event.data.roleTemplateId, position, () => null)
      default: {
        const _never: never = event
        return _never
      }
    }
  },
})

const escapeRegex = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

export interface RoleTemplateListQuery {
  organizationId: string
  search?: string
  isDefault?: boolean
  offset: number
  limit: number
}

export const roleTemplateQueries = (store: ReadStore) => {
  const docs = store.collection<RoleTemplateDoc>(collection)
  // Looked up by every request acting in an organization: answered without a promise where the store can.
  const reads = readsOf(docs)
  return {
    get: (organizationId: string, id: string) =>
      whenReady(reads.get(id), (doc) => (doc !== null && doc.organizationId === organizationId ? doc : null)),
    list: async (query: RoleTemplateListQuery) => {
      const filter: Filter = { organizationId: query.organizationId }
      if (query.isDefault !== undefined) filter['isDefault'] = query.isDefault
      if (query.search !== undefined && query.search !== '') {
        const pattern = { $regex: escapeRegex(query.search), $options: 'i' }
        filter['$or'] = [{ name: pattern }, { description: pattern }]
      }
      const total = await docs.count(filter)
      // A page past the end is empty without asking the store to skip an arbitrarily large count.
      const items = query.offset >= total ? [] : await docs.find(filter, { sort: { createdAt: 1, _id: 1 }, skip: query.offset, limit: query.limit })
      return { items, total }
    },
  }
}

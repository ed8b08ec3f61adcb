import type { WebhookConfiguration } from '../events/webhook.js'
import { applyAt, defineProjection, updateAt } from './projection.js'
import type { Filter, ReadStore } from './readStore.js'

export interface WebhookDoc {
  _id: string
  _position?: number
  organizationId: string
  /** The signing secret stays sealed here; the API shows only whether there is one. */
  configuration: WebhookConfiguration
  archived: boolean
  createdAt: string
  updatedAt: string
  archivedAt: string | null
  /** Present (true) while its sends render `.Credit.Score` empty; absent otherwise, as in every document before the field. */
  scoresHidden?: true
}

const collection = { name: 'webhooks', indexes: [{ organizationId: 1, createdAt: 1, _id: 1 }] } as const

export const webhooksProjection = defineProjection({
  name: 'webhooks',
  handles: ['WebhookCreated', 'WebhookUpdated', 'WebhookArchived'],
  collections: [collection],
  async project(store, event, position) {
    const docs = store.collection<WebhookDoc>(collection)
    switch (event.type) {
      case 'WebhookCreated':
        return applyAt(docs, event.data.webhookId, position, () => ({
          _id: event.data.webhookId, organizationId: event.data.organizationId, configuration: event.data.configuration,
          archived: false, createdAt: event.data.createdAt, updatedAt: event.data.createdAt, archivedAt: null,
          ...(event.data.scoresHidden === true ? { scoresHidden: true as const } : {}),
        }))
      case 'WebhookUpdated':
        return updateAt(docs, event.data.webhookId, position, (doc) => {
          const { scoresHidden: _scoresHidden, ...rest } = doc
          const hidden = event.data.scoresHidden ?? doc.scoresHidden === true
          return {
            ...rest, configuration: { ...doc.configuration, ...event.data.changes }, updatedAt: event.data.updatedAt,
            ...(hidden ? { scoresHidden: true as const } : {}),
          }
        })
      case 'WebhookArchived':
        return updateAt(docs, event.data.webhookId, position, (doc) => ({
          ...doc, archived: true, archivedAt: event.data.archivedAt, updatedAt: event.data.archivedAt,
        }))
      default: {
        const _never: never = event
        return _never
      }
    }
  },
})

export interface WebhookListQuery {
  organizationId: string
  includeArchived: boolean
  tag?: string
  offset: number
  limit: number
}

export const webhookQueries = (store: ReadStore) => {
  const docs = store.collection<WebhookDoc>(collection)
  return {
    /** A webhook whatever its organization (the firing checks it against the trigger's). */
    getAny: (id: string) => docs.get(id),
    get: async (organizationId: string, id: string) => {
      const doc = await docs.get(id)
      return doc !== null && doc.organizationId === organizationId ? doc : null
    },
    list: async (query: WebhookListQuery) => {
      const filter: Filter = { organizationId: query.organizationId }
      if (!query.includeArchived) filter['archived'] = false
      if (query.tag !== undefined) filter['configuration.tag'] = query.tag
      const [items, total] = await Promise.all([
        docs.find(filter, { sort: { createdAt: 1, _id: 1 }, skip: query.offset, limit: query.limit }),
        docs.count(filter),
      ])
      return { items, total }
    },
  }
}

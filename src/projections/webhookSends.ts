import type { WebhookSendCompleted, WebhookSendStarted } from '../events/webhookSend.js'
import { applyAt, defineProjection, updateAt } from './projection.js'
import type { Filter, ReadStore } from './readStore.js'

/** One send as the log endpoints show it: its start, then its outcome. */
export type WebhookSendDoc = Omit<WebhookSendStarted['data'], 'sendId'>
  & Pick<WebhookSendCompleted['data'], 'response' | 'auth' | 'error' | 'responseQueryResults' | 'responseQueryResultsCut'>
  & {
    _id: string
    _position?: number
    status: 'started' | 'delivered' | 'failed' | 'unknown'
    durationMs: number | null
    completedAt: string | null
  }

type Outcome = Pick<WebhookSendDoc, 'status' | 'request' | 'response' | 'auth' | 'error' | 'responseQueryResults' | 'responseQueryResultsCut' | 'durationMs' | 'completedAt'>

/** A send's document with its outcome, written out field by field (why: see `orderDoc` in paymentOrders.ts). */
const withOutcome = (doc: WebhookSendDoc, outcome: Outcome, position: number): WebhookSendDoc => ({
  _id: doc._id, organizationId: doc.organizationId, webhookId: doc.webhookId, tag: doc.tag, trigger: doc.trigger, creditId: doc.creditId,
  orderId: doc.orderId, status: outcome.status, request: outcome.request, response: outcome.response, auth: outcome.auth, error: outcome.error,
  responseQueryResults: outcome.responseQueryResults, responseQueryResultsCut: outcome.responseQueryResultsCut ?? [], durationMs: outcome.durationMs,
  startedAt: doc.startedAt, completedAt: outcome.completedAt, _position: position,
})

const collection = {
  name: 'webhook_sends',
  // A webhook's log is read newest first, a page at a time.
  indexes: [{ organizationId: 1 }, { webhookId: 1 }, { creditId: 1 }, { status: 1 }, { organizationId: 1, webhookId: 1, startedAt: -1, _id: -1 }],
} as const

export const webhookSendsProjection = defineProjection({
  name: 'webhookSends',
  handles: ['WebhookSendStarted', 'WebhookSendCompleted', 'WebhookSendOutcomeUnknown'],
  collections: [collection],
  async project(store, event, position) {
    const docs = store.collection<WebhookSendDoc>(collection)
    switch (event.type) {
      case 'WebhookSendStarted': {
        const { sendId, organizationId, webhookId, tag, trigger, creditId, orderId, request, startedAt } = event.data
        return applyAt(docs, sendId, position, (): WebhookSendDoc => ({
          _id: sendId, organizationId, webhookId, tag, trigger, creditId, orderId, status: 'started', request,
          response: null, auth: null, error: null, responseQueryResults: {}, durationMs: null, startedAt, completedAt: null, _position: position,
        }))
      }
      case 'WebhookSendCompleted': {
        const { outcome, request, response, auth, error, responseQueryResults, responseQueryResultsCut, durationMs, completedAt } = event.data
        return updateAt(docs, event.data.sendId, position, (doc) => withOutcome(doc, {
          status: outcome, request: request ?? doc.request, response, auth, error, responseQueryResults, responseQueryResultsCut, durationMs, completedAt,
        }, position))
      }
      case 'WebhookSendOutcomeUnknown':
        return updateAt(docs, event.data.sendId, position, (doc) => withOutcome(doc, {
          status: 'unknown', request: doc.request, response: doc.response, auth: doc.auth, error: { code: 'OUTCOME_UNKNOWN', message: event.data.reason },
          responseQueryResults: doc.responseQueryResults, responseQueryResultsCut: doc.responseQueryResultsCut, durationMs: doc.durationMs, completedAt: event.data.recordedAt,
        }, position))
      default: {
        const _never: never = event
        return _never
      }
    }
  },
})

export interface SendListQuery {
  organizationId: string
  offset: number
  limit: number
}

export const webhookSendQueries = (store: ReadStore) => {
  const docs = store.collection<WebhookSendDoc>(collection)
  const page = async (filter: Filter, query: SendListQuery) => {
    const [items, total] = await Promise.all([
      docs.find(filter, { sort: { startedAt: -1, _id: -1 }, skip: query.offset, limit: query.limit }),
      docs.count(filter),
    ])
    return { items, total }
  }
  return {
    get: async (organizationId: string, sendId: string) => {
      const doc = await docs.get(sendId)
      return doc !== null && doc.organizationId === organizationId ? doc : null
    },
    /** Newest first. */
    byWebhook: (webhookId: string, query: SendListQuery) => page({ organizationId: query.organizationId, webhookId }, query),
    /** Test sends of configurations that were not stored. */
    tests: (query: SendListQuery) => page({ organizationId: query.organizationId, webhookId: null, 'trigger.type': 'test' }, query),
    /** GET /credits/{id}/webhook-logs. Newest first. */
    byCredit: (creditId: string, query: SendListQuery) => page({ organizationId: query.organizationId, creditId }, query),
    /** Sends with a start and no outcome: what a crash interrupted. */
    interrupted: (): AsyncIterable<WebhookSendDoc> => docs.stream({ status: 'started' }, { sort: { startedAt: 1, _id: 1 } }),
    /** Sends of an organization started in [from, to), for the logs export: streamed in no particular order. */
    startedBetween: (organizationId: string, from: string, to: string): AsyncIterable<WebhookSendDoc> =>
      docs.stream({ organizationId, startedAt: { $gte: from, $lt: to } }),
  }
}

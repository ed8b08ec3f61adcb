import { applyAt, defineProjection } from './projection.js'
import type { ReadStore } from './readStore.js'

/** One response-query result as `fromWebhook` offers it: the JSON text of the value, and the send that stored it. */
export interface StoredResponseValue {
  query: string
  /** JSON text, so any JSON value (keys with `.` or `$` included) is kept as the destination sent it. */
  json: string
  sendId: string
  webhookId: string | null
  completedAt: string
}

/**
 * The values `fromWebhook "<tag>" "<query>"` returns for one credit: per
 * (credit, tag), the latest result of each query name among the delivered
 * sends of the organization's webhooks with that tag (automatic or manual) for
 * that credit. Latest is by position in the log, so a rebuild gives the same.
 */
export interface ResponseValuesDoc {
  _id: string
  _position?: number
  organizationId: string
  creditId: string
  tag: string
  values: StoredResponseValue[]
}

/** What a started send is about, kept until its outcome arrives (the outcome event does not repeat it). */
interface PendingSendDoc {
  _id: string
  _position?: number
  organizationId: string
  creditId: string
  tag: string
}

const values = { name: 'webhook_response_values', indexes: [{ creditId: 1 }] } as const
const pending = { name: 'webhook_response_pending_sends' } as const

const valuesId = (creditId: string, tag: string): string => `${creditId}:${tag}`

export const webhookResponseValuesProjection = defineProjection({
  name: 'webhookResponseValues',
  handles: ['WebhookSendStarted', 'WebhookSendCompleted'],
  collections: [values, pending],
  async project(store, event, position) {
    const pendingDocs = store.collection<PendingSendDoc>(pending)
    if (event.type === 'WebhookSendStarted') {
      const { sendId, organizationId, creditId, tag } = event.data
      if (creditId === null) return
      return applyAt(pendingDocs, sendId, position, () => ({ _id: sendId, organizationId, creditId, tag, _position: position }))
    }
    const { sendId, webhookId, outcome, responseQueryResults, completedAt } = event.data
    const send = await pendingDocs.get(sendId)
    if (send === null) return
    const results = Object.entries(responseQueryResults)
    if (outcome === 'delivered' && results.length > 0) {
      await applyAt(store.collection<ResponseValuesDoc>(values), valuesId(send.creditId, send.tag), position, (current) => {
        const fresh = new Map(results.map(([query, value]) => [query, { query, json: JSON.stringify(value ?? null), sendId, webhookId, completedAt }]))
        return {
          _id: valuesId(send.creditId, send.tag), organizationId: send.organizationId, creditId: send.creditId, tag: send.tag,
          values: [...(current?.values ?? []).filter((v) => !fresh.has(v.query)), ...fresh.values()], _position: position,
        }
      })
    }
    // Dropped after the values are written, so a redelivery of the outcome still finds what it is about.
    await applyAt(pendingDocs, sendId, position, () => null)
  },
})

/** tag → query name → value. */
export type ResponseValues = ReadonlyMap<string, ReadonlyMap<string, unknown>>

export const webhookResponseValueQueries = (store: ReadStore) => {
  const docs = store.collection<ResponseValuesDoc>(values)
  return {
    /** Every value stored for a credit of the organization, for one render. */
    forCredit: async (organizationId: string, creditId: string): Promise<ResponseValues> => {
      const found = await docs.find({ creditId, organizationId })
      return new Map(found.map((doc) => [doc.tag, new Map(doc.values.map((v) => [v.query, JSON.parse(v.json)]))]))
    },
  }
}

import { paymentOrderAggregate, type PaymentOrderState } from '../commands/paymentOrder.js'
import type { PaymentAllocation } from '../events/credit.js'
import { applyAt, defineProjection, updateAt } from './projection.js'
import type { Filter, ReadStore } from './readStore.js'

/** How an approved order was applied to its credit. */
export interface OrderApplication {
  appliedAmount: string
  unappliedAmount: string
  allocations: PaymentAllocation[]
  appliedAt: string
}

/**
 * A payment order: the order aggregate's state (`order` holds the creation
 * data), with top-level copies of the fields lists and exports filter on, and
 * the application to the credit once the payment applier has run.
 */
export interface OrderDoc extends PaymentOrderState {
  _id: string
  _position?: number
  organizationId: string
  creditId: string
  installmentId: string
  provider: string
  createdAt: string
  application: OrderApplication | null
}

const collection = {
  name: 'payment_orders',
  indexes: [{ creditId: 1, installmentId: 1, createdAt: 1 }, { status: 1, pollAfter: 1 }, { organizationId: 1, createdAt: 1 },
    { organizationId: 1, completedAt: 1 }],
} as const

/**
 * The document with an order event applied. The document is the order's
 * state plus fields of its own, so it is handed to the decider as the state
 * (the decider copies what it does not change): one copy less per event than
 * taking the state out of it first, and the same document.
 */
const evolved = (doc: OrderDoc, event: Parameters<typeof paymentOrderAggregate.evolve>[1]): OrderDoc => ({ ...doc, ...paymentOrderAggregate.evolve(doc, event) })

export const paymentOrdersProjection = defineProjection({
  name: 'paymentOrders',
  handles: ['PaymentOrderCreated', 'PaymentOrderSubmitted', 'PaymentOrderApproved', 'PaymentOrderFailed', 'CreditPaymentApplied', 'TaxApplied'],
  collections: [collection],
  async project(store, event, position) {
    const docs = store.collection<OrderDoc>(collection)
    switch (event.type) {
      case 'PaymentOrderCreated': {
        const { orderId, organizationId, creditId, installmentId, provider, createdAt } = event.data
        const state = paymentOrderAggregate.evolve(paymentOrderAggregate.initialState(), event)
        return applyAt(docs, orderId, position, () => ({
          ...state, _id: orderId, organizationId, creditId, installmentId, provider, createdAt, application: null,
        }))
      }
      case 'PaymentOrderSubmitted':
      case 'PaymentOrderApproved':
      case 'PaymentOrderFailed':
        return updateAt(docs, event.data.orderId, position, (doc) => evolved(doc, event))
      case 'TaxApplied':
        // Taxes on a credit's principal belong to the credits' model.
        if (event.data.appliesTo === 'CREDIT') return
        return updateAt(docs, event.data.subjectId, position, (doc) => evolved(doc, event))
      case 'CreditPaymentApplied': {
        const { appliedAmount, unappliedAmount, allocations, appliedAt } = event.data
        return updateAt(docs, event.data.orderId, position, (doc) => ({ ...doc, application: { appliedAmount, unappliedAmount, allocations, appliedAt } }))
      }
      default: {
        const _never: never = event
        return _never
      }
    }
  },
})

export const paymentOrderQueries = (store: ReadStore) => {
  const docs = store.collection<OrderDoc>(collection)
  return {
    /** An order by id whatever its organization (webhook rendering); check `organizationId` before showing it. */
    get: (orderId: string) => docs.get(orderId),
    /** An order under the credit and installment of a path, in one organization; anything else is null. */
    getIn: async (scope: { organizationId: string; creditId: string; installmentId: string; orderId: string }) => {
      const doc = await docs.get(scope.orderId)
      return doc !== null && doc.organizationId === scope.organizationId && doc.creditId === scope.creditId && doc.installmentId === scope.installmentId
        ? doc
        : null
    },
    listForInstallment: async (query: { organizationId: string; creditId: string; installmentId: string; status?: string; offset: number; limit: number }) => {
      const filter: Filter = { creditId: query.creditId, installmentId: query.installmentId, organizationId: query.organizationId }
      if (query.status !== undefined) filter['status'] = query.status
      const [items, total] = await Promise.all([
        docs.find(filter, { sort: { createdAt: 1, _id: 1 }, skip: query.offset, limit: query.limit }),
        docs.count(filter),
      ])
      return { items, total }
    },
    /** Orders a provider is processing whose outcome is due by `now` (oldest first). */
    dueForPolling: (now: string, limit: number) => docs.find({ status: 'processing', pollAfter: { $lte: now } }, { sort: { pollAfter: 1 }, limit }),
    /** Orders of an organization, for exports, streamed. */
    stream: (organizationId: string, filter: Filter = {}) => docs.stream({ ...filter, organizationId }),
    /** How many orders `stream` would yield for the filter, for export progress. */
    count: (organizationId: string, filter: Filter = {}) => docs.count({ ...filter, organizationId }),
  }
}

import type { CreditPaymentApplied, PaymentAllocation } from '../events/credit.js'
import { evolvePaymentOrder, initialPaymentOrderState, type PaymentOrderState, type PaymentOrderStreamEvent } from '../events/paymentOrderState.js'
import { applyAt, defineProjection, updateAt } from './projection.js'
import type { Filter, ReadStore } from './readStore.js'

/** How an approved order was applied to its credit. */
export interface OrderApplication {
  appliedAmount: string
  unappliedAmount: string
  allocations: PaymentAllocation[]
  appliedAt: string
  /** A `zero` order that paid the credit off: the day it was weighed on and the interest of later periods it forgave. */
  payoff?: NonNullable<CreditPaymentApplied['data']['payoff']>
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
  indexes: [{ creditId: 1, installmentId: 1, createdAt: 1 }, { organizationId: 1, creditId: 1, installmentId: 1, createdAt: 1, _id: 1 },
    { status: 1, pollAfter: 1 }, { organizationId: 1, createdAt: 1 },
    { organizationId: 1, completedAt: 1 }],
} as const

/** The fields a document adds to the order state. */
type OwnFields = Pick<OrderDoc, '_id' | 'organizationId' | 'creditId' | 'installmentId' | 'provider' | 'createdAt'>

/**
 * A document written out field by field, `_position` included. Spreading a
 * stored document (`{ ...doc, status }`) is what this replaces: in V8 (Node
 * 20) a spread copy of an object whose fields did not all fit in the object
 * gets a hidden class of its own, so every order document carried its own
 * (≈ 0.5 KiB each, and copies ten times slower); see docs/architecture.md.
 */
const orderDoc = (state: PaymentOrderState, own: OwnFields, application: OrderApplication | null, position: number): OrderDoc => ({
  status: state.status, order: state.order, transactionReference: state.transactionReference, paymentReference: state.paymentReference,
  pollAfter: state.pollAfter, submittedAt: state.submittedAt, approverId: state.approverId, completedAt: state.completedAt,
  errorMessage: state.errorMessage, processingTime: state.processingTime, taxes: state.taxes, updatedAt: state.updatedAt,
  _id: own._id, organizationId: own.organizationId, creditId: own.creditId, installmentId: own.installmentId, provider: own.provider,
  createdAt: own.createdAt, application, _position: position,
})

/** The order state inside a document, as a state object (so the decider's copy of it is of a small, common shape). */
const stateOf = (doc: OrderDoc): PaymentOrderState => ({
  status: doc.status, order: doc.order, transactionReference: doc.transactionReference, paymentReference: doc.paymentReference,
  pollAfter: doc.pollAfter, submittedAt: doc.submittedAt, approverId: doc.approverId, completedAt: doc.completedAt,
  errorMessage: doc.errorMessage, processingTime: doc.processingTime, taxes: doc.taxes, updatedAt: doc.updatedAt,
})

/** The document with an order event applied. */
const evolved = (doc: OrderDoc, event: PaymentOrderStreamEvent, position: number): OrderDoc =>
  orderDoc(evolvePaymentOrder(stateOf(doc), event), doc, doc.application, position)

export const paymentOrdersProjection = defineProjection({
  name: 'paymentOrders',
  handles: ['PaymentOrderCreated', 'PaymentOrderSubmitted', 'PaymentOrderApproved', 'PaymentOrderFailed', 'CreditPaymentApplied', 'TaxApplied'],
  collections: [collection],
  async project(store, event, position) {
    const docs = store.collection<OrderDoc>(collection)
    switch (event.type) {
      case 'PaymentOrderCreated': {
        const { orderId, organizationId, creditId, installmentId, provider, createdAt } = event.data
        const state = evolvePaymentOrder(initialPaymentOrderState(), event)
        return applyAt(docs, orderId, position, () => orderDoc(state, { _id: orderId, organizationId, creditId, installmentId, provider, createdAt }, null, position))
      }
      case 'PaymentOrderSubmitted':
      case 'PaymentOrderApproved':
      case 'PaymentOrderFailed':
        return updateAt(docs, event.data.orderId, position, (doc) => evolved(doc, event, position))
      case 'TaxApplied':
        // Taxes on a credit's principal belong to the credits' model.
        if (event.data.appliesTo === 'CREDIT') return
        return updateAt(docs, event.data.subjectId, position, (doc) => evolved(doc, event, position))
      case 'CreditPaymentApplied': {
        const { appliedAmount, unappliedAmount, allocations, appliedAt, payoff } = event.data
        const application: OrderApplication = payoff === undefined
          ? { appliedAmount, unappliedAmount, allocations, appliedAt }
          : { appliedAmount, unappliedAmount, allocations, appliedAt, payoff }
        return updateAt(docs, event.data.orderId, position, (doc) => orderDoc(doc, doc, application, position))
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

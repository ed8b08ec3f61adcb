import type { OrderStatus } from '../shared/lending.js'
import type { PaymentOrderCreated, PaymentOrderEvent } from './paymentOrder.js'
import type { TaxApplied } from './tax.js'

/** What an order stream holds: its own events and the taxes applied to its collection costs. */
export type PaymentOrderStreamEvent = PaymentOrderEvent | TaxApplied

/**
 * What an order stream folds into: the order decider decides on it, and the
 * payment orders read model keeps it as it is. It is kept here, beside the
 * events, because projections import only events and shared code.
 */
export interface PaymentOrderState {
  status: 'none' | OrderStatus
  order: PaymentOrderCreated['data'] | null
  transactionReference: string
  paymentReference: string
  pollAfter: string | null
  submittedAt: string | null
  approverId: string
  completedAt: string | null
  errorMessage: string
  processingTime: number
  /** The taxes applied to the order's collection costs when it was created. */
  taxes: Array<TaxApplied['data']>
  updatedAt: string
}

export const initialPaymentOrderState = (): PaymentOrderState => ({
  status: 'none', order: null, transactionReference: '', paymentReference: '', pollAfter: null, submittedAt: null, approverId: '', completedAt: null,
  errorMessage: '', processingTime: 0, taxes: [], updatedAt: '',
})

export const evolvePaymentOrder = (state: PaymentOrderState, event: PaymentOrderStreamEvent): PaymentOrderState => {
  switch (event.type) {
    case 'PaymentOrderCreated':
      return { ...state, status: 'pending', order: event.data, updatedAt: event.data.createdAt }
    case 'PaymentOrderSubmitted':
      return {
        ...state, status: 'processing', transactionReference: event.data.transactionReference, paymentReference: event.data.paymentReference,
        pollAfter: event.data.pollAfter, submittedAt: event.data.submittedAt, updatedAt: event.data.submittedAt,
      }
    case 'PaymentOrderApproved':
      return {
        ...state, status: 'completed', approverId: event.data.approverId, paymentReference: event.data.paymentReference,
        completedAt: event.data.completedAt, processingTime: event.data.processingTime, updatedAt: event.data.completedAt,
      }
    case 'PaymentOrderFailed':
      return {
        ...state, status: 'failed', errorMessage: event.data.errorMessage,
        processingTime: event.data.processingTime, updatedAt: event.data.failedAt,
      }
    case 'TaxApplied':
      return { ...state, taxes: [...state.taxes, event.data] }
    default: {
      const _never: never = event
      return _never
    }
  }
}

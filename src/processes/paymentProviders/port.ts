import type { PaymentProviderName } from '../../shared/lending.js'

/** What a provider is told about a payment. */
export interface ProviderPayment {
  orderId: string
  amount: string
  currency: string
  method: string
  gatewayOption: string
  createdAt: string
}

/** The provider took the payment and is processing it. */
export interface ProviderSubmission {
  transactionReference: string
  paymentReference: string
  /** When to ask for the outcome. */
  pollAfter: string
}

export interface ProviderOutcome {
  outcome: 'completed' | 'failed'
  /** Why it failed; '' when it completed. */
  errorMessage: string
  paymentReference: string
}

/**
 * The PaymentProvider port: start a payment, then report its outcome. Both
 * calls must be safe to repeat for one order (a restart may repeat them):
 * providers key their work by the order id.
 */
export interface PaymentProvider {
  readonly name: PaymentProviderName
  /** Whether `start` hands the payment to someone who charges the payer (false: the order waits for a person through the API). */
  readonly takesPayments: boolean
  /** Starts the payment flow; null when the provider waits for the order to be approved or rejected through the API. */
  start(payment: ProviderPayment, now: Date): Promise<ProviderSubmission | null>
  /** The outcome of a payment it is processing, or null while it still is. */
  outcome(payment: ProviderPayment & { transactionReference: string; submittedAt: string }, now: Date): Promise<ProviderOutcome | null>
}

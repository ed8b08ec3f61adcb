/**
 * Vocabulary of the lending core shared by events, deciders, read models and
 * routes: credit states, rate types, payment-order statuses and providers.
 */

/** Credit states (the service's Spanish names; `Desembolsado` comes from the interface). */
export const creditStates = ['Solicitado', 'Aprobado', 'Rechazado', 'Desembolsado', 'Anulado', 'Pagado'] as const
export type CreditStateName = (typeof creditStates)[number]

/** Every move the credit state machine allows; anything else is INVALID_TRANSITION. */
export const creditTransitions: Readonly<Record<CreditStateName, readonly CreditStateName[]>> = {
  Solicitado: ['Aprobado', 'Rechazado', 'Anulado'],
  Aprobado: ['Desembolsado', 'Anulado'],
  Rechazado: [],
  Desembolsado: ['Pagado'],
  Anulado: [],
  Pagado: [],
}

/**
 * How a line's `rate` is read (a percentage, e.g. "24.5"), always fixed for the life of a credit:
 * FIXED: effective annual rate (E.A.), monthly rate (1 + rate/100)^(1/12) − 1;
 * FIXED_NOMINAL: nominal annual rate paid monthly (N.M.V.), monthly rate rate/100/12.
 */
export const rateTypes = ['FIXED', 'FIXED_NOMINAL'] as const
export type RateType = (typeof rateTypes)[number]

/** Payment-order statuses: pending → processing (handed to a gateway) → completed | failed. */
export const orderStatuses = ['pending', 'processing', 'completed', 'failed'] as const
export type OrderStatus = (typeof orderStatuses)[number]

export const orderTransitions: Readonly<Record<OrderStatus, readonly OrderStatus[]>> = {
  pending: ['processing', 'completed', 'failed'],
  processing: ['completed', 'failed'],
  completed: [],
  failed: [],
}

/** Built-in payment providers (the PaymentProvider port lives in src/processes/paymentProviders). */
export const paymentProviderNames = ['manual', 'sandbox'] as const
export type PaymentProviderName = (typeof paymentProviderNames)[number]
export const isPaymentProviderName = (name: string): name is PaymentProviderName =>
  (paymentProviderNames as readonly string[]).includes(name)

export const orderTypes = ['payment'] as const
export type OrderType = (typeof orderTypes)[number]

/** `installmentid` of a full-flow order: the payoff, which settles the credit (docs/credits.md), InstallmentNumber 0. */
export const ZERO_INSTALLMENT = 'zero'

/** Longest term a line may offer, in months (40 years). */
export const MAX_TERM_MONTHS = 480

/** Method of an order when neither the request nor the line names one. */
export const providerDefaultMethods: Readonly<Record<PaymentProviderName, string>> = {
  manual: 'bank_transfer',
  sandbox: 'credit_card',
}

/** The reason an automatic rejection records: the model's version, not the score (`ReadAnalysis`'s, in `CreditScored`). */
export const automaticRejectionReason = (version: string): string => `automatic scoring: model version ${version} decides reject`

const scoredRejection = /^automatic scoring: score \S+ with model version (.*) decides reject$/s

/** A rejection reason as a caller who may not read scores sees it: one recorded with its score (before stop 39) without it. */
export const rejectionReasonWithoutScore = (reason: string | null): string | null =>
  reason === null ? null : reason.replace(scoredRejection, (_reason, version: string) => automaticRejectionReason(version))

import type { Event, RequestKey } from './types.js'

export const taxTypes = ['VAT', 'INCOME', 'RETENTION', 'OTHER'] as const
export type TaxType = (typeof taxTypes)[number]

/** What a tax is computed on: a credit's principal, a fee, or a payment order's collection costs. */
export const taxBases = ['CREDIT', 'FEE', 'PAYMENT'] as const
export type TaxBase = (typeof taxBases)[number]

export interface TaxFields {
  name: string
  description: string
  /** Decimal string between 0 and 100 (the wire carries a number). */
  percentage: string
  type: TaxType
  appliesTo: TaxBase[]
  /** Decimal string: the smallest base the tax applies to. */
  minimumAmount: string
}

/** What the taxation rule (src/commands/taxation.ts) needs of a tax configuration: a taxes read-model document or a tax aggregate's state. */
export interface TaxRate {
  taxId: string
  organizationId: string
  name: string
  type: TaxType
  isActive: boolean
  percentage: string
  appliesTo: readonly TaxBase[]
  minimumAmount: string
}

export type TaxCreated = Event<'TaxCreated', TaxFields & {
  taxId: string
  organizationId: string
  isActive: boolean
  createdAt: string
  /** The creator's `Idempotency-Key` and a hash of its request; absent when it sent none. */
  idempotency?: RequestKey
}>
/** Carries only the fields that changed, with their new values. */
export type TaxUpdated = Event<'TaxUpdated', { taxId: string; organizationId: string; changes: Partial<TaxFields>; updatedAt: string }>
export type TaxActivated = Event<'TaxActivated', { taxId: string; organizationId: string; at: string }>
export type TaxDeactivated = Event<'TaxDeactivated', { taxId: string; organizationId: string; at: string }>

export type TaxEvent = TaxCreated | TaxUpdated | TaxActivated | TaxDeactivated

/**
 * One application of a tax, appended to the stream of what was taxed (a payment
 * order, a credit) by that aggregate's decider, never to the tax's own stream, so
 * busy taxes are no point of contention. The taxes read model counts these in
 * `usage_count`. Amounts are decimal strings in `currency`.
 */
export type TaxApplied = Event<'TaxApplied', {
  taxId: string
  organizationId: string
  /** The tax's name and type when it was applied (a later rename does not rewrite history). */
  name: string
  type: TaxType
  appliesTo: TaxBase
  /** Id of the payment order, credit or fee taxed. */
  subjectId: string
  base: string
  percentage: string
  amount: string
  currency: string
  appliedAt: string
}>

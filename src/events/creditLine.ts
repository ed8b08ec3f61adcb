import type { PaymentProviderName, RateType } from '../shared/lending.js'
import type { Event } from './types.js'

/**
 * The configuration of a credit line: the product an organization lends under.
 * Money and rate are decimal strings; terms are whole months.
 */
export interface CreditLineConfiguration {
  name: string
  description: string
  principalMin: string
  principalMax: string
  principalDefault: string
  /** Months. */
  timeMin: number
  timeMax: number
  timeDefault: number
  /** A percentage; how it is read depends on rateType. */
  rate: string
  rateType: RateType
  entityConfigID: string
  /** ISO 4217. */
  currency: string
  jurisdictionCode: string
  jurisdiction: { code: string; name: string }
  /** Payment method names, grouped as the interface returns them. */
  gatewayMethods: string[][]
  disbursementMethods: string[][]
  /** Days an approved credit stays available for disbursement; 0: no limit. */
  availableDays: number
  conditions: string[][]
  benefits: string[][]
  active: boolean
  /** Default payment provider of the line's orders. */
  provider: PaymentProviderName
  /** When true, a payment order must be approved by a principal other than its creator. */
  requireDistinctApprover: boolean
  /** Webhook ids fired when a payment order of the line is approved. */
  onOrderWebhooks: string[]
  /** Webhook ids fired when a credit of the line reaches Desembolsado. */
  onDeliveredWebhooks: string[]
}

export type CreditLineCreated = Event<'CreditLineCreated', {
  creditLineId: string
  organizationId: string
  configuration: CreditLineConfiguration
  createdAt: string
}>
/** Carries only the fields that changed, with their new values. */
export type CreditLineUpdated = Event<'CreditLineUpdated', {
  creditLineId: string
  organizationId: string
  changes: Partial<CreditLineConfiguration>
  updatedAt: string
}>

export type CreditLineEvent = CreditLineCreated | CreditLineUpdated

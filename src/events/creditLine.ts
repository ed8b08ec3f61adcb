import type { PaymentProviderName, RateType } from '../shared/lending.js'
import type { Event, RequestKey } from './types.js'

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
  /** The creator's `Idempotency-Key` and its request's hash; absent when it was created without one. */
  idempotency?: RequestKey
}>
/** Carries only the fields that changed, with their new values. */
export type CreditLineUpdated = Event<'CreditLineUpdated', {
  creditLineId: string
  organizationId: string
  changes: Partial<CreditLineConfiguration>
  updatedAt: string
}>

export type CreditLineEvent = CreditLineCreated | CreditLineUpdated

/** A configuration with nothing but its fields, its jurisdiction's code and name: what an event recorded is applied as. */
export const keptConfiguration = (c: CreditLineConfiguration): CreditLineConfiguration => ({
  name: c.name, description: c.description, principalMin: c.principalMin, principalMax: c.principalMax, principalDefault: c.principalDefault,
  timeMin: c.timeMin, timeMax: c.timeMax, timeDefault: c.timeDefault, rate: c.rate, rateType: c.rateType, entityConfigID: c.entityConfigID,
  currency: c.currency, jurisdictionCode: c.jurisdictionCode, jurisdiction: { code: c.jurisdiction.code, name: c.jurisdiction.name },
  gatewayMethods: c.gatewayMethods, disbursementMethods: c.disbursementMethods, availableDays: c.availableDays, conditions: c.conditions,
  benefits: c.benefits, active: c.active, provider: c.provider, requireDistinctApprover: c.requireDistinctApprover,
  onOrderWebhooks: c.onOrderWebhooks, onDeliveredWebhooks: c.onDeliveredWebhooks,
})

const configurationFields: Record<keyof CreditLineConfiguration, true> = {
  name: true, description: true, principalMin: true, principalMax: true, principalDefault: true, timeMin: true, timeMax: true, timeDefault: true,
  rate: true, rateType: true, entityConfigID: true, currency: true, jurisdictionCode: true, jurisdiction: true, gatewayMethods: true,
  disbursementMethods: true, availableDays: true, conditions: true, benefits: true, active: true, provider: true, requireDistinctApprover: true,
  onOrderWebhooks: true, onDeliveredWebhooks: true,
}
const isConfigurationField = (field: string): field is keyof CreditLineConfiguration => Object.hasOwn(configurationFields, field)
const configurationFieldNames = Object.keys(configurationFields).filter(isConfigurationField)

/**
 * Changes kept to the configuration's fields (a jurisdiction to its code and
 * name). Before the PATCH body refused other fields, `CreditLineUpdated` could
 * record any, an `organizationId` among them: what reads the log applies only
 * these, so such an event moves nothing on a replay.
 */
export const keptChanges = (changes: Partial<CreditLineConfiguration>): Partial<CreditLineConfiguration> => {
  const kept: Partial<CreditLineConfiguration> = {}
  for (const field of configurationFieldNames) {
    if (changes[field] !== undefined) Object.assign(kept, { [field]: changes[field] })
  }
  if (kept.jurisdiction !== undefined) kept.jurisdiction = { code: kept.jurisdiction.code, name: kept.jurisdiction.name }
  return kept
}

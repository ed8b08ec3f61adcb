import type { Event } from './types.js'

export type CreditLimitStatus = 'active' | 'inactive' | 'expired'

/**
 * A limit a creditor (an organization) sets for one debtor (a profile of that
 * organization) in one currency. Its id is derived from that triple, so there is
 * at most one per creditor, debtor and currency; an expired limit is renewed by
 * giving it a new expiration date.
 */
export type CreditLimitCreated = Event<'CreditLimitCreated', {
  creditLimitId: string
  organizationId: string
  debtorId: string
  currency: string
  maxAmount: string
  /** YYYY-MM-DD, the last day the limit is valid (UTC). */
  expirationDate: string
  createdAt: string
}>
export type CreditLimitAmountChanged = Event<'CreditLimitAmountChanged', {
  creditLimitId: string
  organizationId: string
  maxAmount: string
  previousMaxAmount: string
  at: string
}>
export type CreditLimitExpirationChanged = Event<'CreditLimitExpirationChanged', {
  creditLimitId: string
  organizationId: string
  expirationDate: string
  previousExpirationDate: string
  at: string
}>
export type CreditLimitActivated = Event<'CreditLimitActivated', { creditLimitId: string; organizationId: string; at: string }>
export type CreditLimitDeactivated = Event<'CreditLimitDeactivated', { creditLimitId: string; organizationId: string; at: string }>
/** Recorded by the expiry job once the expiration date has passed. */
export type CreditLimitExpired = Event<'CreditLimitExpired', { creditLimitId: string; organizationId: string; expirationDate: string; at: string }>

export type CreditLimitEvent =
  | CreditLimitCreated
  | CreditLimitAmountChanged
  | CreditLimitExpirationChanged
  | CreditLimitActivated
  | CreditLimitDeactivated
  | CreditLimitExpired

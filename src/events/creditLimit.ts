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


/**
 * A credit's principal counted against the limit of its creditor, debtor and
 * currency: recorded by the disbursement (checked against an active limit on
 * this stream's expected revision) or, for a credit disbursed without one, by
 * the creditExposure process (`checked: false`). It may precede the limit's
 * creation: a limit set later starts with the exposure already there.
 */
export type CreditLimitReserved = Event<'CreditLimitReserved', {
  creditLimitId: string
  organizationId: string
  debtorId: string
  currency: string
  creditId: string
  amount: string
  /** Whether an active limit was checked (false: recorded after the fact, or no active limit applied). */
  checked: boolean
  /** Σ of the outstanding principal counted on this stream after the reservation. */
  usedAmount: string
  at: string
}>

/** Part or all of a credit's reservation released: principal paid, the credit paid off, cancelled or rejected. */
export type CreditLimitReleased = Event<'CreditLimitReleased', {
  creditLimitId: string
  organizationId: string
  creditId: string
  amount: string
  /** What stays counted for this credit (its outstanding principal); 0 once it is paid, cancelled or rejected. */
  remaining: string
  reason: 'payment' | 'paid' | 'cancelled' | 'rejected'
  usedAmount: string
  at: string
}>

/**
 * A credit that ended without disbursement (cancelled or rejected) while this
 * stream counted nothing for it. A disbursement that passed its credit check
 * just before may still try to reserve for it; that reservation changes
 * nothing, so the credit can never hold part of the limit.
 */
export type CreditLimitExposureClosed = Event<'CreditLimitExposureClosed', {
  creditLimitId: string
  organizationId: string
  debtorId: string
  currency: string
  creditId: string
  reason: 'cancelled' | 'rejected'
  at: string
}>

export type CreditLimitEvent =
  | CreditLimitCreated
  | CreditLimitAmountChanged
  | CreditLimitExpirationChanged
  | CreditLimitActivated
  | CreditLimitDeactivated
  | CreditLimitExpired
  | CreditLimitReserved
  | CreditLimitReleased
  | CreditLimitExposureClosed

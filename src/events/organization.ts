import type { Event, RequestKey } from './types.js'

export type OrganizationCreated = Event<'OrganizationCreated', {
  organizationId: string
  name: string
  /** The organization's default configuration: the `configid` / `entityConfigID` of the interface. */
  defaultConfigId: string
  createdAt: string
  /** The platform administrator's `Idempotency-Key` and a hash of its request; absent when it sent none. */
  idempotency?: RequestKey
}>
export type OrganizationRenamed = Event<'OrganizationRenamed', { organizationId: string; name: string }>
export type OrganizationDeactivated = Event<'OrganizationDeactivated', { organizationId: string; reason: string }>
export type OrganizationActivated = Event<'OrganizationActivated', { organizationId: string }>

export type OrganizationEvent = OrganizationCreated | OrganizationRenamed | OrganizationDeactivated | OrganizationActivated

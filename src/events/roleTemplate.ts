import type { Event, RequestKey } from './types.js'

export type RoleTemplateCreated = Event<'RoleTemplateCreated', {
  roleTemplateId: string
  organizationId: string
  name: string
  description: string
  permissions: string[]
  isDefault: boolean
  createdAt: string
  /** The creator's `Idempotency-Key` and a hash of its request; absent when it sent none. */
  idempotency?: RequestKey
}>
/** Carries the full new values of the fields that changed. */
export type RoleTemplateUpdated = Event<'RoleTemplateUpdated', {
  roleTemplateId: string
  organizationId: string
  name?: string
  description?: string
  permissions?: string[]
  isDefault?: boolean
  updatedAt: string
}>
/** A membership started using the template; the template's own count keeps "in use" consistent. */
export type RoleTemplateAssigned = Event<'RoleTemplateAssigned', { roleTemplateId: string; organizationId: string; membershipId: string }>
export type RoleTemplateUnassigned = Event<'RoleTemplateUnassigned', { roleTemplateId: string; organizationId: string; membershipId: string }>
export type RoleTemplateDeleted = Event<'RoleTemplateDeleted', { roleTemplateId: string; organizationId: string; deletedAt: string }>

export type RoleTemplateEvent = RoleTemplateCreated | RoleTemplateUpdated | RoleTemplateAssigned | RoleTemplateUnassigned | RoleTemplateDeleted

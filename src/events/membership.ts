import type { Event } from './types.js'

export type PrincipalType = 'user' | 'client'

export type MembershipGranted = Event<'MembershipGranted', {
  membershipId: string
  organizationId: string
  principalId: string
  principalType: PrincipalType
  roleTemplateId: string
}>
export type MembershipRoleChanged = Event<'MembershipRoleChanged', {
  membershipId: string
  organizationId: string
  roleTemplateId: string
  previousRoleTemplateId: string
}>
export type MembershipRevoked = Event<'MembershipRevoked', { membershipId: string; organizationId: string }>

export type MembershipEvent = MembershipGranted | MembershipRoleChanged | MembershipRevoked

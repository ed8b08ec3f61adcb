import { deterministicId } from '../shared/ids.js'
import type { Event } from './types.js'

export type PrincipalType = 'user' | 'client'

/** A principal has at most one membership in an organization, under an id derived from the two. */
export const membershipId = (organizationId: string, principalId: string): string => deterministicId('membership', organizationId, principalId)

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
export type MembershipEvent = MembershipGranted | MembershipRoleChanged

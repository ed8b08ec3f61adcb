import type { RecordedEvent, RecordedOf } from '../events/catalogue.js'
import type { Principal } from './context.js'

/**
 * The events that can end or narrow a caller's access: those of the
 * projections `requireUnrevoked` and the organization access read
 * (principals, organizations, memberships, role templates; a test keeps the
 * two lists equal).
 */
export const accessEventTypes = [
  'UserRegistered', 'UserTotpEnrolled', 'UserPasswordChanged', 'UserDeactivated', 'UserReactivated', 'UserSignInLocked', 'UserSignInUnlocked',
  'OAuthClientRegistered', 'OAuthClientSecretRotated', 'OAuthClientRevoked', 'RefreshTokenFamilyRevoked',
  'OrganizationCreated', 'OrganizationRenamed', 'OrganizationDeactivated', 'OrganizationActivated',
  'MembershipGranted', 'MembershipRoleChanged',
  'RoleTemplateCreated', 'RoleTemplateUpdated', 'RoleTemplateAssigned', 'RoleTemplateUnassigned', 'RoleTemplateDeleted',
] as const

type AccessEvent = RecordedOf<(typeof accessEventTypes)[number]>

const types: ReadonlySet<string> = new Set(accessEventTypes)

const isAccessEvent = (event: RecordedEvent): event is AccessEvent => types.has(event.type)

/** The one id whose access the event can change: a user, a client, a sign-in or an organization (memberships and role templates belong to theirs). */
const subjectOf = (event: AccessEvent): string => {
  switch (event.type) {
    case 'UserRegistered':
    case 'UserTotpEnrolled':
    case 'UserPasswordChanged':
    case 'UserDeactivated':
    case 'UserReactivated':
    case 'UserSignInLocked':
    case 'UserSignInUnlocked':
      return event.data.userId
    case 'OAuthClientRegistered':
    case 'OAuthClientSecretRotated':
    case 'OAuthClientRevoked':
      return event.data.clientId
    case 'RefreshTokenFamilyRevoked':
      return event.data.familyId
    case 'OrganizationCreated':
    case 'OrganizationRenamed':
    case 'OrganizationDeactivated':
    case 'OrganizationActivated':
    case 'MembershipGranted':
    case 'MembershipRoleChanged':
    case 'RoleTemplateCreated':
    case 'RoleTemplateUpdated':
    case 'RoleTemplateAssigned':
    case 'RoleTemplateUnassigned':
    case 'RoleTemplateDeleted':
      return event.data.organizationId
    default: {
      const _never: never = event
      return _never
    }
  }
}

/**
 * Whether an event can change what `principal` may do in `organizationId`: a
 * long-lived response re-checks its access after these alone, so one
 * organization's identity traffic costs the others' streams nothing.
 */
export const concernsAccess = (principal: Principal, organizationId: string) => {
  const subjects: ReadonlySet<string> = new Set([principal.id, principal.clientId, organizationId, ...(principal.signInId === null ? [] : [principal.signInId])])
  return (event: RecordedEvent): boolean => isAccessEvent(event) && subjects.has(subjectOf(event))
}

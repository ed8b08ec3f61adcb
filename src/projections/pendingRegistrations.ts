import { membershipId, type PrincipalType } from '../events/membership.js'
import { applyAt, defineProjection, updateAt } from './projection.js'
import type { ReadStore } from './readStore.js'

/**
 * A role template's use recorded for a membership not yet granted or moved to
 * it (the first step of a user or client creation, or of a role change), or,
 * once a role change moved the membership, the use of the template it left,
 * still to be withdrawn. Deleted once the membership is granted or the use
 * withdrawn; one left behind marks a creation or a role change cut off.
 */
export interface PendingMembershipDoc {
  _id: string
  _position?: number
  organizationId: string
  roleTemplateId: string
  /** Set once the user or client itself is registered: the creation then only lacks its membership. */
  principalId: string | null
  principalType: PrincipalType | null
  since: string
}

/** A username claimed for a user not yet registered (`_id` is the user id). */
export interface PendingUsernameDoc {
  _id: string
  _position?: number
  username: string
  since: string
}

const memberships = { name: 'pending_memberships', indexes: [{ since: 1 }] } as const
const usernames = { name: 'pending_usernames', indexes: [{ since: 1 }] } as const

const registered = (principalId: string, principalType: PrincipalType) => (doc: PendingMembershipDoc): PendingMembershipDoc => ({
  ...doc, principalId, principalType,
})

export const pendingRegistrationsProjection = defineProjection({
  name: 'pendingRegistrations',
  handles: ['RoleTemplateAssigned', 'RoleTemplateUnassigned', 'MembershipGranted', 'MembershipRoleChanged', 'UserRegistered', 'OAuthClientRegistered',
    'UsernameClaimed', 'UsernameReleased'],
  collections: [memberships, usernames],
  async project(store, event, position) {
    const pendingMemberships = store.collection<PendingMembershipDoc>(memberships)
    const pendingUsernames = store.collection<PendingUsernameDoc>(usernames)
    switch (event.type) {
      case 'RoleTemplateAssigned':
        return applyAt(pendingMemberships, event.data.membershipId, position, () => ({
          _id: event.data.membershipId, organizationId: event.data.organizationId, roleTemplateId: event.data.roleTemplateId,
          principalId: null, principalType: null, since: event.metadata.occurredAt,
        }))
      case 'RoleTemplateUnassigned':
      case 'MembershipGranted':
        return applyAt(pendingMemberships, event.data.membershipId, position, () => null)
      // A role change records the new template's use first, as a creation does. Once the membership uses it, what is
      // pending is the withdrawal of the template it left: a change cut off here is completed by the recovery.
      case 'MembershipRoleChanged':
        return updateAt(pendingMemberships, event.data.membershipId, position, (doc) => ({
          ...doc, roleTemplateId: event.data.previousRoleTemplateId, principalId: null, principalType: null,
        }))
      case 'UserRegistered': {
        const { userId, organizationId } = event.data
        await updateAt(pendingMemberships, membershipId(organizationId, userId), position, registered(userId, 'user'))
        return applyAt(pendingUsernames, userId, position, () => null)
      }
      case 'OAuthClientRegistered':
        return updateAt(pendingMemberships, membershipId(event.data.organizationId, event.data.clientId), position, registered(event.data.clientId, 'client'))
      case 'UsernameClaimed':
        return applyAt(pendingUsernames, event.data.userId, position, () => ({
          _id: event.data.userId, username: event.data.username, since: event.metadata.occurredAt,
        }))
      case 'UsernameReleased':
        return applyAt(pendingUsernames, event.data.userId, position, () => null)
      default: {
        const _never: never = event
        return _never
      }
    }
  },
})

export const pendingRegistrationQueries = (store: ReadStore) => {
  const pendingMemberships = store.collection<PendingMembershipDoc>(memberships)
  const pendingUsernames = store.collection<PendingUsernameDoc>(usernames)
  return {
    /** Pending since before `before` (an ISO time), oldest first. */
    membershipsPendingSince: (before: string, limit: number) => pendingMemberships.find({ since: { $lt: before } }, { sort: { since: 1, _id: 1 }, limit }),
    usernamesPendingSince: (before: string, limit: number) => pendingUsernames.find({ since: { $lt: before } }, { sort: { since: 1, _id: 1 }, limit }),
  }
}

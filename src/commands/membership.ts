import type { MembershipEvent, PrincipalType } from '../events/membership.js'
import { AppError } from '../shared/errors.js'
import type { Aggregate } from './decider.js'

/** Stream id of a membership: derived from organization and principal, so a principal has one per organization. */
export type MembershipCommand =
  | { type: 'GrantMembership'; membershipId: string; organizationId: string; principalId: string; principalType: PrincipalType; roleTemplateId: string }
  | { type: 'ChangeMembershipRole'; roleTemplateId: string }

export interface MembershipState {
  status: 'none' | 'active'
  membershipId: string
  organizationId: string
  principalId: string
  roleTemplateId: string
}

const requireActive = (state: MembershipState): void => {
  if (state.status !== 'active') throw new AppError('NOT_FOUND', 'membership not found', { resource: 'membership' })
}

export const membershipAggregate: Aggregate<MembershipCommand, MembershipEvent, MembershipState> = {
  streamType: 'membership',
  eventTypes: ['MembershipGranted', 'MembershipRoleChanged'],
  initialState: () => ({ status: 'none', membershipId: '', organizationId: '', principalId: '', roleTemplateId: '' }),
  decide(command, state) {
    switch (command.type) {
      case 'GrantMembership':
        if (state.status === 'active') {
          if (state.roleTemplateId === command.roleTemplateId) return []
          throw new AppError('ALREADY_EXISTS', 'the principal is already a member of this organization')
        }
        return [{ type: 'MembershipGranted', data: {
          membershipId: command.membershipId, organizationId: command.organizationId, principalId: command.principalId,
          principalType: command.principalType, roleTemplateId: command.roleTemplateId,
        } }]
      case 'ChangeMembershipRole':
        requireActive(state)
        if (state.roleTemplateId === command.roleTemplateId) return []
        return [{ type: 'MembershipRoleChanged', data: {
          membershipId: state.membershipId, organizationId: state.organizationId,
          roleTemplateId: command.roleTemplateId, previousRoleTemplateId: state.roleTemplateId,
        } }]
      default: {
        const _never: never = command
        return _never
      }
    }
  },
  evolve(state, event) {
    switch (event.type) {
      case 'MembershipGranted':
        return { status: 'active', membershipId: event.data.membershipId, organizationId: event.data.organizationId,
          principalId: event.data.principalId, roleTemplateId: event.data.roleTemplateId }
      case 'MembershipRoleChanged':
        return { ...state, roleTemplateId: event.data.roleTemplateId }
      default: {
        const _never: never = event
        return _never
      }
    }
  },
}

import type { OrganizationEvent } from '../events/organization.js'
import type { RequestKey } from '../events/types.js'
import { AppError } from '../shared/errors.js'
import { deterministicId } from '../shared/ids.js'
import type { Aggregate } from './decider.js'
import { hashRequest } from './idempotency.js'

export type OrganizationCommand =
  /** `idempotency`: the creator's `Idempotency-Key` (the id from `keyedOrganizationId`) and its request's hash. */
  | { type: 'CreateOrganization'; organizationId: string; name: string; defaultConfigId: string; now: string; idempotency?: RequestKey }
  | { type: 'RenameOrganization'; name: string }
  | { type: 'DeactivateOrganization'; reason: string }
  | { type: 'ActivateOrganization' }

export interface OrganizationState {
  status: 'none' | 'active' | 'inactive'
  organizationId: string
  name: string
  defaultConfigId: string
  /** The `Idempotency-Key` it was created with, and its request's hash; absent when it was created without one. */
  idempotency?: RequestKey
}

const requireExisting = (state: OrganizationState): void => {
  if (state.status === 'none') throw new AppError('NOT_FOUND', 'organization not found', { resource: 'organization' })
}

export const organizationAggregate: Aggregate<OrganizationCommand, OrganizationEvent, OrganizationState> = {
  streamType: 'organization',
  eventTypes: ['OrganizationCreated', 'OrganizationRenamed', 'OrganizationDeactivated', 'OrganizationActivated'],
  initialState: () => ({ status: 'none', organizationId: '', name: '', defaultConfigId: '' }),
  decide(command, state) {
    switch (command.type) {
      case 'CreateOrganization':
        if (state.status !== 'none') {
          // A creation with a Key that lost a race to the same Key: the caller compares it with the organization the first one made.
          if (command.idempotency !== undefined) return []
          throw new AppError('ALREADY_EXISTS', 'organization already exists')
        }
        return [{ type: 'OrganizationCreated', data: {
          organizationId: command.organizationId, name: command.name, defaultConfigId: command.defaultConfigId, createdAt: command.now,
          ...(command.idempotency === undefined ? {} : { idempotency: command.idempotency }),
        } }]
      case 'RenameOrganization':
        requireExisting(state)
        return state.name === command.name ? [] : [{ type: 'OrganizationRenamed', data: { organizationId: state.organizationId, name: command.name } }]
      case 'DeactivateOrganization':
        requireExisting(state)
        return state.status === 'inactive' ? [] : [{ type: 'OrganizationDeactivated', data: { organizationId: state.organizationId, reason: command.reason } }]
      case 'ActivateOrganization':
        requireExisting(state)
        return state.status === 'active' ? [] : [{ type: 'OrganizationActivated', data: { organizationId: state.organizationId } }]
      default: {
        const _never: never = command
        return _never
      }
    }
  },
  evolve(state, event) {
    switch (event.type) {
      case 'OrganizationCreated':
        return {
          status: 'active', organizationId: event.data.organizationId, name: event.data.name, defaultConfigId: event.data.defaultConfigId,
          ...(event.data.idempotency === undefined ? {} : { idempotency: event.data.idempotency }),
        }
      case 'OrganizationRenamed':
        return { ...state, name: event.data.name }
      case 'OrganizationDeactivated':
        return { ...state, status: 'inactive' }
      case 'OrganizationActivated':
        return { ...state, status: 'active' }
      default: {
        const _never: never = event
        return _never
      }
    }
  },
}

/** The id of the organization the platform administrator's `Idempotency-Key` names: one organization per Key. */
export const keyedOrganizationId = (key: string): string => deterministicId('organization-key', key)

/** What makes two creations with one Key "the same": the name. */
export const organizationRequestHash = (name: string): string => hashRequest([name])

import type { RoleTemplateEvent } from '../events/roleTemplate.js'
import type { RequestKey } from '../events/types.js'
import { AppError, invalidFields } from '../shared/errors.js'
import { deterministicId } from '../shared/ids.js'
import { isPermission, requireGrantableBy, type Grantor } from '../shared/permissions.js'
import { sameMembers } from '../shared/sets.js'
import type { CommandContext, CommandHandler } from './handler.js'
import type { Aggregate } from './decider.js'
import { createStreamOnce, hashRequest } from './idempotency.js'

export interface RoleTemplateFields {
  name: string
  description: string
  permissions: string[]
  isDefault: boolean
}

export type RoleTemplateCommand =
  /** `idempotency`: the creator's `Idempotency-Key` (the id from `keyedRoleTemplateId`) and its request's hash (`roleTemplateRequestHash`). */
  | ({ type: 'CreateRoleTemplate'; roleTemplateId: string; organizationId: string; now: string; idempotency?: RequestKey } & RoleTemplateFields)
  /**
   * `grantor`: who edits, deletes or assigns the template. The granting rule is checked here on the template as the
   * command finds it, not only by the route on the read model, which a concurrent edit may have outdated.
   */
  | ({ type: 'UpdateRoleTemplate'; grantor: Grantor; now: string } & Partial<RoleTemplateFields>)
  | { type: 'AssignRoleTemplate'; membershipId: string; organizationId: string; grantor: Grantor }
  | { type: 'UnassignRoleTemplate'; membershipId: string }
  | { type: 'DeleteRoleTemplate'; grantor: Grantor; now: string }

export interface RoleTemplateState extends RoleTemplateFields {
  status: 'none' | 'active' | 'deleted'
  roleTemplateId: string
  organizationId: string
  memberships: ReadonlySet<string>
  /** The `Idempotency-Key` it was created with, and its request's hash; absent when it was created without one. */
  idempotency?: RequestKey
}

const requireActive = (state: RoleTemplateState): void => {
  if (state.status !== 'active') throw new AppError('NOT_FOUND', 'role template not found', { resource: 'roleTemplate' })
}

const checkPermissions = (permissions: string[] | undefined): void => {
  if (permissions === undefined) return
  const unknown = permissions.filter((p) => !isPermission(p))
  if (unknown.length > 0) {
    throw invalidFields(unknown.map((p) => ({ field: 'permissions', message: `unknown permission "${p}"` })))
  }
}

const checkName = (name: string | undefined): void => {
  if (name !== undefined && name.trim() === '') throw invalidFields([{ field: 'body.name', message: 'must not be blank' }])
}

const unique = (values: string[]): string[] => [...new Set(values)]


/** The id of one of an organization's built-in templates (`administrator`, `analyst`). */
export const builtInRoleTemplateId = (organizationId: string, key: string): string => deterministicId('roleTemplate', organizationId, key)

/**
 * The built-in Administrator holds every permission: each start adds those
 * the catalogue gained, so one taken away would come back at the next start.
 */
const checkAdministratorKeepsAll = (state: RoleTemplateState, permissions: string[] | undefined): void => {
  if (permissions === undefined || state.roleTemplateId !== builtInRoleTemplateId(state.organizationId, 'administrator')) return
  const removed = state.permissions.filter((p) => !permissions.includes(p))
  if (removed.length === 0) return
  throw new AppError('BUILT_IN_ROLE_TEMPLATE', 'the built-in Administrator template holds every permission (each start adds the new ones); ' +
    'create a template of your own for a narrower role', { removed })
}

export const roleTemplateAggregate: Aggregate<RoleTemplateCommand, RoleTemplateEvent, RoleTemplateState> = {
  streamType: 'roleTemplate',
  eventTypes: ['RoleTemplateCreated', 'RoleTemplateUpdated', 'RoleTemplateAssigned', 'RoleTemplateUnassigned', 'RoleTemplateDeleted'],
  initialState: () => ({
    status: 'none', roleTemplateId: '', organizationId: '', name: '', description: '', permissions: [], isDefault: false, memberships: new Set(),
  }),
  decide(command, state) {
    switch (command.type) {
      case 'CreateRoleTemplate':
        if (state.status !== 'none') {
          // A creation with a Key that lost a race to the same Key (or came after it): the caller compares it with what the first made.
          if (command.idempotency !== undefined) return []
          throw new AppError('ALREADY_EXISTS', 'role template already exists')
        }
        checkName(command.name)
        checkPermissions(command.permissions)
        return [{ type: 'RoleTemplateCreated', data: {
          roleTemplateId: command.roleTemplateId, organizationId: command.organizationId, name: command.name,
          description: command.description, permissions: unique(command.permissions), isDefault: command.isDefault, createdAt: command.now,
          ...(command.idempotency === undefined ? {} : { idempotency: command.idempotency }),
        } }]
      case 'UpdateRoleTemplate': {
        requireActive(state)
        requireGrantableBy(command.grantor, [...state.permissions, ...(command.permissions ?? [])])
        checkName(command.name)
        checkPermissions(command.permissions)
        checkAdministratorKeepsAll(state, command.permissions)
        const changes = {
          ...(command.name !== undefined && command.name !== state.name ? { name: command.name } : {}),
          ...(command.description !== undefined && command.description !== state.description ? { description: command.description } : {}),
          ...(command.permissions !== undefined && !sameMembers(unique(command.permissions), state.permissions)
            ? { permissions: unique(command.permissions) } : {}),
          ...(command.isDefault !== undefined && command.isDefault !== state.isDefault ? { isDefault: command.isDefault } : {}),
        }
        if (Object.keys(changes).length === 0) return []
        return [{ type: 'RoleTemplateUpdated', data: {
          roleTemplateId: state.roleTemplateId, organizationId: state.organizationId, ...changes, updatedAt: command.now,
        } }]
      }
      case 'AssignRoleTemplate':
        requireActive(state)
        if (state.organizationId !== command.organizationId) {
          throw new AppError('NOT_FOUND', 'role template not found', { resource: 'roleTemplate' })
        }
        if (state.memberships.has(command.membershipId)) return []
        requireGrantableBy(command.grantor, state.permissions)
        return [{ type: 'RoleTemplateAssigned', data: {
          roleTemplateId: state.roleTemplateId, organizationId: state.organizationId, membershipId: command.membershipId,
        } }]
      case 'UnassignRoleTemplate':
        if (!state.memberships.has(command.membershipId)) return []
        return [{ type: 'RoleTemplateUnassigned', data: {
          roleTemplateId: state.roleTemplateId, organizationId: state.organizationId, membershipId: command.membershipId,
        } }]
      case 'DeleteRoleTemplate':
        requireActive(state)
        // Deleting strips a template as surely as an edit does.
        requireGrantableBy(command.grantor, state.permissions)
        if (state.memberships.size > 0) {
          throw new AppError('ROLE_TEMPLATE_IN_USE', `role template is used by ${state.memberships.size} membership(s)`, {
            usageCount: state.memberships.size,
          })
        }
        return [{ type: 'RoleTemplateDeleted', data: {
          roleTemplateId: state.roleTemplateId, organizationId: state.organizationId, deletedAt: command.now,
        } }]
      default: {
        const _never: never = command
        return _never
      }
    }
  },
  evolve(state, event) {
    switch (event.type) {
      case 'RoleTemplateCreated':
        return { ...state, status: 'active', roleTemplateId: event.data.roleTemplateId, organizationId: event.data.organizationId,
          name: event.data.name, description: event.data.description, permissions: event.data.permissions, isDefault: event.data.isDefault,
          ...(event.data.idempotency === undefined ? {} : { idempotency: event.data.idempotency }) }
      case 'RoleTemplateUpdated': {
        const { name = state.name, description = state.description, permissions = state.permissions, isDefault = state.isDefault } = event.data
        return { ...state, name, description, permissions, isDefault }
      }
      case 'RoleTemplateAssigned':
        return { ...state, memberships: new Set([...state.memberships, event.data.membershipId]) }
      case 'RoleTemplateUnassigned': {
        const memberships = new Set(state.memberships)
        memberships.delete(event.data.membershipId)
        return { ...state, memberships }
      }
      case 'RoleTemplateDeleted':
        return { ...state, status: 'deleted' }
      default: {
        const _never: never = event
        return _never
      }
    }
  },
}

/**
 * The id of the role template an organization's `Idempotency-Key` names: one
 * template per Key, whatever the concurrency. Its own namespace, so no Key
 * (`administrator`, say) names a built-in template.
 */
export const keyedRoleTemplateId = (organizationId: string, key: string): string => deterministicId('roleTemplate-key', organizationId, key)

/** What makes two creations with one Key "the same": the fields as the template takes them (permissions as a set, defaults filled in). */
export const roleTemplateRequestHash = (fields: RoleTemplateFields): string =>
  hashRequest([fields.name, fields.description, unique(fields.permissions).sort(), fields.isDefault])

/**
 * A role template's creation under an `Idempotency-Key`: the first creates
 * it, the same request again gets it back (`created: false`) whatever it has
 * become, deleted included; another request with the Key is 409
 * `IDEMPOTENCY_KEY_REUSED`. Templates are the organization's, so whoever may
 * create one may have it back.
 */
export const createRoleTemplateOnce = (
  commands: CommandHandler, command: Extract<RoleTemplateCommand, { type: 'CreateRoleTemplate' }> & { idempotency: RequestKey }, context: CommandContext,
): Promise<{ created: boolean; position: number }> => createStreamOnce(commands, roleTemplateAggregate, command.roleTemplateId, command, context, {
  what: 'role template creation request', details: { roleTemplateId: command.roleTemplateId }, exists: (state) => state.status !== 'none',
})

import { membershipId, type PrincipalType } from '../events/membership.js'
import { usernameStreamId } from '../events/user.js'
import { AppError } from '../shared/errors.js'
import { deterministicId } from '../shared/ids.js'
import { allPermissions, builtInRoleTemplates } from '../shared/permissions.js'
import type { CommandContext, CommandHandler } from './handler.js'
import { membershipAggregate } from './membership.js'
import { oauthClientAggregate } from './oauthClient.js'
import { organizationAggregate } from './organization.js'
import { roleTemplateAggregate } from './roleTemplate.js'
import { userAggregate, usernameAggregate } from './user.js'

/**
 * Workflows over several aggregates, each step a command; every step is
 * idempotent so a retry after a crash completes the work. A creation cut off
 * between its steps (a crash, a lost connection to the store) is finished or
 * undone by the registration recovery (src/processes/registrationRecovery.ts).
 */

export const builtInRoleTemplateId = (organizationId: string, key: string): string => deterministicId('roleTemplate', organizationId, key)

const maxPosition = (positions: number[]) => Math.max(0, ...positions)

/**
 * Creates the built-in role templates of an organization unless they exist,
 * and keeps the Administrator template complete: permissions the catalogue
 * gained since it was created are added to it.
 */
export const ensureDefaultRoleTemplates = async (commands: CommandHandler, organizationId: string, now: string, context: CommandContext) => {
  const positions: number[] = []
  for (const template of builtInRoleTemplates) {
    const id = builtInRoleTemplateId(organizationId, template.key)
    const { state } = await commands.load(roleTemplateAggregate, id)
    if (state.status === 'deleted') continue
    if (state.status === 'active') {
      const missing = template.key === 'administrator' ? allPermissions.filter((p) => !state.permissions.includes(p)) : []
      if (missing.length === 0) continue
      const upgraded = await commands.execute(roleTemplateAggregate, id, {
        type: 'UpdateRoleTemplate', permissions: [...state.permissions, ...missing], now,
      }, context)
      positions.push(upgraded.position)
      continue
    }
    try {
      const result = await commands.execute(roleTemplateAggregate, id, {
        type: 'CreateRoleTemplate', roleTemplateId: id, organizationId, name: template.name, description: template.description,
        permissions: [...template.permissions], isDefault: template.isDefault, now,
      }, context)
      positions.push(result.position)
    } catch (error) {
      // The start-up bootstrap and the organizationSetup process may race to create it: either way it exists.
      if (!(error instanceof AppError && error.code === 'ALREADY_EXISTS')) throw error
      positions.push((await commands.load(roleTemplateAggregate, id)).position)
    }
  }
  return maxPosition(positions)
}

export const createOrganization = async (
  commands: CommandHandler,
  input: { organizationId: string; name: string; defaultConfigId: string; now: string },
  context: CommandContext,
) => {
  const created = await commands.execute(organizationAggregate, input.organizationId, { type: 'CreateOrganization', ...input }, context)
  const templates = await ensureDefaultRoleTemplates(commands, input.organizationId, input.now, { ...context, organizationId: input.organizationId })
  return { organization: created.state, position: maxPosition([created.position, templates]) }
}

const requireActiveOrganization = async (commands: CommandHandler, organizationId: string) => {
  const { state } = await commands.load(organizationAggregate, organizationId)
  if (state.status === 'none') throw new AppError('NOT_FOUND', `organization ${organizationId} not found`, { resource: 'organization' })
  if (state.status !== 'active') throw new AppError('ORGANIZATION_INACTIVE', `organization ${organizationId} is inactive`)
  return state
}

const unknownRoleTemplate = (organizationId: string, roleTemplateId: string) =>
  new AppError('VALIDATION_ERROR', `role template ${roleTemplateId} does not exist in organization ${organizationId}`, {
    errors: [{ field: 'body.roleTemplateId', message: 'unknown role template in this organization' }],
  })

const requireRoleTemplate = async (commands: CommandHandler, organizationId: string, roleTemplateId: string) => {
  const { state } = await commands.load(roleTemplateAggregate, roleTemplateId)
  if (state.status !== 'active' || state.organizationId !== organizationId) throw unknownRoleTemplate(organizationId, roleTemplateId)
}

interface MembershipInput { organizationId: string; principalId: string; principalType: PrincipalType; roleTemplateId: string }

/**
 * Makes a principal (`register`) and links it to the organization with a
 * role template. The template's use is recorded first: from then on it
 * cannot be deleted, and a template deleted since `requireRoleTemplate`
 * looked is refused before anything is written. When `register` is refused
 * (a username or client id taken), the use it recorded is withdrawn, so a
 * refusal leaves nothing.
 */
const registerWithMembership = async <T extends { position: number }>(
  commands: CommandHandler, input: MembershipInput, context: CommandContext, register: () => Promise<T>,
) => {
  const id = membershipId(input.organizationId, input.principalId)
  const assigned = await commands.execute(roleTemplateAggregate, input.roleTemplateId, {
    type: 'AssignRoleTemplate', membershipId: id, organizationId: input.organizationId,
  }, context).catch((error: unknown) => {
    throw error instanceof AppError && error.code === 'NOT_FOUND' ? unknownRoleTemplate(input.organizationId, input.roleTemplateId) : error
  })
  let registered: T
  try {
    registered = await register()
  } catch (error) {
    // Only a use this call recorded: an existing principal's membership (a client id registered twice) keeps its own.
    if (assigned.events.length > 0) await commands.execute(roleTemplateAggregate, input.roleTemplateId, { type: 'UnassignRoleTemplate', membershipId: id }, context)
    throw error
  }
  const granted = await commands.execute(membershipAggregate, id, { type: 'GrantMembership', membershipId: id, ...input }, context)
  return { registered, membershipId: id, position: maxPosition([assigned.position, registered.position, granted.position]) }
}

export const createUser = async (
  commands: CommandHandler,
  input: { userId: string; username: string; passwordHash: string; organizationId: string; roleTemplateId: string; encryptedTotpSecret: string | null; now: string },
  context: CommandContext,
) => {
  await requireActiveOrganization(commands, input.organizationId)
  await requireRoleTemplate(commands, input.organizationId, input.roleTemplateId)
  const membership = { organizationId: input.organizationId, principalId: input.userId, principalType: 'user' as const, roleTemplateId: input.roleTemplateId }
  const made = await registerWithMembership(commands, membership, context, async () => {
    const claim = await commands.execute(usernameAggregate, usernameStreamId(input.username), {
      type: 'ClaimUsername', username: input.username, userId: input.userId,
    }, context)
    const registered = await commands.execute(userAggregate, input.userId, {
      type: 'RegisterUser', userId: input.userId, username: input.username, passwordHash: input.passwordHash,
      organizationId: input.organizationId, encryptedTotpSecret: input.encryptedTotpSecret, now: input.now,
    }, context)
    return { user: registered.state, position: maxPosition([claim.position, registered.position]) }
  })
  return { user: made.registered.user, membershipId: made.membershipId, position: made.position }
}

export const createClient = async (
  commands: CommandHandler,
  input: { clientId: string; name: string; secretHash: string; scopes: string[]; organizationId: string; roleTemplateId: string; now: string },
  context: CommandContext,
) => {
  await requireActiveOrganization(commands, input.organizationId)
  await requireRoleTemplate(commands, input.organizationId, input.roleTemplateId)
  const membership = { organizationId: input.organizationId, principalId: input.clientId, principalType: 'client' as const, roleTemplateId: input.roleTemplateId }
  const made = await registerWithMembership(commands, membership, context, () => commands.execute(oauthClientAggregate, clientStreamId(input.clientId), {
    type: 'RegisterClient', clientId: input.clientId, name: input.name, secretHash: input.secretHash, scopes: input.scopes,
    organizationId: input.organizationId, now: input.now,
  }, context))
  return { client: made.registered.state, position: made.position }
}

/** Client ids are free text (ADMIN_CLIENT_ID may be any name); their stream id is derived from it. */
export const clientStreamId = (clientId: string): string => deterministicId('oauthClient', clientId)

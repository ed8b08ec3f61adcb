import { membershipId, type MembershipEvent, type PrincipalType } from '../events/membership.js'
import type { RequestKey } from '../events/types.js'
import { usernameStreamId } from '../events/user.js'
import { AppError } from '../shared/errors.js'
import { deterministicId } from '../shared/ids.js'
import { KeyedLock } from '../shared/keyedLock.js'
import { allPermissions, builtInRoleTemplates, requireGrantableBy, type Grantor } from '../shared/permissions.js'
import type { CommandContext, CommandHandler, CommandResult } from './handler.js'
import { createStreamOnce } from './idempotency.js'
import { membershipAggregate, type MembershipState } from './membership.js'
import { oauthClientAggregate } from './oauthClient.js'
import { organizationAggregate } from './organization.js'
import { builtInRoleTemplateId, roleTemplateAggregate } from './roleTemplate.js'
import { userAggregate, usernameAggregate } from './user.js'

/**
 * Workflows over several aggregates, each step a command; every step is
 * idempotent so a retry after a crash completes the work. A creation cut off
 * between its steps (a crash, a lost connection to the store) is finished or
 * undone by the registration recovery (src/processes/registrationRecovery.ts).
 */

export { builtInRoleTemplateId }

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
        type: 'UpdateRoleTemplate', grantor: 'all', permissions: [...state.permissions, ...missing], now,
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

/**
 * `createOrganization` under the platform administrator's `Idempotency-Key`
 * (the id from `keyedOrganizationId`): the first creates it, the same request
 * again gets it back (`created: false`), another is 409
 * `IDEMPOTENCY_KEY_REUSED`. Either way the built-in role templates are
 * ensured, so a retry also completes a creation cut off before them.
 */
export const createOrganizationOnce = async (
  commands: CommandHandler,
  input: { organizationId: string; name: string; defaultConfigId: string; now: string; idempotency: RequestKey },
  context: CommandContext,
) => {
  const once = await createStreamOnce(commands, organizationAggregate, input.organizationId, { type: 'CreateOrganization', ...input }, context, {
    what: 'organization creation request', details: { organizationId: input.organizationId }, exists: (state) => state.status !== 'none',
  })
  const templates = await ensureDefaultRoleTemplates(commands, input.organizationId, input.now, { ...context, organizationId: input.organizationId })
  return { created: once.created, position: maxPosition([once.position, templates]) }
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
 * Records that a membership uses a template; a template deleted (or never made) meanwhile is refused as the request's
 * own field, one the grantor may no longer grant (widened meanwhile) with 403.
 */
const recordUse = (commands: CommandHandler, membership: string, organizationId: string, roleTemplateId: string, grantor: Grantor, context: CommandContext) =>
  commands.execute(roleTemplateAggregate, roleTemplateId, { type: 'AssignRoleTemplate', membershipId: membership, organizationId, grantor }, context)
    .catch((error: unknown) => {
      throw error instanceof AppError && error.code === 'NOT_FOUND' ? unknownRoleTemplate(organizationId, roleTemplateId) : error
    })

const withdrawUse = (commands: CommandHandler, membership: string, roleTemplateId: string, context: CommandContext) =>
  commands.execute(roleTemplateAggregate, roleTemplateId, { type: 'UnassignRoleTemplate', membershipId: membership }, context)

/**
 * Makes a principal (`register`) and links it to the organization with a
 * role template. The template's use is recorded first: from then on it
 * cannot be deleted, and a template deleted since `requireRoleTemplate`
 * looked is refused before anything is written. When `register` is refused
 * (a username or client id taken), the use it recorded is withdrawn, so a
 * refusal leaves nothing.
 */
const registerWithMembership = async <T extends { position: number }>(
  commands: CommandHandler, input: MembershipInput, grantor: Grantor, context: CommandContext, register: () => Promise<T>,
) => {
  const id = membershipId(input.organizationId, input.principalId)
  const assigned = await recordUse(commands, id, input.organizationId, input.roleTemplateId, grantor, context)
  let registered: T
  try {
    registered = await register()
  } catch (error) {
    // Only a use this call recorded: an existing principal's membership (a client id registered twice) keeps its own.
    if (assigned.events.length > 0) await withdrawUse(commands, id, input.roleTemplateId, context)
    throw error
  }
  const granted = await commands.execute(membershipAggregate, id, { type: 'GrantMembership', membershipId: id, ...input }, context)
  return { registered, membershipId: id, position: maxPosition([assigned.position, registered.position, granted.position]) }
}

// Two changes of one membership interleaved could withdraw the use of the template the other just moved it to (each
// template counts a membership once): within a process they run one after the other.
const roleChanges = new KeyedLock()

/**
 * Moves a principal's membership to another role template. The new template's use is recorded first (from then on it
 * cannot be deleted; one deleted since `requireRoleTemplate` looked is refused before anything else is written), then
 * the membership changes, then the old template's use is withdrawn. A refused change withdraws the use this call
 * recorded; a crash between the steps leaves at worst a use no membership has (it only keeps a template from being
 * deleted), never a membership on a template whose use is unrecorded. The same template again writes nothing.
 */
export const changeMemberRole = (
  commands: CommandHandler, input: { organizationId: string; principalId: string; roleTemplateId: string; grantor: Grantor }, context: CommandContext,
) => {
  const id = membershipId(input.organizationId, input.principalId)
  return roleChanges.run(id, async () => {
    const { state, position } = await commands.load(membershipAggregate, id)
    if (state.status !== 'active') throw new AppError('NOT_FOUND', 'membership not found', { resource: 'membership' })
    if (state.roleTemplateId === input.roleTemplateId) return { changed: false, position }
    // Taking a member off a role takes its permissions away: the grantor must hold the role the membership has now, as
    // this turn finds it (an administrator's concurrent promotion moved it to the Administrator template, say).
    await requireMembershipRoleHeld(commands, id, input.grantor)
    await requireRoleTemplate(commands, input.organizationId, input.roleTemplateId)
    const assigned = await recordUse(commands, id, input.organizationId, input.roleTemplateId, input.grantor, context)
    let moved: CommandResult<MembershipEvent, MembershipState>
    try {
      moved = await commands.execute(membershipAggregate, id, { type: 'ChangeMembershipRole', roleTemplateId: input.roleTemplateId }, context)
    } catch (error) {
      if (assigned.events.length > 0) await withdrawUse(commands, id, input.roleTemplateId, context)
      throw error
    }
    // The template the change left, as recorded: another process may have changed the membership since the load.
    const left = moved.events.flatMap((event) => event.type === 'MembershipRoleChanged' ? [event.data.previousRoleTemplateId] : [])
    const withdrawn = await Promise.all(left.map((roleTemplateId) => withdrawUse(commands, id, roleTemplateId, context)))
    return { changed: moved.events.length > 0, position: maxPosition([assigned.position, moved.position, ...withdrawn.map((w) => w.position)]) }
  })
}

/**
 * The grantor holds the role the membership has as its turn finds it. A principal without an active membership is a
 * creation cut off before its grant (the registration recovery may still grant the role it was given, an
 * Administrator's say): only an administrator acts on it.
 */
const requireMembershipRoleHeld = async (commands: CommandHandler, membership: string, grantor: Grantor): Promise<void> => {
  const { state } = await commands.load(membershipAggregate, membership)
  if (state.status !== 'active') {
    if (grantor === 'all') return
    throw new AppError('FORBIDDEN', 'the member\'s role is not granted yet (its creation is being completed): only an administrator may act on it', {
      permission: 'AdministerOrganization',
    })
  }
  const { state: role } = await commands.load(roleTemplateAggregate, state.roleTemplateId)
  requireGrantableBy(grantor, role.permissions)
}

/**
 * Acts on a member (deactivating, reactivating or unlocking a user, resetting its password, giving a client a new
 * secret) in its membership's turn, the one role changes take, once the grantor is found to hold the member's role
 * then: an administrator's promotion of the member racing the act comes before it (and refuses it) or after it. The
 * route's check on the read model stays the early answer.
 */
export const actOnMember = <T>(
  commands: CommandHandler, input: { organizationId: string; principalId: string; grantor: Grantor }, act: () => Promise<T>,
): Promise<T> => {
  const id = membershipId(input.organizationId, input.principalId)
  return roleChanges.run(id, async () => {
    await requireMembershipRoleHeld(commands, id, input.grantor)
    return act()
  })
}

/**
 * Withdraws a template's use that a cut-off creation or role change left (the registration recovery). Taken in turn
 * with role changes, and skipped when the membership uses the template after all (a later change moved it back).
 */
export const withdrawLeftUse = (commands: CommandHandler, membership: string, roleTemplateId: string, context: CommandContext) =>
  roleChanges.run(membership, async () => {
    const { state } = await commands.load(membershipAggregate, membership)
    if (state.status === 'active' && state.roleTemplateId === roleTemplateId) return { events: [], position: 0 }
    return withdrawUse(commands, membership, roleTemplateId, context)
  })

export const createUser = async (
  commands: CommandHandler,
  input: {
    userId: string; username: string; passwordHash: string; organizationId: string; roleTemplateId: string; encryptedTotpSecret: string | null; now: string
    /** Who gives the user its role template (`all` for an administrator). */
    grantor: Grantor
  },
  context: CommandContext,
) => {
  await requireActiveOrganization(commands, input.organizationId)
  await requireRoleTemplate(commands, input.organizationId, input.roleTemplateId)
  const claimUsername = { type: 'ClaimUsername' as const, username: input.username, userId: input.userId }
  // A name already taken is refused before the template's use is recorded, so the refusal writes nothing; the claim
  // below decides again, for a name taken meanwhile (its refusal then withdraws the use).
  const { state: name } = await commands.load(usernameAggregate, usernameStreamId(input.username))
  usernameAggregate.decide(claimUsername, name)
  const membership = { organizationId: input.organizationId, principalId: input.userId, principalType: 'user' as const, roleTemplateId: input.roleTemplateId }
  const made = await registerWithMembership(commands, membership, input.grantor, context, async () => {
    const claim = await commands.execute(usernameAggregate, usernameStreamId(input.username), claimUsername, context)
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
  input: {
    clientId: string; name: string; secretHash: string; scopes: string[]; organizationId: string; roleTemplateId: string; now: string
    /** Who gives the client its role template (`all` for an administrator). */
    grantor: Grantor
  },
  context: CommandContext,
) => {
  await requireActiveOrganization(commands, input.organizationId)
  await requireRoleTemplate(commands, input.organizationId, input.roleTemplateId)
  const membership = { organizationId: input.organizationId, principalId: input.clientId, principalType: 'client' as const, roleTemplateId: input.roleTemplateId }
  const made = await registerWithMembership(commands, membership, input.grantor, context, () => commands.execute(oauthClientAggregate, clientStreamId(input.clientId), {
    type: 'RegisterClient', clientId: input.clientId, name: input.name, secretHash: input.secretHash, scopes: input.scopes,
    organizationId: input.organizationId, now: input.now,
  }, context))
  return { client: made.registered.state, position: made.position }
}

/** Client ids are free text (ADMIN_CLIENT_ID may be any name); their stream id is derived from it. */
export const clientStreamId = (clientId: string): string => deterministicId('oauthClient', clientId)

/**
 * Revokes a client for good and withdraws its membership's use of its role
 * template: nothing can bring a revoked client back, so its template is
 * free to delete (a deactivated user, who may be reactivated, keeps its).
 * A crash between the two leaves the use, which only keeps the template
 * from being deleted.
 */
export const revokeClient = async (
  commands: CommandHandler, input: { organizationId: string; clientId: string; grantor: Grantor }, context: CommandContext,
) => {
  const id = membershipId(input.organizationId, input.clientId)
  // In the membership's turn from the grantor's check on: a promotion of the client racing its revocation is refused or after it.
  return roleChanges.run(id, async () => {
    await requireMembershipRoleHeld(commands, id, input.grantor)
    const revoked = await commands.execute(oauthClientAggregate, clientStreamId(input.clientId), { type: 'RevokeClient' }, context)
    const { state } = await commands.load(membershipAggregate, id)
    const withdrawn = state.status === 'active' ? await withdrawUse(commands, id, state.roleTemplateId, context) : { position: 0 }
    return { client: revoked.state, position: maxPosition([revoked.position, withdrawn.position]) }
  })
}

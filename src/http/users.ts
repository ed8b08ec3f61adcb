import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { actOnMember, changeMemberRole } from '../commands/identity.js'
import { userAggregate, type UserCommand } from '../commands/user.js'
import { hashSecret, refuseWeakPassword } from '../identity/passwords.js'
import type { UserDoc } from '../projections/principals.js'
import type { MembershipDoc } from '../projections/memberships.js'
import type { Services } from '../services.js'
import { AppError, notFound } from '../shared/errors.js'
import { commandContext, grantorOf, organizationOf, principalOf } from './context.js'
import { requireAssignable, requireMemberRoleHeld } from './plugins/organization.js'
import { failures, PageQuery, Pagination, pagination, RoleChangeBody, Timestamp, Uuid } from './schemas.js'

const User = Type.Object({
  id: Uuid,
  username: Type.String(),
  organizationId: Uuid,
  roleTemplateId: Type.Union([Uuid, Type.Null()], { description: 'the role template of the user\'s membership; null once it is revoked' }),
  active: Type.Boolean({ description: 'false once deactivated: every token of the user is refused and it cannot sign in' }),
  totpEnrolled: Type.Boolean(),
  signInLockedUntil: Type.Union([Timestamp, Type.Null()], {
    description: 'while too many wrong passwords or codes lock the user\'s sign-in, until when; otherwise null',
  }),
  createdAt: Timestamp,
})

const UserParams = Type.Object({ entityid: Uuid, userId: Uuid })
const UserAnswer = Type.Object({ status: Type.Literal('success'), data: Type.Object({ user: User }) })
const NewPassword = Type.Object({ newPassword: Type.String({ minLength: 8, maxLength: 200 }) }, { additionalProperties: false })

/**
 * The users of an organization: list, look up, deactivate, reactivate, unlock, reset a password, change the role (permission
 * ManageMembers). Unless an administrator, a caller changes only users whose role template's permissions it holds itself,
 * and gives only a role whose permissions it holds (403 FORBIDDEN otherwise).
 */
export const userRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const { queries, commands } = services

  /** The user as answered, with the role of its membership (none once revoked). */
  const view = (doc: UserDoc, membership: MembershipDoc | null | undefined) => {
    const now = services.clock.now().getTime()
    const lockedUntil = doc.signInLockedUntil ?? null
    return {
      id: doc._id, username: doc.username, organizationId: doc.organizationId, roleTemplateId: membership?.roleTemplateId ?? null,
      active: doc.active, totpEnrolled: doc.totpEnrolled,
      signInLockedUntil: lockedUntil !== null && Date.parse(lockedUntil) > now ? lockedUntil : null, createdAt: doc.createdAt,
    }
  }

  const viewOf = async (doc: UserDoc) => view(doc, await queries.memberships.of(doc._id, doc.organizationId))

  /** The user, when it belongs to the organization of the path; another organization's is not found. */
  const userIn = async (organizationId: string, userId: string): Promise<UserDoc> => {
    const doc = await queries.principals.user(userId)
    if (doc === null || doc.organizationId !== organizationId) throw notFound('user', userId)
    return doc
  }

  /** Who may act on a user may hold its role: a caller changes only users whose permissions it holds (administrators any). */
  const change = async (request: FastifyRequest, organizationId: string, userId: string, command: UserCommand) => {
    await userIn(organizationId, userId)
    await requireMemberRoleHeld(queries, principalOf(request), organizationOf(request), userId)
    const changed = await actOnMember(commands, { organizationId, principalId: userId, grantor: grantorOf(request) },
      () => commands.execute(userAggregate, userId, command, commandContext(request)))
    await services.settle(changed.position)
    return { status: 'success' as const, data: { user: await viewOf(await userIn(organizationId, userId)) } }
  }

  app.get('/organization/:entityid/users', {
    config: { organization: 'path', permissions: ['ManageMembers'] },
    schema: {
      summary: 'The organization\'s users, newest first',
      tags: ['Administration'],
      params: Type.Object({ entityid: Uuid }),
      querystring: PageQuery,
      response: { 200: Type.Object({ status: Type.Literal('success'), data: Type.Array(User), pagination: Pagination }), ...failures(400, 401, 403) },
    },
  }, async (request) => {
    const { page, limit } = request.query
    const { items, total } = await queries.principals.userPage(request.params.entityid, { offset: (page - 1) * limit, limit })
    const memberships = await queries.memberships.activeOf(items.map((doc) => doc._id), request.params.entityid)
    return { status: 'success' as const, data: items.map((doc) => view(doc, memberships.get(doc._id))), pagination: pagination(page, limit, total) }
  })

  app.get('/organization/:entityid/users/:userId', {
    config: { organization: 'path', permissions: ['ManageMembers'] },
    schema: {
      summary: 'One user of the organization',
      tags: ['Administration'],
      params: UserParams,
      response: { 200: UserAnswer, ...failures(400, 401, 403, 404) },
    },
  }, async (request) => {
    const { entityid, userId } = request.params
    return { status: 'success' as const, data: { user: await viewOf(await userIn(entityid, userId)) } }
  })

  app.post('/organization/:entityid/users/:userId/deactivate', {
    config: { organization: 'path', permissions: ['ManageMembers'] },
    schema: {
      summary: 'Deactivate a user',
      description: 'Every token of the user is refused from this answer on (401 INVALID_TOKEN), and it can no longer sign in. ' +
        'Its history and the records naming it stay. A caller cannot deactivate itself (409 CONFLICT). Deactivating again changes nothing.',
      tags: ['Administration'],
      params: UserParams,
      response: { 200: UserAnswer, ...failures(400, 401, 403, 404, 409) },
    },
  }, async (request) => {
    const { entityid, userId } = request.params
    if (principalOf(request).id === userId) throw new AppError('CONFLICT', 'a user cannot deactivate itself')
    return change(request, entityid, userId, { type: 'DeactivateUser' })
  })

  app.post('/organization/:entityid/users/:userId/unlock', {
    config: { organization: 'path', permissions: ['ManageMembers'] },
    schema: {
      summary: 'Lift a sign-in lock',
      description: 'Ends a lock that too many wrong passwords or codes put on the user\'s sign-in, and starts the count of failures ' +
        'again (event UserSignInUnlocked). A user that is not locked and has no failures is left as it is.',
      tags: ['Administration'],
      params: UserParams,
      response: { 200: UserAnswer, ...failures(400, 401, 403, 404) },
    },
  }, async (request) => {
    const { entityid, userId } = request.params
    return change(request, entityid, userId, { type: 'UnlockSignIn', now: services.clock.now().toISOString() })
  })

  app.post('/organization/:entityid/users/:userId/password', {
    config: { organization: 'path', permissions: ['ManageMembers'], scopes: ['passwords:write'] },
    schema: {
      summary: 'Set a user\'s password (a reset by an administrator)',
      description: 'For a user who forgot the password: no current password is asked. As with POST /me/password, every token ' +
        'the user holds ends at once; a sign-in lock is lifted. Give the new password to the user by a channel of your own. ' +
        'A deactivated user is refused (409 NOT_ACTIVE), and so is the caller itself (409 CONFLICT: POST /me/password asks for the current password).',
      tags: ['Administration'],
      params: UserParams,
      body: NewPassword,
      response: { 204: Type.Null({ description: 'set' }), ...failures(400, 401, 403, 404, 409) },
    },
  }, async (request, reply) => {
    const { entityid, userId } = request.params
    // A reset asks for no current password; one's own goes through POST /me/password, which does and counts wrong ones.
    if (principalOf(request).id === userId) throw new AppError('CONFLICT', 'a user changes its own password with POST /v1/me/password, which asks for the current one')
    refuseWeakPassword(request.body.newPassword, (await userIn(entityid, userId)).username, 'body.newPassword')
    await change(request, entityid, userId, {
      type: 'ResetPassword', passwordHash: await hashSecret(request.body.newPassword), now: services.clock.now().toISOString(),
    })
    return reply.code(204).send(null)
  })

  app.post('/organization/:entityid/users/:userId/reactivate', {
    config: { organization: 'path', permissions: ['ManageMembers'], scopes: ['passwords:write'] },
    schema: {
      summary: 'Reactivate a deactivated user with a new password',
      description: 'The user can sign in again, with this password only: the tokens it held before the deactivation stay refused ' +
        '(401 INVALID_TOKEN), as after a password reset, and a sign-in lock is lifted. Give the password to the user by a channel ' +
        'of your own. An active user is refused (409 CONFLICT).',
      tags: ['Administration'],
      params: UserParams,
      body: NewPassword,
      response: { 200: UserAnswer, ...failures(400, 401, 403, 404, 409) },
    },
  }, async (request) => {
    const { entityid, userId } = request.params
    refuseWeakPassword(request.body.newPassword, (await userIn(entityid, userId)).username, 'body.newPassword')
    return change(request, entityid, userId, {
      type: 'ReactivateUser', passwordHash: await hashSecret(request.body.newPassword), now: services.clock.now().toISOString(),
    })
  })

  app.put('/organization/:entityid/users/:userId/role', {
    config: { organization: 'path', permissions: ['ManageMembers'] },
    schema: {
      summary: 'Change a user\'s role template',
      description: 'The user\'s permissions are the new template\'s from this answer on, for the tokens it already holds too. Unless an ' +
        'administrator, the caller must hold the permissions of the user\'s current template and of the new one (403 FORBIDDEN). ' +
        'An unknown template, or one of another organization, is a 400 naming body.roleTemplateId. A caller cannot change its own ' +
        'role (409 CONFLICT), nor a deactivated user\'s (409 NOT_ACTIVE). The same template again changes nothing.',
      tags: ['Administration'],
      params: UserParams,
      body: RoleChangeBody,
      response: { 200: UserAnswer, ...failures(400, 401, 403, 404, 409) },
    },
  }, async (request) => {
    const { entityid, userId } = request.params
    const principal = principalOf(request)
    if (principal.id === userId) throw new AppError('CONFLICT', 'a caller cannot change its own role')
    const doc = await userIn(entityid, userId)
    await requireMemberRoleHeld(queries, principal, organizationOf(request), userId)
    await requireAssignable(queries, principal, organizationOf(request), request.body.roleTemplateId)
    if (!doc.active) throw new AppError('NOT_ACTIVE', 'the user is deactivated')
    const changed = await changeMemberRole(commands, {
      organizationId: entityid, principalId: userId, roleTemplateId: request.body.roleTemplateId, grantor: grantorOf(request),
    },
      commandContext(request))
    await services.settle(changed.position)
    // A role change writes the membership only: the user document read above is still the user's, and the view reads the membership.
    return { status: 'success' as const, data: { user: await viewOf(doc) } }
  })
}

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { userAggregate } from '../commands/user.js'
import { hashSecret, refuseWeakPassword, verifySecret } from '../identity/passwords.js'
import type { Services } from '../services.js'
import { AppError, invalidFields } from '../shared/errors.js'
import { commandContext, organizationOf, principalOf } from './context.js'
import { failures, OrganizationHeaders } from './schemas.js'

/** Who the caller is, and what it may do in an organization (for clients that adapt their UI). */
export const meRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  app.get('/me', {
    schema: {
      summary: 'The authenticated principal',
      tags: ['Identity'],
      response: {
        200: Type.Object({ status: Type.Literal('success'), data: Type.Object({
          kind: Type.Union([Type.Literal('user'), Type.Literal('client')]), id: Type.String(), clientId: Type.String(), scopes: Type.Array(Type.String()),
        }) }),
        ...failures(401),
      },
    },
  }, async (request) => {
    const principal = principalOf(request)
    return { status: 'success' as const, data: { kind: principal.kind, id: principal.id, clientId: principal.clientId, scopes: [...principal.scopes] } }
  })

  app.get('/me/permissions', {
    config: { organization: 'header' },
    schema: {
      summary: 'The caller\'s permissions in the organization of the Organization-ID header',
      tags: ['Identity'],
      headers: OrganizationHeaders,
      response: {
        200: Type.Object({ status: Type.Literal('success'), data: Type.Object({
          organizationId: Type.String(), permissions: Type.Array(Type.String()), isAdministrator: Type.Boolean(),
        }) }),
        ...failures(400, 401, 403),
      },
    },
  }, async (request) => {
    const organization = organizationOf(request)
    return { status: 'success' as const, data: {
      organizationId: organization.id, permissions: [...organization.permissions].sort(), isAdministrator: organization.isAdministrator,
    } }
  })

  app.post('/me/password', {
    config: { scopes: ['passwords:write'] },
    schema: {
      summary: 'Change the caller\'s password',
      description: 'For a user token with scope `passwords:write`. Every token issued before the change stops working at once: ' +
        'the access tokens (401 INVALID_TOKEN), the refresh tokens and pending mfa_tokens (invalid_grant), this request\'s token included. ' +
        'Sign in again with the new password. A wrong current password counts as a failed sign-in: after SIGN_IN_MAX_FAILURES in a row ' +
        'the user\'s sign-in and this route are locked for SIGN_IN_LOCKOUT_SECONDS (429 SIGN_IN_LOCKED with Retry-After).',
      tags: ['Identity'],
      body: Type.Object({
        currentPassword: Type.String({ minLength: 1, maxLength: 200 }),
        newPassword: Type.String({ minLength: 8, maxLength: 200 }),
      }, { additionalProperties: false }),
      response: { 204: Type.Null({ description: 'changed' }), ...failures(400, 401, 403, 409, 429) },
    },
  }, async (request, reply) => {
    const principal = principalOf(request)
    if (principal.kind !== 'user') throw new AppError('FORBIDDEN', 'only a user has a password; this token is a client\'s')
    const { currentPassword, newPassword } = request.body
    const { state: user } = await services.commands.load(userAggregate, principal.id)
    if (!user.exists) throw new AppError('INVALID_TOKEN', 'the user of this token no longer exists')
    refuseWeakPassword(newPassword, user.username, 'body.newPassword')
    const context = { ...commandContext(request), organizationId: user.organizationId }
    const changed = await services.signIns.attempt({
      userId: principal.id, reason: 'password', context,
      verify: async (state) => await verifySecret(currentPassword, state.passwordHash) ? true : null,
      wrong: () => invalidFields([{ field: 'body.currentPassword', message: 'is not the current password' }]),
      right: async (state) => {
        if (newPassword === currentPassword) throw invalidFields([{ field: 'body.newPassword', message: 'must differ from the current password' }])
        return services.commands.execute(userAggregate, principal.id, {
          type: 'ChangePassword', passwordHash: await hashSecret(newPassword), expectedPasswordVersion: state.passwordVersion,
          now: services.clock.now().toISOString(),
        }, context)
      },
    })
    await services.settle(changed.position)
    return reply.code(204).send(null)
  })
}

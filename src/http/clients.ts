import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { actOnMember, changeMemberRole, clientStreamId, revokeClient } from '../commands/identity.js'
import { oauthClientAggregate } from '../commands/oauthClient.js'
import { generateSecret, hashSecret } from '../identity/passwords.js'
import type { ClientDoc } from '../projections/principals.js'
import type { MembershipDoc } from '../projections/memberships.js'
import type { Services } from '../services.js'
import { AppError, notFound } from '../shared/errors.js'
import { ADMIN_SCOPE } from '../shared/permissions.js'
import { commandContext, grantorOf, organizationOf, principalOf } from './context.js'
import { requireAssignable, requireMemberRoleHeld, requireScopesHeld } from './plugins/organization.js'
import { failures, PageQuery, Pagination, pagination, RoleChangeBody, Timestamp, Uuid } from './schemas.js'

const Client = Type.Object({
  client_id: Type.String(),
  name: Type.String(),
  scopes: Type.Array(Type.String()),
  organizationId: Uuid,
  roleTemplateId: Type.Union([Uuid, Type.Null()], { description: 'the role template of the client\'s membership; null once it is revoked' }),
  revoked: Type.Boolean({ description: 'true once revoked: every token of the client, and of users signed in through it, is refused' }),
  createdAt: Timestamp,
})

const ClientParams = Type.Object({ entityid: Uuid, clientId: Type.String({ minLength: 1, maxLength: 128 }) })
const ClientAnswer = Type.Object({ status: Type.Literal('success'), data: Type.Object({ client: Client }) })

/**
 * The OAuth clients of an organization: list, revoke, rotate a secret, change the role (permission ManageMembers, scope
 * clients:write to change).
 */
export const clientRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const { queries, commands } = services

  /** The client as answered, with the role of its membership (none once revoked). */
  const view = (doc: ClientDoc, membership: MembershipDoc | null | undefined) => ({
    client_id: doc._id, name: doc.name, scopes: doc.scopes, organizationId: doc.organizationId, roleTemplateId: membership?.roleTemplateId ?? null,
    revoked: doc.revoked, createdAt: doc.createdAt,
  })

  const viewOf = async (doc: ClientDoc) => view(doc, await queries.memberships.of(doc._id, doc.organizationId))

  /**
   * The client, when the caller may change it: of the path's organization, not the caller's own, `*` only for a platform
   * administrator, scopes the caller holds, and a role whose permissions the caller holds.
   */
  const changeableClient = async (request: FastifyRequest, organizationId: string, clientId: string): Promise<ClientDoc> => {
    const doc = await queries.principals.client(clientId)
    if (doc === null || doc.organizationId !== organizationId) throw notFound('client', clientId)
    const principal = principalOf(request)
    if (principal.clientId === clientId) throw new AppError('CONFLICT', 'a client cannot revoke, rotate or change the role of the client of the token calling')
    if (doc.scopes.includes(ADMIN_SCOPE) && !principal.isPlatformAdmin) {
      throw new AppError('FORBIDDEN', `only a platform administrator (scope ${ADMIN_SCOPE}) may change a client holding it`)
    }
    // A new secret hands the client's scopes to the caller: only one who could have created the client with them.
    requireScopesHeld(principal, doc.scopes, 'the client holds scopes the caller lacks')
    // A new secret hands the client's role to the caller: only one whose permissions the caller holds (administrators any).
    await requireMemberRoleHeld(queries, principal, organizationOf(request), clientId)
    return doc
  }

  app.get('/organization/:entityid/clients', {
    config: { organization: 'path', permissions: ['ManageMembers'] },
    schema: {
      summary: 'The organization\'s OAuth clients, newest first (never their secrets)',
      tags: ['Administration'],
      params: Type.Object({ entityid: Uuid }),
      querystring: PageQuery,
      response: { 200: Type.Object({ status: Type.Literal('success'), data: Type.Array(Client), pagination: Pagination }), ...failures(400, 401, 403) },
    },
  }, async (request) => {
    const { page, limit } = request.query
    const { items, total } = await queries.principals.clientPage(request.params.entityid, { offset: (page - 1) * limit, limit })
    const memberships = await queries.memberships.activeOf(items.map((doc) => doc._id), request.params.entityid)
    return { status: 'success' as const, data: items.map((doc) => view(doc, memberships.get(doc._id))), pagination: pagination(page, limit, total) }
  })

  app.post('/organization/:entityid/clients/:clientId/revoke', {
    config: { organization: 'path', permissions: ['ManageMembers'], scopes: ['clients:write'] },
    schema: {
      summary: 'Revoke an OAuth client',
      description: 'From this answer on, the client cannot get tokens and every token issued through it is refused (401 INVALID_TOKEN), ' +
        'users\' tokens signed in through it included. Final. Not the client of the calling token (409 CONFLICT); a client holding scope * ' +
        'only by a platform administrator (403). Revoking again changes nothing.',
      tags: ['Administration'],
      params: ClientParams,
      response: { 200: ClientAnswer, ...failures(400, 401, 403, 404, 409) },
    },
  }, async (request) => {
    const { entityid, clientId } = request.params
    await changeableClient(request, entityid, clientId)
    const revoked = await revokeClient(commands, {
      organizationId: entityid, clientId, grantor: grantorOf(request),
    }, commandContext(request))
    await services.settle(revoked.position)
    const doc = await queries.principals.client(clientId)
    if (doc === null) throw new AppError('INTERNAL', 'client not visible after its revocation')
    return { status: 'success' as const, data: { client: await viewOf(doc) } }
  })

  app.post('/organization/:entityid/clients/:clientId/secret', {
    config: { organization: 'path', permissions: ['ManageMembers'], scopes: ['clients:write'] },
    schema: {
      summary: 'Give an OAuth client a new secret',
      description: 'The new secret is returned this once only; the old one stops authenticating at once, and so do the ' +
        'client\'s own (client_credentials) access tokens issued before (401 INVALID_TOKEN). Users\' tokens issued through the ' +
        'client keep working: their sign-in took the user\'s password too, and refreshing them takes the new secret; to end ' +
        'those at once, revoke the client. A revoked client is refused ' +
        '(409 NOT_ACTIVE). The bootstrap administrator client is given ADMIN_CLIENT_SECRET again at the next start when that is set.',
      tags: ['Administration'],
      params: ClientParams,
      response: {
        200: Type.Object({ status: Type.Literal('success'), data: Type.Object({
          client: Type.Object({ client_id: Type.String(), client_secret: Type.String({ description: 'shown once' }) }),
        }) }),
        ...failures(400, 401, 403, 404, 409),
      },
    },
  }, async (request) => {
    const { entityid, clientId } = request.params
    const doc = await changeableClient(request, entityid, clientId)
    if (doc.revoked) throw new AppError('NOT_ACTIVE', 'the client is revoked')
    const secret = generateSecret()
    const secretHash = await hashSecret(secret)
    const rotated = await actOnMember(commands, { organizationId: entityid, principalId: clientId, grantor: grantorOf(request) },
      () => commands.execute(oauthClientAggregate, clientStreamId(clientId), { type: 'RotateClientSecret', secretHash }, commandContext(request)))
    await services.settle(rotated.position)
    return { status: 'success' as const, data: { client: { client_id: clientId, client_secret: secret } } }
  })

  app.put('/organization/:entityid/clients/:clientId/role', {
    config: { organization: 'path', permissions: ['ManageMembers'], scopes: ['clients:write'] },
    schema: {
      summary: 'Change an OAuth client\'s role template',
      description: 'The client\'s permissions are the new template\'s from this answer on, for the tokens it already holds too. Unless an ' +
        'administrator, the caller must hold the permissions of the client\'s current template and of the new one (403 FORBIDDEN). ' +
        'An unknown template, or one of another organization, is a 400 naming body.roleTemplateId. Not the client of the calling ' +
        'token (409 CONFLICT), nor a revoked client (409 NOT_ACTIVE); a client holding scope * only by a platform administrator (403). ' +
        'The same template again changes nothing.',
      tags: ['Administration'],
      params: ClientParams,
      body: RoleChangeBody,
      response: { 200: ClientAnswer, ...failures(400, 401, 403, 404, 409) },
    },
  }, async (request) => {
    const { entityid, clientId } = request.params
    const doc = await changeableClient(request, entityid, clientId)
    await requireAssignable(queries, principalOf(request), organizationOf(request), request.body.roleTemplateId)
    if (doc.revoked) throw new AppError('NOT_ACTIVE', 'the client is revoked')
    const changed = await changeMemberRole(commands, {
      organizationId: entityid, principalId: clientId, roleTemplateId: request.body.roleTemplateId, grantor: grantorOf(request),
    },
      commandContext(request))
    await services.settle(changed.position)
    return { status: 'success' as const, data: { client: await viewOf(doc) } }
  })
}

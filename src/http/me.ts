import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { Services } from '../services.js'
import { organizationOf, principalOf } from './context.js'
import { failures, OrganizationHeaders } from './schemas.js'

/** Who the caller is, and what it may do in an organization (for clients that adapt their UI). */
export const meRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app) => {
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
}

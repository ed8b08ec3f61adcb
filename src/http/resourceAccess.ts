import type { FastifyRequest } from 'fastify'
import type { Services } from '../services.js'
import { isAppError, type AppError } from '../shared/errors.js'
import type { Permission } from '../shared/permissions.js'
import { principalOf, type OrganizationContext } from './context.js'
import { organizationAccess, requirePermissions } from './plugins/organization.js'

/**
 * For routes whose organization is the resource's own (a debtor's profile file,
 * a signature): the caller must belong to that organization, and an
 * `Organization-ID` header, when sent, must name it. Any mismatch answers as if
 * the resource did not exist; a member lacking a permission gets 403.
 */
export const actInResourceOrganization = async (
  services: Services,
  request: FastifyRequest,
  organizationId: string,
  notFound: AppError,
  permissions: readonly Permission[],
): Promise<OrganizationContext> => {
  const header = request.headers['organization-id']
  if (typeof header === 'string' && header !== organizationId) throw notFound
  let context: OrganizationContext
  try {
    context = await organizationAccess(services.queries, principalOf(request), organizationId)
  } catch (error) {
    if (isAppError(error) && error.status < 500) throw notFound
    throw error
  }
  request.organization = context
  requirePermissions(context, permissions)
  return context
}


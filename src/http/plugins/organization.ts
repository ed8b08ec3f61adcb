import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Queries } from '../../projections/queries.js'
import type { Services } from '../../services.js'
import { AppError } from '../../shared/errors.js'
import { allPermissions, isPermission, type Permission } from '../../shared/permissions.js'
import type { OrganizationContext, OrganizationSource, Principal } from '../context.js'
import { toHookList } from './auth.js'

const headerValue = (request: FastifyRequest, name: string): string | undefined => {
  const value = request.headers[name]
  return typeof value === 'string' ? value : undefined
}

const paramValue = (request: FastifyRequest, name: string): string | undefined => {
  const params = request.params
  if (typeof params !== 'object' || params === null) return undefined
  const value: unknown = Reflect.get(params, name)
  return typeof value === 'string' ? value : undefined
}

const bodyValue = (request: FastifyRequest, name: string): string | undefined => {
  const body = request.body
  if (typeof body !== 'object' || body === null) return undefined
  const value: unknown = Reflect.get(body, name)
  return typeof value === 'string' ? value : undefined
}

const organizationIdFrom = (request: FastifyRequest, source: OrganizationSource): string | undefined => {
  switch (source) {
    case 'header':
      return headerValue(request, 'organization-id')
    case 'config-header':
      return headerValue(request, 'config-organization-id') ?? headerValue(request, 'organization-id')
    case 'path':
      return paramValue(request, 'entityid')
    case 'body':
      return bodyValue(request, 'organizationId')
    default: {
      const _never: never = source
      return _never
    }
  }
}

const everyPermission: ReadonlySet<Permission> = new Set(allPermissions)

const forbidden = (organizationId: string) =>
  new AppError('ORGANIZATION_FORBIDDEN', `no access to organization ${organizationId}`, { organizationId })

/**
 * What a principal may do in an organization: membership and role template
 * (every permission for the platform administrator). Unknown and foreign
 * organizations answer alike, so the answer tells nothing about organizations
 * one cannot see.
 */
export const organizationAccess = async (queries: Queries, principal: Principal, organizationId: string): Promise<OrganizationContext> => {
  const organization = await queries.organizations.get(organizationId)
  if (organization === null) throw principal.isPlatformAdmin ? new AppError('NOT_FOUND', `organization ${organizationId} not found`, { resource: 'organization' }) : forbidden(organizationId)
  let permissions: ReadonlySet<Permission>
  if (principal.isPlatformAdmin) {
    permissions = everyPermission
  } else {
    const membership = await queries.memberships.of(principal.id, organizationId)
    if (membership === null) throw forbidden(organizationId)
    const template = await queries.roleTemplates.get(organizationId, membership.roleTemplateId)
    permissions = new Set((template?.permissions ?? []).filter(isPermission))
  }
  if (!organization.active) throw new AppError('ORGANIZATION_INACTIVE', `organization ${organizationId} is inactive`, { organizationId })
  return {
    id: organization._id,
    name: organization.name,
    defaultConfigId: organization.defaultConfigId,
    permissions,
    isAdministrator: principal.isPlatformAdmin || permissions.has('AdministerOrganization'),
  }
}

/** Refuses with 403 unless the context holds every permission named. */
export const requirePermissions = (context: OrganizationContext, required: readonly Permission[]): void => {
  const missing = required.find((p) => !context.permissions.has(p))
  if (missing !== undefined) {
    throw new AppError('FORBIDDEN', `permission ${missing} is required`, { permission: missing })
  }
}

/**
 * Resolves the organization a route acts in (from `Organization-ID`,
 * `Config-Organization-ID` or the path), checks the caller belongs to it and
 * is allowed what the route needs.
 */
export const organizationPlugin = fp(async (app: FastifyInstance, options: { services: Services }) => {
  const { queries } = options.services
  app.decorateRequest('organization', null)

  const resolve = async (request: FastifyRequest): Promise<void> => {
    const { organization: source, permissions: required = [] } = request.routeOptions.config
    if (source === undefined) return
    const principal = request.principal
    if (principal === null) throw new AppError('UNAUTHORIZED', 'authentication required')
    const organizationId = organizationIdFrom(request, source)
    if (organizationId === undefined) throw new AppError('VALIDATION_ERROR', 'organization header is required')
    const context = await organizationAccess(queries, principal, organizationId)
    request.organization = context
    requirePermissions(context, required)
  }

  // Attached only to routes that act in an organization, when they are declared.
  app.addHook('onRoute', (route) => {
    if (route.config?.organization === undefined) return
    route.preHandler = [resolve, ...toHookList(route.preHandler)]
  })
})

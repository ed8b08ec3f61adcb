import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { OrganizationDoc } from '../../projections/organizations.js'
import type { Queries } from '../../projections/queries.js'
import type { RoleTemplateDoc } from '../../projections/roleTemplates.js'
import type { Services } from '../../services.js'
import { AppError } from '../../shared/errors.js'
import { whenReady, type Maybe } from '../../shared/maybe.js'
import { allPermissions, isPermission, requireGrantableBy, type Permission } from '../../shared/permissions.js'
import { grantorFor, type OrganizationContext, type OrganizationSource, type Principal } from '../context.js'
import { checkHook, toHookList } from './auth.js'

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
const noPermission: ReadonlySet<Permission> = new Set()

const forbidden = (organizationId: string) =>
  new AppError('ORGANIZATION_FORBIDDEN', `no access to organization ${organizationId}`, { organizationId })

// Read-model documents are snapshots: a change stores a new document, never alters one in place. So what is derived
// from a document can be kept by that document (weakly) and never goes stale, while the lookups themselves still run
// on every request: a removed membership, an edited role template or a deactivated organization shows at once.
// (A store that answers with fresh objects, like MongoDB, simply never hits.)
const templatePermissions = new WeakMap<RoleTemplateDoc, ReadonlySet<Permission>>()
const contexts = new WeakMap<OrganizationDoc, WeakMap<ReadonlySet<Permission>, OrganizationContext>>()

const permissionsOf = (template: RoleTemplateDoc | null): ReadonlySet<Permission> => {
  if (template === null) return noPermission
  let permissions = templatePermissions.get(template)
  if (permissions === undefined) {
    permissions = new Set(template.permissions.filter(isPermission))
    templatePermissions.set(template, permissions)
  }
  return permissions
}

/** The context of an active organization for these permissions (the platform administrator holds all of them). */
const contextOf = (organization: OrganizationDoc, permissions: ReadonlySet<Permission>): OrganizationContext => {
  let byPermissions = contexts.get(organization)
  if (byPermissions === undefined) {
    byPermissions = new WeakMap()
    contexts.set(organization, byPermissions)
  }
  let context = byPermissions.get(permissions)
  if (context === undefined) {
    context = Object.freeze({
      id: organization._id,
      name: organization.name,
      defaultConfigId: organization.defaultConfigId,
      permissions,
      isAdministrator: permissions.has('AdministerOrganization'),
    })
    byPermissions.set(permissions, context)
  }
  return context
}

/**
 * What a principal may do in an organization: membership and role template
 * (every permission for the platform administrator). Unknown and foreign
 * organizations answer alike, so the answer tells nothing about organizations
 * one cannot see.
 */
export const organizationAccess = (queries: Queries, principal: Principal, organizationId: string): Maybe<OrganizationContext> =>
  whenReady(queries.organizations.get(organizationId), (organization) => {
    if (organization === null) throw principal.isPlatformAdmin ? new AppError('NOT_FOUND', `organization ${organizationId} not found`, { resource: 'organization' }) : forbidden(organizationId)
    const granted = (permissions: ReadonlySet<Permission>): OrganizationContext => {
      if (!organization.active) throw new AppError('ORGANIZATION_INACTIVE', `organization ${organizationId} is inactive`, { organizationId })
      return contextOf(organization, permissions)
    }
    if (principal.isPlatformAdmin) return granted(everyPermission)
    return whenReady(queries.memberships.of(principal.id, organizationId), (membership) => {
      if (membership === null) throw forbidden(organizationId)
      return whenReady(queries.roleTemplates.get(organizationId, membership.roleTemplateId), (template) => granted(permissionsOf(template)))
    })
  })

/** Refuses with 403 unless the context holds every permission named. */
export const requirePermissions = (context: OrganizationContext, required: readonly Permission[]): void => {
  const missing = required.find((p) => !context.permissions.has(p))
  if (missing !== undefined) {
    throw new AppError('FORBIDDEN', `permission ${missing} is required`, { permission: missing })
  }
}

/**
 * The granting rule (`requireGrantableBy`) checked before a command: a caller
 * may assign a role template to a new user or client, create one, or edit one
 * only when it holds every permission of it itself in that organization (for
 * an edit: those the template holds as stored and those it is to hold). The
 * deciders check it again on the template as it is when the command is
 * decided, since the template may change between the two.
 */
export const requireGrantable = (principal: Principal, context: OrganizationContext, permissions: readonly string[]): void =>
  requireGrantableBy(grantorFor(principal, context), permissions)

/**
 * The same rule for scopes: a client is given (or, by a new secret, handed to
 * the caller with) only scopes the caller holds; the platform administrator
 * holds every one.
 */
export const requireScopesHeld = (principal: Principal, scopes: readonly string[], what: string): void => {
  if (principal.isPlatformAdmin) return
  const beyond = scopes.filter((scope) => !principal.scopes.has(scope))
  if (beyond.length > 0) throw new AppError('INSUFFICIENT_SCOPE', `${what}: ${beyond.join(' ')}`, { scope: beyond.join(' ') })
}

/**
 * `requireGrantable` for a role template to be assigned, with its permissions as
 * the read model holds them now. An unknown template passes here: the creation
 * itself refuses it (400, `body.roleTemplateId`).
 */
export const requireAssignable = (queries: Queries, principal: Principal, context: OrganizationContext, roleTemplateId: string): Maybe<void> => {
  if (principal.isPlatformAdmin || context.isAdministrator) return
  return whenReady(queries.roleTemplates.get(context.id, roleTemplateId), (template) => {
    if (template !== null) requireGrantable(principal, context, template.permissions)
  })
}

/**
 * `requireGrantable` for acting on a member (deactivating, resetting, revoking, rotating a secret): whoever may do that
 * could take or remove its role, so the caller must hold its role template's permissions. A principal with no active
 * membership in the organization has no role to guard.
 */
export const requireMemberRoleHeld = async (queries: Queries, principal: Principal, context: OrganizationContext, memberId: string): Promise<void> => {
  const membership = await queries.memberships.of(memberId, context.id)
  if (membership !== null) await requireAssignable(queries, principal, context, membership.roleTemplateId)
}

/**
 * Resolves the organization a route acts in (from `Organization-ID`,
 * `Config-Organization-ID` or the path), checks the caller belongs to it and
 * is allowed what the route needs.
 */
export const organizationPlugin = fp(async (app: FastifyInstance, options: { services: Services }) => {
  const { queries } = options.services
  app.decorateRequest('organization', null)

  /** The hook of a route acting in the organization named by `source`; made once per route, when it is declared. */
  const resolve = (source: OrganizationSource, required: readonly Permission[]) => checkHook((request) => {
    const principal = request.principal
    if (principal === null) throw new AppError('UNAUTHORIZED', 'authentication required')
    const organizationId = organizationIdFrom(request, source)
    if (organizationId === undefined) throw new AppError('VALIDATION_ERROR', 'organization header is required')
    return whenReady(organizationAccess(queries, principal, organizationId), (context) => {
      request.organization = context
      requirePermissions(context, required)
    })
  })

  // Attached only to routes that act in an organization, when they are declared.
  app.addHook('onRoute', (route) => {
    const source = route.config?.organization
    if (source === undefined) return
    route.preHandler = [resolve(source, route.config?.permissions ?? []), ...toHookList(route.preHandler)]
  })
})

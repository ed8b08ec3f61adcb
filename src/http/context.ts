import type {} from '@fastify/jwt'
import type { FastifyRequest } from 'fastify'
import type { AccessTokenClaims } from '../identity/tokens.js'
import type { CommandContext } from '../commands/handler.js'
import { AppError, type ErrorCode } from '../shared/errors.js'
import type { Grantor, Permission, Scope } from '../shared/permissions.js'

/** Who called: from a verified access token. */
export interface Principal {
  kind: 'user' | 'client'
  /** User id, or client id for client-credentials tokens. */
  id: string
  clientId: string
  scopes: ReadonlySet<string>
  /** Scope `*`: the platform administrator. */
  isPlatformAdmin: boolean
  tokenId: string
  /** The sign-in (refresh-token family) a user's token was issued to; null for client-credentials tokens. */
  signInId: string | null
  /** The user's password version the token was issued under (0 for client tokens): a later change ends the token. */
  passwordVersion: number
  /** A client's own token: the client's secret version it was issued under (0 for user tokens); a rotation ends the token. */
  clientSecretVersion: number
  /** When the token expires (epoch milliseconds): a stream opened with it ends then. */
  expiresAtMs: number
}

/** The organization a request acts in, after membership and permissions were checked. */
export interface OrganizationContext {
  id: string
  name: string
  defaultConfigId: string
  permissions: ReadonlySet<Permission>
  /** Platform administrator, or a member holding AdministerOrganization. */
  isAdministrator: boolean
}

export type OrganizationSource = 'header' | 'config-header' | 'path' | 'body'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Default `bearer`: a valid access token is required. */
    auth?: 'public' | 'bearer'
    /** Where the organization comes from; absent when the route acts in none. */
    organization?: OrganizationSource
    /** Permissions the caller's role template must hold in that organization (all of them). */
    permissions?: readonly Permission[]
    /** Scopes of which the token must hold at least one. */
    scopes?: readonly Scope[]
    /** Code of schema-validation failures on this route (default VALIDATION_ERROR). */
    validationCode?: Extract<ErrorCode, 'VALIDATION_ERROR' | 'BIND_ERROR'>
  }
  interface FastifyRequest {
    principal: Principal | null
    organization: OrganizationContext | null
  }
}

declare module '@fastify/jwt' {
  interface FastifyJWT {
    payload: AccessTokenClaims
    user: AccessTokenClaims
  }
}

export const principalOf = (request: FastifyRequest): Principal => {
  if (request.principal === null) throw new AppError('UNAUTHORIZED', 'authentication required')
  return request.principal
}

export const organizationOf = (request: FastifyRequest): OrganizationContext => {
  if (request.organization === null) throw new AppError('INTERNAL', 'route has no organization context')
  return request.organization
}

/** A principal as a grantor in an organization: unrestricted for its administrator or a platform administrator. */
export const grantorFor = (principal: Principal, organization: OrganizationContext): Grantor =>
  principal.isPlatformAdmin || organization.isAdministrator ? 'all' : organization.permissions

/** The caller as a grantor in the request's organization. */
export const grantorOf = (request: FastifyRequest): Grantor => grantorFor(principalOf(request), organizationOf(request))

/** Metadata for the events a request's commands append. */
export const commandContext = (request: FastifyRequest): CommandContext => ({
  organizationId: request.organization?.id ?? null,
  actorId: request.principal?.id ?? null,
  correlationId: request.id,
  causationId: null,
})

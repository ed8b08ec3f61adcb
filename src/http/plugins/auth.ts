import jwt from '@fastify/jwt'
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { ACCESS_TOKEN_TYP, type AccessTokenClaims } from '../../identity/tokens.js'
import type { Services } from '../../services.js'
import { systemClock } from '../../shared/clock.js'
import { AppError } from '../../shared/errors.js'
import { ADMIN_SCOPE } from '../../shared/permissions.js'
import type { Principal } from '../context.js'

/** A route's hooks option as a list (fastify accepts one function or an array). */
export const toHookList = <T>(hooks: T | T[] | undefined): T[] => (hooks === undefined ? [] : Array.isArray(hooks) ? hooks : [hooks])

const challenge = (error?: string) =>
  ({ 'www-authenticate': `Bearer realm="credit-service"${error === undefined ? '' : `, error="${error}"`}` })

const unauthorized = (code: 'UNAUTHORIZED' | 'INVALID_TOKEN' | 'TOKEN_EXPIRED', message: string) =>
  new AppError(code, message, {}, challenge(code === 'UNAUTHORIZED' ? undefined : 'invalid_token'))

const isClaims = (value: AccessTokenClaims): boolean =>
  typeof value.sub === 'string' && typeof value.client_id === 'string' && typeof value.scope === 'string' && typeof value.jti === 'string'

/**
 * Verifies the Bearer access token of every route that is not public (ES256 or
 * RS256 with the service's key, `typ: at+jwt`, issuer, expiry), and checks the
 * client and user behind it are still active.
 */
export const authPlugin = fp(async (app: FastifyInstance, options: { services: Services }) => {
  const { services } = options
  const { signingKey, clock } = services
  await app.register(jwt, {
    secret: { public: signingKey.publicKeyPem },
    // Clients reuse a token for its lifetime: verified tokens are cached (LRU, entries end with the token's exp),
    // which spares an ECDSA verification per request. Revocation is checked below on every request regardless.
    verify: { algorithms: [signingKey.algorithm], allowedIss: services.tokens.issuer, checkTyp: ACCESS_TOKEN_TYP, cache: 10_000 },
  })
  app.decorateRequest('principal', null)

  const bearerToken = (request: FastifyRequest): string => {
    const header = request.headers.authorization
    const match = header === undefined ? null : /^Bearer[ ]+(\S+)\s*$/i.exec(header)
    if (match?.[1] === undefined) throw unauthorized('UNAUTHORIZED', 'a Bearer access token is required')
    return match[1]
  }

  /** @fastify/jwt's global verifier (cached); an injected clock (tests) gets a verifier of its own that sees that clock. */
  const verify = (token: string): AccessTokenClaims => {
    try {
      return clock === systemClock
        ? app.jwt.verify<AccessTokenClaims>(token)
        : app.jwt.verify<AccessTokenClaims>(token, { clockTimestamp: clock.now().getTime() })
    } catch (error) {
      const code = error instanceof Error && 'code' in error ? String(error.code) : ''
      if (code === 'FAST_JWT_EXPIRED') throw unauthorized('TOKEN_EXPIRED', 'the access token has expired')
      throw unauthorized('INVALID_TOKEN', 'the access token is not valid')
    }
  }

  const authenticate = async (request: FastifyRequest): Promise<void> => {
    const claims = verify(bearerToken(request))
    if (!isClaims(claims)) throw unauthorized('INVALID_TOKEN', 'the access token is not valid')
    const client = await services.queries.principals.client(claims.client_id)
    if (client === null || client.revoked) throw unauthorized('INVALID_TOKEN', 'the client of this token is revoked')
    const kind = claims.sub === claims.client_id ? 'client' : 'user'
    if (kind === 'user') {
      const user = await services.queries.principals.user(claims.sub)
      if (user === null || !user.active) throw unauthorized('INVALID_TOKEN', 'the user of this token is inactive')
    }
    const scopes = new Set(claims.scope.split(' ').filter(Boolean))
    const principal: Principal = {
      kind, id: claims.sub, clientId: claims.client_id, scopes, isPlatformAdmin: scopes.has(ADMIN_SCOPE), tokenId: claims.jti,
    }
    request.principal = principal
    const needed = request.routeOptions.config.scopes
    if (needed !== undefined && !principal.isPlatformAdmin && !needed.some((s) => scopes.has(s))) {
      throw new AppError('INSUFFICIENT_SCOPE', `this operation needs one of the scopes: ${needed.join(' ')}`, { scope: needed.join(' ') },
        { 'www-authenticate': `Bearer realm="credit-service", error="insufficient_scope", scope="${needed.join(' ')}"` })
    }
  }

  // Attached to each guarded route when it is declared, so public routes run no authentication code at all.
  // Only the API is guarded; the docs UI outside /v1 is public.
  app.addHook('onRoute', (route) => {
    if (route.config?.auth === 'public' || !route.url.startsWith('/v1/')) return
    route.onRequest = [authenticate, ...toHookList(route.onRequest)]
  })
})

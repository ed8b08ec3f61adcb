import jwt from '@fastify/jwt'
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import { ACCESS_TOKEN_TYP, type AccessTokenClaims } from '../../identity/tokens.js'
import { VerifiedTokens, windowOf } from '../../identity/verifiedTokens.js'
import { passwordVersionOf, secretVersionOf } from '../../projections/principals.js'
import type { Queries } from '../../projections/queries.js'
import type { Services } from '../../services.js'
import { systemClock } from '../../shared/clock.js'
import { AppError, errorCode } from '../../shared/errors.js'
import { whenReady, type Maybe } from '../../shared/maybe.js'
import { ADMIN_SCOPE } from '../../shared/permissions.js'
import type { Principal } from '../context.js'

/**
 * A route hook running a check that answers now or later, in fastify's
 * callback style: a check answered from memory (the embedded read store)
 * passes on to the next hook at once, with no promise made on the way.
 */
export const checkHook = (check: (request: FastifyRequest) => Maybe<void>) =>
  (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void => {
    // Whatever is thrown refuses the request: a falsy reason must not read as "passed" to fastify.
    const refuse = (error: unknown) => done(error instanceof Error ? error : new Error(`check failed: ${String(error)}`))
    let checked: Maybe<void>
    try {
      checked = check(request)
    } catch (error) {
      refuse(error)
      return
    }
    if (checked instanceof Promise) checked.then(() => done(), refuse)
    else done()
  }

/** A route's hooks option as a list (fastify accepts one function or an array). */
export const toHookList = <T>(hooks: T | T[] | undefined): T[] => (hooks === undefined ? [] : Array.isArray(hooks) ? hooks : [hooks])

const challenge = (error?: string) =>
  ({ 'www-authenticate': `Bearer realm="credit-service"${error === undefined ? '' : `, error="${error}"`}` })

const unauthorized = (code: 'UNAUTHORIZED' | 'INVALID_TOKEN' | 'TOKEN_EXPIRED', message: string) =>
  new AppError(code, message, {}, challenge(code === 'UNAUTHORIZED' ? undefined : 'invalid_token'))

const isClaims = (value: AccessTokenClaims): boolean =>
  Number.isSafeInteger(value.exp) && typeof value.sub === 'string' && typeof value.client_id === 'string' && typeof value.scope === 'string' && typeof value.jti === 'string' &&
  (value.sid === undefined || typeof value.sid === 'string') && (value.pwv === undefined || Number.isSafeInteger(value.pwv)) &&
  (value.csv === undefined || Number.isSafeInteger(value.csv))

/**
 * Refuses (401 INVALID_TOKEN) a verified token's principal whose access has
 * ended since the token was issued: its client revoked or given a new secret,
 * its user deactivated or given a new password, its sign-in revoked. Checked
 * on every request, and again by streams that outlive the request.
 */
export const requireUnrevoked = (queries: Queries, principal: Principal): Maybe<void> => {
  const { principals } = queries
  return whenReady(principals.client(principal.clientId), (client) => {
    if (client === null || client.revoked) throw unauthorized('INVALID_TOKEN', 'the client of this token is revoked')
    if (principal.kind !== 'user') {
      if (secretVersionOf(client) !== principal.clientSecretVersion) throw unauthorized('INVALID_TOKEN', 'the client secret was changed since this token was issued')
      return
    }
    return whenReady(principals.user(principal.id), (user) => {
      if (user === null || !user.active) throw unauthorized('INVALID_TOKEN', 'the user of this token is inactive')
      if (passwordVersionOf(user) !== principal.passwordVersion) throw unauthorized('INVALID_TOKEN', 'the password was changed since this token was issued')
      if (principal.signInId === null) return
      return whenReady(principals.revokedSignIn(principal.signInId), (revoked) => {
        if (revoked !== null) throw unauthorized('INVALID_TOKEN', 'the sign-in of this token was revoked')
      })
    })
  })
}

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
    // Verified tokens are remembered below (verifiedTokens), so fast-jwt keeps no cache of its own.
    verify: { algorithms: [signingKey.algorithm], allowedIss: services.tokens.issuer, checkTyp: ACCESS_TOKEN_TYP },
  })
  app.decorateRequest('principal', null)

  const bearerToken = (request: FastifyRequest): string => {
    const header = request.headers.authorization
    const match = header === undefined ? null : /^Bearer[ ]+(\S+)\s*$/i.exec(header)
    if (match?.[1] === undefined) throw unauthorized('UNAUTHORIZED', 'a Bearer access token is required')
    return match[1]
  }

  /** @fastify/jwt's global verifier; an injected clock (tests) gets a verifier of its own that sees that clock. */
  const verify = (token: string): AccessTokenClaims => {
    try {
      return clock === systemClock
        ? app.jwt.verify<AccessTokenClaims>(token)
        : app.jwt.verify<AccessTokenClaims>(token, { clockTimestamp: clock.now().getTime() })
    } catch (error) {
      if (errorCode(error) === 'FAST_JWT_EXPIRED') throw unauthorized('TOKEN_EXPIRED', 'the access token has expired')
      throw unauthorized('INVALID_TOKEN', 'the access token is not valid')
    }
  }

  // Clients reuse a token for its lifetime: the principal of a verified token is kept until the token's exp, which
  // spares the ECDSA verification and claim parsing of every later request. Revocation is checked on every request regardless.
  const verifiedTokens = new VerifiedTokens<Principal>(10_000)

  const principalOf = (token: string, now: number): Principal => {
    const known = verifiedTokens.get(token, now)
    if (known !== undefined) return known
    const claims = verify(token)
    if (!isClaims(claims)) throw unauthorized('INVALID_TOKEN', 'the access token is not valid')
    const scopes: ReadonlySet<string> = new Set(claims.scope.split(' ').filter(Boolean))
    const principal: Principal = Object.freeze({
      kind: claims.sub === claims.client_id ? 'client' : 'user', id: claims.sub, clientId: claims.client_id, scopes,
      isPlatformAdmin: scopes.has(ADMIN_SCOPE), tokenId: claims.jti, signInId: claims.sid ?? null,
      passwordVersion: claims.pwv ?? 0, clientSecretVersion: claims.csv ?? 0, expiresAtMs: claims.exp * 1000,
    })
    const window = windowOf(claims)
    if (window !== null) verifiedTokens.set(token, principal, window)
    return principal
  }

  const insufficientScope = (needed: readonly string[]) =>
    new AppError('INSUFFICIENT_SCOPE', `this operation needs one of the scopes: ${needed.join(' ')}`, { scope: needed.join(' ') },
      { 'www-authenticate': `Bearer realm="credit-service", error="insufficient_scope", scope="${needed.join(' ')}"` })

  const admit = (request: FastifyRequest, principal: Principal, needed: readonly string[] | undefined): void => {
    request.principal = principal
    if (needed !== undefined && !principal.isPlatformAdmin && !needed.some((s) => principal.scopes.has(s))) throw insufficientScope(needed)
  }

  /** The hook of a route needing one of `needed` (any scope when undefined); made once per route, when it is declared. */
  const authenticate = (needed: readonly string[] | undefined) => checkHook((request) => {
    const principal = principalOf(bearerToken(request), clock.now().getTime())
    return whenReady(requireUnrevoked(services.queries, principal), () => admit(request, principal, needed))
  })

  // Attached to each guarded route when it is declared, so public routes run no authentication code at all.
  // Only the API is guarded; the docs UI outside /v1 is public.
  app.addHook('onRoute', (route) => {
    if (route.config?.auth === 'public' || !route.url.startsWith('/v1/')) return
    route.onRequest = [authenticate(route.config?.scopes), ...toHookList(route.onRequest)]
  })
})

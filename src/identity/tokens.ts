import { createHash } from 'node:crypto'
import { createSigner, createVerifier } from 'fast-jwt'
import type { CommandContext, CommandHandler } from '../commands/handler.js'
import { refreshTokenFamilyAggregate } from '../commands/refreshTokenFamily.js'
import { userAggregate } from '../commands/user.js'
import { passwordVersionOf, secretVersionOf, type ClientDoc, type UserDoc } from '../projections/principals.js'
import type { Clock } from '../shared/clock.js'
import { AppError, OAuthError } from '../shared/errors.js'
import { newId } from '../shared/ids.js'
import { ADMIN_SCOPE, allScopes, isScope } from '../shared/permissions.js'
import type { DataKey } from './dataKey.js'
import type { SigningKey } from './keys.js'
import { DECOY_HASH, generateSecret, verifySecret } from './passwords.js'
import type { SignInGuard } from './signInGuard.js'
import { verifyTotp } from './totp.js'

export const MFA_GRANT = 'urn:credit-service:grant-type:mfa-otp'
export const ACCESS_TOKEN_TYP = 'at+jwt'
const MFA_TOKEN_TYP = 'mfa+jwt'

/** Form fields of POST /oauth/token, all grants together (RFC 6749 sections 4.3, 4.4, 6, and the MFA extension). */
export interface TokenRequest {
  grant_type?: string | undefined
  scope?: string | undefined
  client_id?: string | undefined
  client_secret?: string | undefined
  username?: string | undefined
  password?: string | undefined
  refresh_token?: string | undefined
  mfa_token?: string | undefined
  otp?: string | undefined
}

/** Form fields of POST /oauth/revoke (RFC 7009 section 2.1). */
export interface RevocationRequest {
  token: string
  /** Accepted and not needed: a refresh token and an access token are told apart by their form. */
  token_type_hint?: string | undefined
  client_id?: string | undefined
  client_secret?: string | undefined
}

/** Client authentication in the body (RFC 6749 section 2.3.1), shared by the token and revocation endpoints. */
type ClientFields = Pick<TokenRequest, 'client_id' | 'client_secret'>

export interface TokenResponse {
  access_token: string
  token_type: 'Bearer'
  expires_in: number
  scope: string
  refresh_token?: string
}

export interface AccessTokenClaims {
  iss: string
  sub: string
  client_id: string
  scope: string
  iat: number
  exp: number
  jti: string
  /** The sign-in (refresh-token family) of a user's token: revoking it ends the token too. */
  sid?: string
  /** The user's password version when the token was issued (absent: 0): a password change ends the token. */
  pwv?: number
  /** A client's own token: the client's secret version when it was issued (absent: 0); a rotation ends the token. */
  csv?: number
}

export interface BasicCredentials {
  clientId: string
  secret: string
}

export interface TokenServiceDeps {
  key: SigningKey
  issuer: string
  accessTokenTtl: number
  refreshTokenTtl: number
  /** Seconds a sign-in lives from its first refresh token, however often rotated. */
  signInMaxAge: number
  mfaTokenTtl: number
  signIns: SignInGuard
  clock: Clock
  commands: CommandHandler
  dataKey: DataKey
  findClient(clientId: string): Promise<ClientDoc | null>
  findUserByUsername(username: string): Promise<UserDoc | null>
  findUser(userId: string): Promise<UserDoc | null>
  /** Waits until the read models show a write (a revoked sign-in, before the refusal is answered). */
  settle(position: number): Promise<void>
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

/** A refresh token is `<family id>.<secret>`: the family (sign-in) it belongs to, or null for anything else. */
export const refreshTokenFamilyOf = (token: string): string | null =>
  /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.[A-Za-z0-9_-]+$/.exec(token)?.[1] ?? null

const splitScope = (scope: string | undefined): string[] | undefined =>
  scope === undefined || scope.trim() === '' ? undefined : [...new Set(scope.trim().split(/\s+/))]

/** RFC 6749 2.3.1: client id and secret are form-urlencoded before being joined and base64-encoded. */
export const parseBasicAuthorization = (header: string | undefined): BasicCredentials | null | 'malformed' => {
  if (header === undefined) return null
  const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header)
  if (match?.[1] === undefined) return /^Basic\b/i.test(header) ? 'malformed' : null
  const decoded = Buffer.from(match[1], 'base64').toString('utf8')
  const colon = decoded.indexOf(':')
  if (colon < 0) return 'malformed'
  try {
    return {
      clientId: decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, ' ')),
      secret: decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, ' ')),
    }
  } catch {
    return 'malformed'
  }
}

interface MfaClaims {
  sub: string
  client_id: string
  scope: string
  /** The password version the password grant verified (absent in tokens issued before passwords could change: 0). */
  pwv?: number
  /** The user's last accepted code's time step when it was issued: once a later code is accepted, the token is spent. */
  ots?: number
}

/** The user decider's refusals of a sign-in, in RFC 6749 terms; anything else unchanged. */
const asGrantRefusal = (error: unknown): unknown =>
  error instanceof AppError && (error.code === 'SIGN_IN_LOCKED' || error.code === 'OTP_ALREADY_USED')
    ? new OAuthError('invalid_grant', error.message, {}, error.headers)
    : error

const isMfaClaims = (value: unknown): value is MfaClaims =>
  typeof value === 'object' && value !== null &&
  typeof Reflect.get(value, 'sub') === 'string' && typeof Reflect.get(value, 'client_id') === 'string' &&
  typeof Reflect.get(value, 'scope') === 'string' && (Reflect.get(value, 'pwv') === undefined || Number.isSafeInteger(Reflect.get(value, 'pwv'))) &&
  (Reflect.get(value, 'ots') === undefined || Number.isSafeInteger(Reflect.get(value, 'ots')))

/** The claims revocation needs of a verified access token. */
const isRevocableClaims = (value: unknown): value is Pick<AccessTokenClaims, 'sub' | 'client_id' | 'sid'> =>
  typeof value === 'object' && value !== null &&
  typeof Reflect.get(value, 'sub') === 'string' && typeof Reflect.get(value, 'client_id') === 'string' &&
  (Reflect.get(value, 'sid') === undefined || typeof Reflect.get(value, 'sid') === 'string')

/** Who a presented token was issued to, and the sign-in (refresh-token family) it belongs to: null for a client's own token. */
interface TokenOwner {
  clientId: string
  familyId: string | null
}

/** Issues tokens for the four grants; every refusal is an OAuthError in RFC 6749 section 5.2 terms. */
export class TokenService {
  private readonly signAccess
  private readonly signMfa

  get issuer(): string {
    return this.deps.issuer
  }

  constructor(private readonly deps: TokenServiceDeps) {
    // iat and exp are set in the payload from the injected clock; the signer keeps them as given.
    const base = { key: deps.key.privateKeyPem, algorithm: deps.key.algorithm, kid: deps.key.kid } as const
    this.signAccess = createSigner({ ...base, header: { alg: deps.key.algorithm, typ: ACCESS_TOKEN_TYP } })
    this.signMfa = createSigner({ ...base, header: { alg: deps.key.algorithm, typ: MFA_TOKEN_TYP } })
  }

  async grant(request: TokenRequest, basic: BasicCredentials | null, correlationId: string): Promise<TokenResponse> {
    const grantType = request.grant_type
    if (grantType === undefined || grantType === '') throw new OAuthError('invalid_request', 'grant_type is required')
    const client = await this.authenticateClient(request, basic)
    const context: CommandContext = { organizationId: client.organizationId, actorId: client._id, correlationId }
    switch (grantType) {
      case 'client_credentials':
        return this.clientCredentials(client, request)
      case 'password':
        return this.password(client, request, context)
      case 'refresh_token':
        return this.refresh(client, request, context)
      case MFA_GRANT:
        return this.mfa(client, request, context)
      default:
        throw new OAuthError('unsupported_grant_type', `grant_type ${grantType} is not supported`)
    }
  }

  /**
   * RFC 7009: ends the sign-in of a refresh token or of a user's access token issued to this client, and answers once the
   * read models refuse its tokens. A token that is unknown, malformed, expired or not this service's changes nothing and is
   * no error; one issued to another client is refused, as is a client's own access token (it belongs to no sign-in).
   */
  async revoke(request: RevocationRequest, basic: BasicCredentials | null, correlationId: string): Promise<void> {
    const client = await this.authenticateClient(request, basic)
    const familyId = refreshTokenFamilyOf(request.token)
    const owner = familyId === null ? this.accessTokenOwner(request.token) : await this.refreshTokenOwner(request.token, familyId)
    if (owner === null) return
    if (owner.clientId !== client._id) throw new OAuthError('unauthorized_client', 'the token was issued to another client')
    if (owner.familyId === null) {
      throw new OAuthError('unsupported_token_type', 'a client\'s own access token belongs to no sign-in and cannot be revoked; it ends when it expires')
    }
    const context: CommandContext = { organizationId: client.organizationId, actorId: client._id, correlationId }
    const revoked = await this.deps.commands.execute(refreshTokenFamilyAggregate, owner.familyId, { type: 'RevokeRefreshTokenFamily', now: this.nowIso() }, context)
    // Revoked a moment ago by another request: wait for that revocation to be read as well before answering.
    const position = revoked.events.length > 0 ? revoked.position : (await this.deps.commands.load(refreshTokenFamilyAggregate, owner.familyId)).position
    await this.deps.settle(position)
  }

  /** A refresh token's family, when the token is its current one or one it rotated (either proves the sign-in was held). */
  private async refreshTokenOwner(token: string, familyId: string): Promise<TokenOwner | null> {
    const { state } = await this.deps.commands.load(refreshTokenFamilyAggregate, familyId)
    const hash = sha256(token)
    if (state.status === 'none' || (state.currentHash !== hash && !state.retiredHashes.has(hash))) return null
    return { clientId: state.clientId, familyId }
  }

  /** The claims of a token of type `typ` this service signed, unexpired by the injected clock; throws otherwise. */
  private verifyOwn(token: string, typ: string): unknown {
    return createVerifier({
      key: this.deps.key.publicKeyPem, algorithms: [this.deps.key.algorithm], checkTyp: typ,
      allowedIss: this.deps.issuer, clockTimestamp: this.deps.clock.now().getTime(),
    })(token)
  }

  /** An access token this service signed and that has not expired. */
  private accessTokenOwner(token: string): TokenOwner | null {
    let claims: unknown
    try {
      claims = this.verifyOwn(token, ACCESS_TOKEN_TYP)
    } catch {
      return null
    }
    if (!isRevocableClaims(claims)) return null
    return { clientId: claims.client_id, familyId: claims.sub === claims.client_id ? null : claims.sid ?? null }
  }

  private async authenticateClient(request: ClientFields, basic: BasicCredentials | null): Promise<ClientDoc> {
    const inForm = request.client_id !== undefined || request.client_secret !== undefined
    if (basic !== null && inForm && request.client_secret !== undefined) {
      throw new OAuthError('invalid_request', 'use one client authentication method, not both')
    }
    // RFC 6749 allows client_id beside Basic, but one naming another client is a confused caller, not a credential to drop.
    if (basic !== null && request.client_id !== undefined && request.client_id !== basic.clientId) {
      throw new OAuthError('invalid_request', 'client_id does not name the client of the HTTP Basic credentials')
    }
    const clientId = basic?.clientId ?? request.client_id
    const secret = basic?.secret ?? request.client_secret
    if (clientId === undefined || secret === undefined) throw new OAuthError('invalid_client', 'client authentication failed')
    const client = await this.deps.findClient(clientId)
    const matches = await verifySecret(secret, client?.secretHash ?? DECOY_HASH)
    if (client === null || !matches || client.revoked) throw new OAuthError('invalid_client', 'client authentication failed')
    return client
  }

  private grantableScopes(client: ClientDoc, forUser: boolean): string[] {
    const all = client.scopes.includes(ADMIN_SCOPE) ? [...allScopes] : client.scopes
    return forUser ? all.filter((s) => s !== ADMIN_SCOPE) : all
  }

  private chooseScope(requested: string | undefined, grantable: string[]): string {
    const asked = splitScope(requested)
    if (asked === undefined) return grantable.join(' ')
    const unknown = asked.filter((s) => !isScope(s))
    if (unknown.length > 0) throw new OAuthError('invalid_scope', `unknown scope: ${unknown.join(' ')}`)
    const refused = asked.filter((s) => !grantable.includes(s))
    if (refused.length > 0) throw new OAuthError('invalid_scope', `scope not allowed for this client: ${refused.join(' ')}`)
    return asked.join(' ')
  }

  private clientCredentials(client: ClientDoc, request: TokenRequest): TokenResponse {
    const scope = request.scope === undefined ? client.scopes.join(' ') : this.chooseScope(request.scope, this.grantableScopes(client, false))
    return this.accessToken(client._id, client._id, scope, { csv: secretVersionOf(client) })
  }

  private async password(client: ClientDoc, request: TokenRequest, context: CommandContext): Promise<TokenResponse> {
    if (request.username === undefined || request.password === undefined) {
      throw new OAuthError('invalid_request', 'username and password are required')
    }
    const { password } = request
    const user = await this.deps.findUserByUsername(request.username)
    const invalid = () => new OAuthError('invalid_grant', 'invalid username or password')
    // A user this client may not sign in is answered as an unknown one: its password is neither tested nor counted.
    const mayTry = user !== null && user.active && (user.organizationId === client.organizationId || client.scopes.includes(ADMIN_SCOPE))
    if (!mayTry) {
      await verifySecret(password, DECOY_HASH)
      throw invalid()
    }
    return this.asSignIn(() => this.deps.signIns.attempt({
      userId: user._id, reason: 'password', context, wrong: invalid,
      verify: async (state) => await verifySecret(password, state.passwordHash) ? true : null,
      right: async (state) => {
        const scope = this.chooseScope(request.scope, this.grantableScopes(client, true))
        const enrolled = state.encryptedTotpSecret !== null
        await this.deps.commands.execute(userAggregate, user._id, { type: 'AcceptPassword', completesSignIn: !enrolled, now: this.nowIso() }, context)
        if (!enrolled) return this.userTokens(client, user._id, state.passwordVersion, scope, context)
        const now = this.now()
        const mfaToken = this.signMfa({
          sub: user._id, client_id: client._id, scope, pwv: state.passwordVersion, ots: state.lastOtpTimeStep,
          iss: this.deps.issuer, iat: now, exp: now + this.deps.mfaTokenTtl,
        })
        throw new OAuthError('mfa_required', 'a one-time code is required: send it with grant_type ' + MFA_GRANT, { mfa_token: mfaToken })
      },
    }))
  }

  private async mfa(client: ClientDoc, request: TokenRequest, context: CommandContext): Promise<TokenResponse> {
    if (request.mfa_token === undefined || request.otp === undefined) throw new OAuthError('invalid_request', 'mfa_token and otp are required')
    let claims: unknown
    try {
      claims = this.verifyOwn(request.mfa_token, MFA_TOKEN_TYP)
    } catch {
      throw new OAuthError('invalid_grant', 'mfa_token is invalid or expired')
    }
    if (!isMfaClaims(claims) || claims.client_id !== client._id) throw new OAuthError('invalid_grant', 'mfa_token was issued to another client')
    const user = await this.deps.findUser(claims.sub)
    if (user === null || !user.active || user.encryptedTotpSecret === null) throw new OAuthError('invalid_grant', 'user cannot sign in')
    const { otp } = request
    const { pwv = 0, ots, scope } = claims
    return this.asSignIn(() => this.deps.signIns.attempt({
      userId: user._id, reason: 'otp', context, wrong: () => new OAuthError('invalid_grant', 'the one-time code is wrong'),
      verify: (state) => {
        // Not a guess at the code: nothing is counted.
        if (state.passwordVersion !== pwv) throw new OAuthError('invalid_grant', 'the password was changed since mfa_token was issued')
        // One sign-in per password step: a token seen in a log must not open more sessions with later codes.
        if (ots !== undefined && state.lastOtpTimeStep > ots) throw new OAuthError('invalid_grant', 'mfa_token was already used: sign in again')
        return state.encryptedTotpSecret === null ? null : verifyTotp(this.deps.dataKey.decrypt(state.encryptedTotpSecret), otp, this.deps.clock.now())
      },
      right: async (state, timeStep) => {
        await this.deps.commands.execute(userAggregate, user._id, { type: 'AcceptOtp', timeStep, now: this.nowIso() }, context)
        return this.userTokens(client, user._id, state.passwordVersion, scope, context)
      },
    }))
  }

  /** A user command of a sign-in, its refusals as RFC 6749 errors. */
  private async asSignIn<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run()
    } catch (error) {
      throw asGrantRefusal(error)
    }
  }

  private async refresh(client: ClientDoc, request: TokenRequest, context: CommandContext): Promise<TokenResponse> {
    const presented = request.refresh_token
    if (presented === undefined) throw new OAuthError('invalid_request', 'refresh_token is required')
    const familyId = refreshTokenFamilyOf(presented)
    if (familyId === null) throw new OAuthError('invalid_grant', 'unknown refresh token')
    const { state } = await this.deps.commands.load(refreshTokenFamilyAggregate, familyId)
    if (state.status === 'none') throw new OAuthError('invalid_grant', 'unknown refresh token')
    const user = await this.deps.findUser(state.userId)
    if (user === null || !user.active) throw new OAuthError('invalid_grant', 'user cannot sign in')
    if (passwordVersionOf(user) !== state.passwordVersion) throw new OAuthError('invalid_grant', 'the password was changed since this sign-in; sign in again')
    const scope = request.scope === undefined
      ? state.scope
      : this.chooseScope(request.scope, (splitScope(state.scope) ?? []))
    const next = this.newRefreshToken(familyId)
    try {
      const result = await this.deps.commands.execute(refreshTokenFamilyAggregate, familyId, {
        type: 'RotateRefreshToken', clientId: client._id, presentedHash: sha256(presented), newHash: sha256(next),
        expiresAt: this.expiry(this.deps.refreshTokenTtl), maxAgeSeconds: this.deps.signInMaxAge, now: this.nowIso(),
      }, context)
      if (result.events.some((e) => e.type === 'RefreshTokenFamilyRevoked')) {
        // Once the refusal is read, the sign-in's access tokens are refused as well.
        await this.deps.settle(result.position)
        throw new OAuthError('invalid_grant', 'refresh token was already used; every token of this sign-in is revoked')
      }
      return { ...this.accessToken(result.state.userId, client._id, scope, { sid: familyId, pwv: result.state.passwordVersion }), refresh_token: next }
    } catch (error) {
      if (error instanceof AppError && (error.code === 'INVALID_REFRESH_TOKEN' || error.code === 'NOT_FOUND')) {
        throw new OAuthError('invalid_grant', error.message)
      }
      throw error
    }
  }

  /** `passwordVersion` is the version whose password (or mfa_token) this sign-in verified. */
  private async userTokens(client: ClientDoc, userId: string, passwordVersion: number, scope: string, context: CommandContext): Promise<TokenResponse> {
    const familyId = newId()
    const refreshToken = this.newRefreshToken(familyId)
    await this.deps.commands.execute(refreshTokenFamilyAggregate, familyId, {
      type: 'IssueRefreshToken', familyId, clientId: client._id, userId, passwordVersion, scope,
      tokenHash: sha256(refreshToken), expiresAt: this.expiry(this.deps.refreshTokenTtl), now: this.nowIso(),
    }, context)
    return { ...this.accessToken(userId, client._id, scope, { sid: familyId, pwv: passwordVersion }), refresh_token: refreshToken }
  }

  /** `versions`: the sign-in and password version of a user's token, or the secret version of a client's own; versions 0 are left out. */
  private accessToken(subject: string, clientId: string, scope: string, versions: { sid: string; pwv: number } | { csv: number }): TokenResponse {
    const iat = this.now()
    const claims: AccessTokenClaims = {
      iss: this.deps.issuer, sub: subject, client_id: clientId, scope, iat, exp: iat + this.deps.accessTokenTtl, jti: newId(),
      ...('sid' in versions ? (versions.pwv === 0 ? { sid: versions.sid } : versions) : versions.csv === 0 ? {} : versions),
    }
    return { access_token: this.signAccess(claims), token_type: 'Bearer', expires_in: this.deps.accessTokenTtl, scope }
  }

  private newRefreshToken(familyId: string): string {
    return `${familyId}.${generateSecret(32)}`
  }

  private now(): number {
    return Math.floor(this.deps.clock.now().getTime() / 1000)
  }

  private nowIso(): string {
    return this.deps.clock.now().toISOString()
  }

  private expiry(ttlSeconds: number): string {
    return new Date(this.deps.clock.now().getTime() + ttlSeconds * 1000).toISOString()
  }
}

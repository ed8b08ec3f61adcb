import formbody from '@fastify/formbody'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyError } from 'fastify'
import { Type } from 'typebox'
import { MFA_GRANT, parseBasicAuthorization } from '../identity/tokens.js'
import type { Services } from '../services.js'
import { isAppError, OAuthError } from '../shared/errors.js'
import { allScopes } from '../shared/permissions.js'

const optionalText = (description: string) => Type.Optional(Type.String({ description }))

const TokenForm = Type.Object({
  grant_type: optionalText(`client_credentials | password | refresh_token | ${MFA_GRANT}`),
  scope: optionalText('space-separated scopes; default: every scope the client may have'),
  client_id: optionalText('client authentication in the body (or use HTTP Basic)'),
  client_secret: optionalText('client authentication in the body (or use HTTP Basic)'),
  username: optionalText('password grant'),
  password: optionalText('password grant'),
  refresh_token: optionalText('refresh_token grant'),
  mfa_token: optionalText('MFA grant: the mfa_token of the mfa_required error'),
  otp: optionalText('MFA grant: the current 6-digit TOTP code'),
}, { additionalProperties: true })

const TokenResponse = Type.Object({
  access_token: Type.String({ description: 'JWT (ES256/RS256, typ at+jwt) to send as Bearer token' }),
  token_type: Type.Literal('Bearer'),
  expires_in: Type.Integer({ description: 'lifetime in seconds' }),
  scope: Type.String({ description: 'space-separated scopes granted' }),
  refresh_token: Type.Optional(Type.String({ description: 'password and MFA grants only; rotates on every use' })),
})

const RevocationForm = Type.Object({
  token: Type.String({ minLength: 1, description: 'the refresh token or access token to revoke' }),
  // RFC 7009 section 2.2: "An invalid token type hint value is ignored by the authorization server and does not influence the revocation response."
  token_type_hint: Type.Optional(Type.String({
    description: 'refresh_token | access_token; optional and not needed: the service tells them apart, and ignores any other value',
  })),
  client_id: optionalText('client authentication in the body (or use HTTP Basic)'),
  client_secret: optionalText('client authentication in the body (or use HTTP Basic)'),
}, { additionalProperties: true })

const OAuthErrorBody = Type.Object({
  error: Type.String({ description: 'RFC 6749 section 5.2 code, or mfa_required' }),
  error_description: Type.String(),
  mfa_token: Type.Optional(Type.String({ description: 'with mfa_required: exchange it with the TOTP code' })),
})

const noStore = { 'cache-control': 'no-store', pragma: 'no-cache' }

const isForm = (contentType: string | undefined) => contentType?.split(';')[0]?.trim().toLowerCase() === 'application/x-www-form-urlencoded'

/** POST /oauth/token (RFC 6749), POST /oauth/revoke (RFC 7009), the JWKS and the authorization-server metadata (RFC 8414). */
export const oauthRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  await app.register(formbody)

  // Token- and revocation-endpoint failures are answered in RFC 6749 terms, never in the envelope.
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const oauth = error instanceof OAuthError ? error
      : isAppError(error) && error.status >= 500 ? null
      : (error.statusCode ?? 500) < 500 || error.validation !== undefined ? new OAuthError('invalid_request', 'the request is malformed') : null
    if (oauth === null) {
      request.log.error({ err: error }, 'token request failed')
      return reply.code(500).headers(noStore).send({ error: 'server_error', error_description: 'internal error' })
    }
    if (oauth.error === 'invalid_client') reply.header('www-authenticate', 'Basic realm="credit-service"')
    return reply.code(oauth.status).headers({ ...oauth.headers, ...noStore }).send({ error: oauth.error, error_description: oauth.description, ...oauth.extra })
  })

  app.post('/oauth/token', {
    config: { auth: 'public' },
    schema: {
      summary: 'Issue an access token',
      description: 'application/x-www-form-urlencoded. Client authentication by HTTP Basic or client_id/client_secret fields. ' +
        `Grants: client_credentials, password, refresh_token (rotating; reuse revokes the family), ${MFA_GRANT}.`,
      tags: ['OAuth 2.0'],
      consumes: ['application/x-www-form-urlencoded'],
      body: TokenForm,
      response: { 200: TokenResponse, 400: OAuthErrorBody, 401: OAuthErrorBody, 403: OAuthErrorBody },
    },
  }, async (request, reply) => {
    if (!isForm(request.headers['content-type'])) throw new OAuthError('invalid_request', 'the body must be application/x-www-form-urlencoded')
    const basic = parseBasicAuthorization(request.headers.authorization)
    if (basic === 'malformed') throw new OAuthError('invalid_client', 'malformed HTTP Basic credentials')
    const response = await services.tokens.grant(request.body, basic, request.id)
    return reply.headers(noStore).send(response)
  })

  app.post('/oauth/revoke', {
    config: { auth: 'public' },
    schema: {
      summary: 'Revoke a token: sign out (RFC 7009)',
      description: 'application/x-www-form-urlencoded, with the client authentication of the token endpoint (HTTP Basic or ' +
        'client_id/client_secret fields). `token` is a refresh token or a user\'s access token issued to this client: its sign-in ' +
        'ends, so the refresh token (invalid_grant) and every access token of that sign-in (401 INVALID_TOKEN) are refused from ' +
        'this answer on. An access token that has expired is no longer valid and changes nothing: present the refresh token ' +
        'to end its sign-in. 200 with an empty body also for a token that is unknown, malformed, expired or already revoked ' +
        '(RFC 7009 section 2.2). A token issued to another client: 400 unauthorized_client, nothing revoked. A client\'s own ' +
        '(client_credentials) access token belongs to no sign-in: 400 unsupported_token_type; it ends when it expires, or at ' +
        'once when the client\'s secret is rotated or the client revoked. Wrong client credentials: 401 invalid_client.',
      tags: ['OAuth 2.0'],
      consumes: ['application/x-www-form-urlencoded'],
      body: RevocationForm,
      response: { 200: Type.String({ maxLength: 0, description: 'revoked, or nothing to revoke: an empty body' }), 400: OAuthErrorBody, 401: OAuthErrorBody },
    },
  }, async (request, reply) => {
    if (!isForm(request.headers['content-type'])) throw new OAuthError('invalid_request', 'the body must be application/x-www-form-urlencoded')
    const basic = parseBasicAuthorization(request.headers.authorization)
    if (basic === 'malformed') throw new OAuthError('invalid_client', 'malformed HTTP Basic credentials')
    await services.tokens.revoke(request.body, basic, request.id)
    return reply.code(200).headers(noStore).send('')
  })

  app.get('/.well-known/jwks.json', {
    config: { auth: 'public' },
    schema: {
      summary: 'Public keys that verify access tokens (JWKS)',
      tags: ['OAuth 2.0'],
      response: { 200: Type.Object({ keys: Type.Array(Type.Object({}, { additionalProperties: true })) }) },
    },
  }, async () => ({ keys: [services.signingKey.publicJwk] }))

  app.get('/.well-known/oauth-authorization-server', metadataRoute, async () => authorizationServerMetadata(services))
}

const metadataRoute = {
  config: { auth: 'public' as const },
  schema: {
    summary: 'Authorization-server metadata (RFC 8414)',
    tags: ['OAuth 2.0'],
    response: { 200: Type.Object({}, { additionalProperties: true }) },
  },
}

const authorizationServerMetadata = (services: Services) => ({
  issuer: services.tokens.issuer,
  token_endpoint: `${services.tokens.issuer}/v1/oauth/token`,
  revocation_endpoint: `${services.tokens.issuer}/v1/oauth/revoke`,
  revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
  jwks_uri: `${services.tokens.issuer}/v1/.well-known/jwks.json`,
  grant_types_supported: ['client_credentials', 'password', 'refresh_token', MFA_GRANT],
  token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
  token_endpoint_auth_signing_alg_values_supported: [services.signingKey.algorithm],
  scopes_supported: allScopes,
})

/**
 * The metadata where RFC 8414 (section 3) puts it for an issuer without a
 * path: clients that derive the address from `issuer` look at the root.
 */
export const rootMetadataRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  app.get('/.well-known/oauth-authorization-server', metadataRoute, async () => authorizationServerMetadata(services))
}

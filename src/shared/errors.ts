/**
 * The one registry of typed errors: every refusal the service can answer has a
 * stable code and an HTTP status here, and the HTTP error handler turns an
 * AppError into the failure envelope. Later areas add their codes to this table.
 */
export const errorStatuses = {
  VALIDATION_ERROR: 400,
  BIND_ERROR: 400,
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  INVALID_TOKEN: 401,
  TOKEN_EXPIRED: 401,
  FORBIDDEN: 403,
  INSUFFICIENT_SCOPE: 403,
  ORGANIZATION_FORBIDDEN: 403,
  ORGANIZATION_INACTIVE: 403,
  NOT_FOUND: 404,
  ROUTE_NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  CONCURRENCY_CONFLICT: 409,
  ALREADY_EXISTS: 409,
  USERNAME_TAKEN: 409,
  INVALID_TRANSITION: 409,
  ROLE_TEMPLATE_IN_USE: 409,
  BUILT_IN_ROLE_TEMPLATE: 409,
  NOT_ACTIVE: 409,
  INVALID_REFRESH_TOKEN: 400,
  OTP_ALREADY_USED: 400,
  SIGN_IN_LOCKED: 429,
  REQUEST_TIMEOUT: 408,
  PAYLOAD_TOO_LARGE: 413,
  URI_TOO_LONG: 414,
  UNSUPPORTED_MEDIA_TYPE: 415,
  UNPROCESSABLE: 422,
  HEADERS_TOO_LARGE: 431,
  TOO_MANY_REQUESTS: 429,
  INTERNAL: 500,
  NOT_IMPLEMENTED: 501,
  SERVICE_UNAVAILABLE: 503,
  EXPORT_EXPIRED: 410,
  EXPORT_NOT_READY: 409,
  EXPORT_ATTEMPT_SUPERSEDED: 409,
  EXPORT_RATE_LIMITED: 429,
  EXPORT_STREAM_LIMIT_REACHED: 429,
  EXPORT_TYPE_UNAVAILABLE: 501,
  DRY_RUN_NOT_SUPPORTED: 501,
  LEGACY_ROUTE_RETIRED: 404,
  SIGNATURE_FINALIZED: 409,
  SIGNATURE_INCOMPLETE: 409,
  SIGNATURE_FILE_EXISTS: 409,
  SIGNATURE_FILE_DELETED: 404,
  IDEMPOTENCY_KEY_REUSED: 409,
  APPROVER_IS_CREATOR: 403,
  CREDIT_NOT_PAYABLE: 409,
  INSTALLMENT_ALREADY_PAID: 409,
  APPROVAL_EXPIRED: 409,
  ORGANIZATION_MISMATCH: 400,
  SCORING_MODEL_VERSION_EXISTS: 409,
  SCORING_MODEL_NOT_IN_FORCE: 409,
  CREDIT_LIMIT_EXCEEDED: 409,
} as const satisfies Record<string, number>

export type ErrorCode = keyof typeof errorStatuses

/** Extra fields that go into `data` of the envelope beside `code` and `message`. */
export type ErrorDetails = Record<string, unknown>

export class AppError extends Error {
  readonly status: number
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: ErrorDetails = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message)
    this.name = 'AppError'
    this.status = errorStatuses[code]
  }
}

export const isAppError = (value: unknown): value is AppError => value instanceof AppError

/** What a caught value says, for a log line or a recorded failure (anything can be thrown). */
export const errorMessage = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/** The `code` a caught error carries (Node's `EEXIST`, SQLite's `SQLITE_BUSY`, fast-jwt's…), when it has a text one. */
export const errorCode = (error: unknown): string | undefined =>
  error instanceof Error && 'code' in error && typeof error.code === 'string' ? error.code : undefined

export const notFound = (resource: string, id?: string): AppError =>
  new AppError('NOT_FOUND', id === undefined ? `${resource} not found` : `${resource} ${id} not found`, { resource })

export const conflict = (message: string, details: ErrorDetails = {}): AppError =>
  new AppError('CONFLICT', message, details)

export const badRequest = (message: string, details: ErrorDetails = {}): AppError =>
  new AppError('BAD_REQUEST', message, details)

export interface FieldError {
  field: string
  message: string
}

/** A validation failure that lists each bad field, like schema validation does. */
export const invalidFields = (errors: FieldError[], code: 'VALIDATION_ERROR' | 'BIND_ERROR' = 'VALIDATION_ERROR'): AppError =>
  new AppError(code, errors.map((e) => `${e.field}: ${e.message}`).join('; '), { errors })

export const invalidTransition = (from: string, to: string, allowed: readonly string[]): AppError =>
  new AppError('INVALID_TRANSITION', `cannot move from ${from} to ${to}`, { from, to, allowed: [...allowed] })

/**
 * Errors of the token and revocation endpoints, answered in the RFC 6749 section 5.2 format
 * (`{error, error_description}`) instead of the envelope.
 */
export const oauthErrorStatuses = {
  invalid_request: 400,
  invalid_client: 401,
  invalid_grant: 400,
  unauthorized_client: 400,
  unsupported_grant_type: 400,
  invalid_scope: 400,
  /** RFC 7009 section 2.2.1: the revocation endpoint cannot revoke this kind of token. */
  unsupported_token_type: 400,
  /** Not in RFC 6749: the password was right but the user must also present a TOTP code. */
  mfa_required: 403,
} as const satisfies Record<string, number>

export type OAuthErrorCode = keyof typeof oauthErrorStatuses

export class OAuthError extends Error {
  readonly status: number
  constructor(
    readonly error: OAuthErrorCode,
    readonly description: string,
    readonly extra: Record<string, string> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(description)
    this.name = 'OAuthError'
    this.status = oauthErrorStatuses[error]
  }
}

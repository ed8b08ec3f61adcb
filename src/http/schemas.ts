import { Type, type TSchema } from 'typebox'
import { MONEY_INPUT_LIMIT, MONEY_INPUT_PATTERN } from '../shared/money.js'

export const Uuid = Type.String({ format: 'uuid', description: 'UUID' })
export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 UTC timestamp' })
const MONEY_PATTERN = '^-?[0-9]+(\\.[0-9]+)?$'
/** A decimal string that says what it holds. */
export const MoneyText = (description: string) => Type.String({ pattern: MONEY_PATTERN, description, examples: ['1500000.00'] })
export const MoneyString = MoneyText('decimal string')

/**
 * An amount in a request body: a non-negative decimal string under 10^15 with at most 4 decimals
 * (src/shared/money.ts). Answers use MoneyString: amounts recorded before the bound are shown as they are.
 */
export const MoneyInput = (description = 'decimal string') =>
  Type.String({ pattern: MONEY_INPUT_PATTERN, description: `${description}; at most 15 integer digits and 4 decimals`, examples: ['1500000.00'] })

/** An amount a request gives as a JSON number (taxes): non-negative and under 10^15. */
export const MoneyNumberInput = (description: string) => Type.Number({ minimum: 0, exclusiveMaximum: MONEY_INPUT_LIMIT, description })

/**
 * At least one visible character, and no control character or line break anywhere. Leading characters that show
 * nothing (spaces such as U+0020 and U+3000, format characters such as U+200B and U+FEFF, other default-ignorable
 * ones such as U+3164), then one that is none of those nor a control character (U+0000–U+001F, U+007F–U+009F: NUL,
 * tab, line feeds), a line or paragraph separator (U+2028, U+2029) or half a surrogate pair, then anything but
 * those. The prefix class and the visible one are disjoint, so a
 * match takes time linear in the text, however long. `\p{…}` needs ajv's `u` flag (its default, `unicodeRegExp`).
 */
export const NON_BLANK_TEXT_PATTERN =
  '^[\\p{Zs}\\p{Cf}\\p{Default_Ignorable_Code_Point}]*[^\\p{Z}\\p{Cf}\\p{Default_Ignorable_Code_Point}\\p{Cc}\\p{Cs}][^\\p{Cc}\\p{Zl}\\p{Zp}\\p{Cs}]*$'

/** A character prose may hold anywhere: anything but a control character or half a surrogate pair, save tabs and line breaks. */
const PROSE_CHARACTER = '(?:[^\\p{Cc}\\p{Cs}]|[\\t\\n\\r])'

/**
 * Prose (a reason): as NON_BLANK_TEXT_PATTERN, but tabs and line breaks (U+0009, U+000A, U+000D, U+2028, U+2029)
 * may stand anywhere, so "Fraud confirmed.\nSee OPS-1234." is taken; NUL and the other control characters are not.
 */
export const PROSE_TEXT_PATTERN =
  `^[\\p{Z}\\p{Cf}\\p{Default_Ignorable_Code_Point}\\t\\n\\r]*[^\\p{Z}\\p{Cf}\\p{Default_Ignorable_Code_Point}\\p{Cc}\\p{Cs}]${PROSE_CHARACTER}*$`

/** Optional prose that may be left empty (a query's `reason=`): no control characters but tabs and line breaks, nothing more. */
export const NO_CONTROL_TEXT_PATTERN = `^${PROSE_CHARACTER}*$`

/** What a validation error says, instead of ajv's `must match pattern "<regex>"`, for the patterns listed here (src/http/plugins/errors.ts). */
export const patternMessages: ReadonlyMap<string, string> = new Map([
  [NON_BLANK_TEXT_PATTERN, 'must contain a visible character and no control characters'],
  [PROSE_TEXT_PATTERN, 'must contain a visible character and no control characters but tabs and line breaks'],
  [NO_CONTROL_TEXT_PATTERN, 'must contain no control characters but tabs and line breaks'],
])

/** A reason or other prose in a request body: a visible character, lines and tabs allowed, no other control character. */
export const ProseText = (options: { maxLength: number; description?: string }) =>
  Type.String({
    minLength: 1,
    maxLength: options.maxLength,
    pattern: PROSE_TEXT_PATTERN,
    description: `${options.description === undefined ? '' : `${options.description}; `}at least one visible character; line breaks and tabs allowed, no other control characters`,
  })

/** A required name or label in a request body (not in answers: names recorded before it may be blank), not blank and free of control characters. */
export const NonBlankText = (options: { minLength?: number; maxLength: number; description?: string }) =>
  Type.String({
    minLength: options.minLength ?? 1,
    maxLength: options.maxLength,
    pattern: NON_BLANK_TEXT_PATTERN,
    description: `${options.description === undefined ? '' : `${options.description}; `}at least one visible character, no control characters`,
  })

/** `{status:'fail', data:{code, message, ...}}`: every 4xx. */
export const FailEnvelope = Type.Object({
  status: Type.Literal('fail'),
  data: Type.Object({
    code: Type.String({ description: 'stable error code from the error registry' }),
    message: Type.String(),
  }, { additionalProperties: true }),
}, { $id: 'FailEnvelope', description: 'Failure envelope (4xx)' })

/** `{status:'error', message}`: every 5xx, with no internals. */
export const ErrorEnvelope = Type.Object({
  status: Type.Literal('error'),
  message: Type.String(),
}, { $id: 'ErrorEnvelope', description: 'Error envelope (5xx)' })

const failure = (description: string) => Type.Unsafe<{ status: 'fail'; data: { code: string; message: string } }>({ $ref: 'FailEnvelope#', description })

const failureDescriptions: Record<number, string> = {
  400: 'Bad request: validation failed (each bad field listed in data.errors)',
  401: 'Missing, invalid or expired bearer token',
  403: 'Forbidden: missing permission or scope, or not a member of the organization',
  404: 'Not found (also for resources of another organization)',
  409: 'Conflict with the current state',
  410: 'Gone',
  413: 'Payload too large',
  415: 'Unsupported media type',
  429: 'Too many requests',
  501: 'Not implemented',
}

/** The failure responses a route documents, besides its success shapes. */
export const failures = (...codes: number[]): Record<number, TSchema> =>
  Object.fromEntries(codes.map((code) => [code, failure(failureDescriptions[code] ?? 'Failure')]))

export const OrganizationHeaders = Type.Object({
  'organization-id': Type.String({ format: 'uuid', description: 'Organization context' }),
}, { additionalProperties: true })

/** Both headers are required; `Config-Organization-ID` wins, `Organization-ID` is legacy. */
export const ConfigOrganizationHeaders = Type.Object({
  'config-organization-id': Type.String({ format: 'uuid', description: 'Organization being configured (preferred)' }),
  'organization-id': Type.String({ format: 'uuid', description: 'Legacy organization header, to be deprecated' }),
}, { additionalProperties: true })

/** `Idempotency-Key` of a creation that may be sent again safely (POST /credits, POST /profiles). */
export const IdempotencyKeyHeader = Type.Optional(Type.String({
  minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7E]+$', description: 'a key of the client\'s choosing naming this request (printable ASCII)',
}))

export const PageQuery = Type.Object({
  page: Type.Integer({ minimum: 1, default: 1 }),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
}, { additionalProperties: false })

export const Pagination = Type.Object({
  current_page: Type.Integer(),
  total_pages: Type.Integer(),
  total_items: Type.Integer(),
  items_per_page: Type.Integer(),
})

/** The body of a role change of a user or client. */
export const RoleChangeBody = Type.Object({
  roleTemplateId: Type.String({ format: 'uuid', description: 'a role template of the organization, whose permissions the caller holds' }),
}, { additionalProperties: false })

export const pagination = (page: number, limit: number, total: number) => ({
  current_page: page,
  total_pages: Math.ceil(total / limit),
  total_items: total,
  items_per_page: limit,
})

import { Ajv } from 'ajv'
import type { WebhookConfiguration } from '../events/webhook.js'
import type { SendError } from '../events/webhookSend.js'
import { errorMessage } from '../shared/errors.js'
import { compileTemplate } from '../templates/compile.js'
import type { TemplateContext } from '../templates/context.js'
import { TemplateExecutionError, TemplateSyntaxError } from '../templates/errors.js'
import type { RenderEnvironment } from '../templates/functions.js'
import { httpMethods, type HttpMethod, type OutgoingRequest } from './http.js'

/** The configuration fields that are templates, rendered at send time. */
export type TemplateField = 'url' | 'requestHeader' | 'requestBody' | 'authUrl' | 'authRequestHeader' | 'authRequestBody'
export const templateFields: readonly TemplateField[] = ['url', 'requestHeader', 'requestBody', 'authUrl', 'authRequestHeader', 'authRequestBody']

export type RenderableConfiguration = Pick<WebhookConfiguration, TemplateField | 'authEnabled' | 'authMethod'>

export interface RenderedWebhook {
  request: OutgoingRequest
  /** The token request, when authEnabled. */
  auth: OutgoingRequest | null
}

export class RenderFailure extends Error {
  constructor(readonly error: SendError) {
    super(error.message)
    this.name = 'RenderFailure'
  }
}

/** Header names are RFC 9110 tokens; values are checked by `headerProblems`. */
const headerSchema = {
  type: 'object',
  propertyNames: { pattern: "^[!#$%&'*+\\-.^_`|~0-9A-Za-z]+$" },
  additionalProperties: { type: 'string' },
} as const

const ajv = new Ajv({ allErrors: true })
const validateHeaders = ajv.compile<Record<string, string>>(headerSchema)

/**
 * Headers that frame the message or the connection: the HTTP client sets
 * them from the request itself, and one given by a template either makes
 * every send fail (Content-Length, Transfer-Encoding, Expect, Upgrade…) or
 * changes what the destination check let through (Host).
 */
const RESERVED_HEADERS: ReadonlySet<string> = new Set([
  'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'expect', 'upgrade', 'te', 'trailer', 'host',
])

export const isReservedHeader = (name: string): boolean => RESERVED_HEADERS.has(name.trim().toLowerCase())

/**
 * RFC 9110 field-value characters: tab, space, visible ASCII and obs-text
 * (0x80–0xFF, sent as one byte each). Anything else, a line break or a
 * character beyond 0xFF such as €, cannot be sent in a header.
 */
const FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/

export const isSendableHeaderValue = (value: string): boolean => FIELD_VALUE.test(value)

const firstBadCharacter = (value: string): string => {
  const bad = [...value].find((c) => !FIELD_VALUE.test(c)) ?? ''
  return `U+${(bad.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`
}

/**
 * Why headers of the right shape still cannot be sent: reserved names, characters a header value cannot carry, a name
 * given twice in different cases (HTTP names are case-insensitive: the receiver would get both values, or one of them).
 */
const headerProblems = (headers: Record<string, string>): string[] => {
  const named = new Map<string, string>()
  return Object.entries(headers).flatMap(([name, value]) => {
    const first = named.get(name.toLowerCase())
    if (first !== undefined) return [`${name} is given twice (as ${first} too; header names are case-insensitive)`]
    named.set(name.toLowerCase(), name)
    if (isReservedHeader(name)) return [`${name} is set by the HTTP client and cannot be given`]
    if (!isSendableHeaderValue(value)) return [`${name} has a character a header value cannot carry (${firstBadCharacter(value)}): only tab, space, visible ASCII and 0x80–0xFF`]
    return []
  })
}

/** Why rendered header text is not a JSON object of header strings that can be sent, or the headers. */
export const parseHeaders = (text: string): { headers: Record<string, string> } | { problem: string } => {
  if (text.trim() === '') return { headers: {} }
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch (error) {
    return { problem: `does not render to JSON (${errorMessage(error)})` }
  }
  if (!validateHeaders(parsed)) {
    const problems = (validateHeaders.errors ?? []).map((e) => `${e.instancePath === '' ? 'the value' : e.instancePath.slice(1)} ${e.message ?? e.keyword}`)
    return { problem: `does not render to a JSON object of header strings: ${problems.join('; ')}` }
  }
  const problems = headerProblems(parsed)
  return problems.length === 0 ? { headers: parsed } : { problem: `renders headers that cannot be sent: ${problems.join('; ')}` }
}

export interface RenderOptions {
  maxOutput: number
}

/**
 * Renders one template; whatever goes wrong, a template that no longer
 * compiles, a failed render or a JavaScript error in either, is a RenderFailure
 * (TEMPLATE_ERROR): the send fails and is logged, it never escapes as a crash
 * of the test endpoint or of the firing.
 */
export const renderField = (config: RenderableConfiguration, field: TemplateField, context: TemplateContext, env: RenderEnvironment, options: RenderOptions): string => {
  try {
    return compileTemplate(config[field]).render(context, env, { maxOutput: options.maxOutput })
  } catch (error) {
    throw new RenderFailure({ code: 'TEMPLATE_ERROR', message: `${field}: ${templateFailure(error)}` })
  }
}

const templateFailure = (error: unknown): string => {
  if (error instanceof TemplateSyntaxError || error instanceof TemplateExecutionError) return error.message
  return `the template cannot be rendered (${error instanceof Error ? `${error.name}: ${error.message}` : String(error)})`
}

const headersOf = (config: RenderableConfiguration, field: 'requestHeader' | 'authRequestHeader', context: TemplateContext, env: RenderEnvironment, options: RenderOptions) => {
  const parsed = parseHeaders(renderField(config, field, context, env, options))
  if ('problem' in parsed) throw new RenderFailure({ code: 'INVALID_HEADERS', message: `${field} ${parsed.problem}` })
  return parsed.headers
}

const hasHeader = (headers: Record<string, string>, name: string) => Object.keys(headers).some((h) => h.toLowerCase() === name.toLowerCase())

const withJsonContentType = (headers: Record<string, string>, body: string): Record<string, string> =>
  body === '' || hasHeader(headers, 'content-type') ? headers : { ...headers, 'Content-Type': 'application/json' }

export const authMethodOf = (method: string): HttpMethod => httpMethods.find((m) => m === method.trim().toUpperCase()) ?? 'POST'

/** Renders every template of a configuration; throws RenderFailure (a failed send) when one cannot be rendered. */
export const renderWebhook = (config: RenderableConfiguration, context: TemplateContext, env: RenderEnvironment, options: RenderOptions): RenderedWebhook => {
  const body = renderField(config, 'requestBody', context, env, options)
  const request: OutgoingRequest = {
    method: 'POST',
    url: renderField(config, 'url', context, env, options).trim(),
    headers: withJsonContentType(headersOf(config, 'requestHeader', context, env, options), body),
    body,
  }
  if (!config.authEnabled) return { request, auth: null }
  const method = authMethodOf(config.authMethod)
  const authBody = method === 'GET' ? '' : renderField(config, 'authRequestBody', context, env, options)
  return {
    request,
    auth: {
      method,
      url: renderField(config, 'authUrl', context, env, options).trim(),
      headers: withJsonContentType(headersOf(config, 'authRequestHeader', context, env, options), authBody),
      body: authBody,
    },
  }
}

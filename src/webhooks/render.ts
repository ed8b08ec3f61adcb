import { Ajv } from 'ajv'
import type { WebhookConfiguration } from '../events/webhook.js'
import type { SendError } from '../events/webhookSend.js'
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

/** Header names are RFC 9110 tokens; values one line of text. */
const headerSchema = {
  type: 'object',
  propertyNames: { pattern: "^[!#$%&'*+\\-.^_`|~0-9A-Za-z]+$" },
  additionalProperties: { type: 'string', pattern: '^[^\\r\\n\\u0000]*$' },
} as const

const ajv = new Ajv({ allErrors: true })
const validateHeaders = ajv.compile<Record<string, string>>(headerSchema)

/** Why rendered header text is not a JSON object of header strings, or the headers. */
export const parseHeaders = (text: string): { headers: Record<string, string> } | { problem: string } => {
  if (text.trim() === '') return { headers: {} }
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch (error) {
    return { problem: `does not render to JSON (${error instanceof Error ? error.message : String(error)})` }
  }
  if (validateHeaders(parsed)) return { headers: parsed }
  const problems = (validateHeaders.errors ?? []).map((e) => `${e.instancePath === '' ? 'the value' : e.instancePath.slice(1)} ${e.message ?? e.keyword}`)
  return { problem: `does not render to a JSON object of header strings: ${problems.join('; ')}` }
}

export interface RenderOptions {
  maxOutput: number
}

export const renderField = (config: RenderableConfiguration, field: TemplateField, context: TemplateContext, env: RenderEnvironment, options: RenderOptions): string => {
  try {
    return compileTemplate(config[field]).render(context, env, { maxOutput: options.maxOutput })
  } catch (error) {
    if (error instanceof TemplateSyntaxError || error instanceof TemplateExecutionError) {
      throw new RenderFailure({ code: 'TEMPLATE_ERROR', message: `${field}: ${error.message}` })
    }
    throw error
  }
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

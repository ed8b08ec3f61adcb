import type { WebhookConfiguration } from '../events/webhook.js'
import type { FieldError } from '../shared/errors.js'
import { compileTemplate } from '../templates/compile.js'
import { emptyTemplateContext } from '../templates/context.js'
import { TemplateExecutionError, TemplateSyntaxError } from '../templates/errors.js'
import { httpMethods } from './http.js'
import { isReservedHeader, isSendableHeaderValue, parseHeaders, templateFields, type TemplateField } from './render.js'
import { jsonPathProblem, QUERY_NAME } from './responseQueries.js'
import { isSignatureHeader, signingSecretProblem } from './signing.js'

/** A field error of a configuration; template errors carry where in the template. */
export type ConfigurationError = FieldError & { line?: number; column?: number }

const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/
const previewEnvironment = { now: new Date(0), fromWebhook: () => null }

const templateError = (field: string, error: unknown): ConfigurationError => {
  if (error instanceof TemplateSyntaxError) {
    return { field, message: `template error at line ${error.position.line}, column ${error.position.column}: ${error.reason}`, ...error.position }
  }
  if (error instanceof TemplateExecutionError) {
    return { field, message: `does not render against the empty credit: ${error.message}`, ...(error.position ?? {}) }
  }
  // Whatever else compiling throws (the generated code too deep for the JavaScript parser…) is still the template's problem, not the service's.
  return { field, message: `template error: the template cannot be compiled (${error instanceof Error ? `${error.name}: ${error.message}` : String(error)})` }
}

/**
 * Compiles a template and, for URLs and headers (whose shape is checked),
 * renders it against the empty credit; a field error instead when it does not
 * compile or render. Bodies are only compiled: `index .Credit.Installments 0`
 * is fine for a real credit even though the empty one has no installments.
 */
const tryRender = (field: string, source: string, render: boolean): { text: string } | { error: ConfigurationError } => {
  try {
    const compiled = compileTemplate(source)
    return { text: render ? compiled.render(emptyTemplateContext(), previewEnvironment) : '' }
  } catch (error) {
    return { error: templateError(field, error) }
  }
}

const SIGNED_BY_SERVICE = 'is set by the service on a signed webhook (Standard Webhooks)'

/**
 * Only on a signed webhook: without a secret nothing is added and a header of
 * these names is the configuration's own. An update that adds a secret is
 * checked as the whole result, so it is refused while the header is there.
 */
const signatureHeaderProblem = (headers: Record<string, string>): string | null => {
  const named = Object.keys(headers).filter(isSignatureHeader)
  return named.length === 0 ? null : `renders headers that cannot be sent: ${named.map((name) => `${name} ${SIGNED_BY_SERVICE} and cannot be given`).join('; ')}`
}

const urlProblem = (text: string): string | null => {
  let url: URL
  try {
    url = new URL(text.trim())
  } catch {
    return `does not render to an absolute URL (got ${JSON.stringify(text.slice(0, 200))})`
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `must be an http or https URL, not ${url.protocol}`
  if (url.username !== '' || url.password !== '') return 'must not carry credentials; put them in a header'
  return null
}

/**
 * Every problem of a whole configuration (after an update is applied): each
 * template compiles, URLs render to http(s) URLs and header templates to JSON
 * objects of strings against the empty credit, the token settings are
 * complete when authEnabled, and each response query is a JSONPath.
 * `signingSecret` is checked in its plain form by the caller, which says
 * whether the result is `signed`: then the request may not name the headers
 * signing adds.
 */
export const validateConfiguration = (config: Omit<WebhookConfiguration, 'signingSecret'>, { signed = false, prefix = 'body' } = {}): ConfigurationError[] => {
  const errors: ConfigurationError[] = []
  const at = (field: string) => `${prefix}.${field}`
  const checked: Array<[TemplateField, 'url' | 'headers' | 'text']> = [
    ['url', 'url'], ['requestHeader', 'headers'], ['requestBody', 'text'],
    ...(config.authEnabled ? [['authUrl', 'url'], ['authRequestHeader', 'headers'], ['authRequestBody', 'text']] as Array<[TemplateField, 'url' | 'headers' | 'text']> : []),
  ]
  for (const [field, kind] of checked) {
    const rendered = tryRender(at(field), config[field], kind !== 'text')
    if ('error' in rendered) {
      errors.push(rendered.error)
      continue
    }
    if (kind === 'url') {
      const problem = urlProblem(rendered.text)
      if (problem !== null) errors.push({ field: at(field), message: problem })
    }
    if (kind === 'headers') {
      const parsed = parseHeaders(rendered.text)
      const problem = 'problem' in parsed ? parsed.problem : signed && field === 'requestHeader' ? signatureHeaderProblem(parsed.headers) : null
      if (problem !== null) errors.push({ field: at(field), message: problem })
    }
  }
  if (!config.authEnabled) {
    for (const field of templateFields.filter((f) => f.startsWith('auth'))) {
      const rendered = tryRender(at(field), config[field], false)
      if ('error' in rendered) errors.push(rendered.error)
    }
  }
  if (config.authEnabled && !httpMethods.some((m) => m === config.authMethod.trim().toUpperCase())) {
    errors.push({ field: at('authMethod'), message: `must be one of ${httpMethods.join(', ')}` })
  }
  for (const field of ['authHeader', 'tokenHeader'] as const) {
    if (config[field].trim() !== '' && !HEADER_NAME.test(config[field].trim())) errors.push({ field: at(field), message: 'must be an HTTP header name' })
  }
  if (isReservedHeader(config.authHeader)) errors.push({ field: at('authHeader'), message: `${config.authHeader.trim()} is set by the HTTP client and cannot carry the token` })
  if (signed && isSignatureHeader(config.authHeader)) errors.push({ field: at('authHeader'), message: `${config.authHeader.trim()} ${SIGNED_BY_SERVICE} and cannot carry the token` })
  if (!isSendableHeaderValue(config.tokenType)) errors.push({ field: at('tokenType'), message: 'has a character a header value cannot carry: only tab, space, visible ASCII and 0x80–0xFF' })
  if (config.tokenSourceKey.trim().startsWith('$')) {
    const problem = jsonPathProblem(config.tokenSourceKey.trim())
    if (problem !== null) errors.push({ field: at('tokenSourceKey'), message: problem })
  }
  for (const [name, path] of Object.entries(config.responseQueries)) {
    if (!QUERY_NAME.test(name)) errors.push({ field: at(`responseQueries.${name}`), message: 'query names are letters, digits, _ . - (at most 64, not starting with a digit)' })
    const problem = jsonPathProblem(path)
    if (problem !== null) errors.push({ field: at(`responseQueries.${name}`), message: problem })
  }
  return errors
}

export const signingSecretError = (secret: string | null | undefined, prefix = 'body'): ConfigurationError | null => {
  if (secret === null || secret === undefined) return null
  const problem = signingSecretProblem(secret)
  return problem === null ? null : { field: `${prefix}.signingSecret`, message: problem }
}

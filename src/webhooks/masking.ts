import type { RecordedRequest, RecordedResponse } from '../events/webhookSend.js'
import type { IncomingResponse, OutgoingRequest } from './http.js'

/**
 * What a send log keeps: header values that carry credentials are masked
 * (`Bearer ***`), a fetched token is masked wherever it appears (response
 * query results too), JSON and form fields of token exchanges named like
 * secrets are masked, and bodies are cut at WEBHOOK_LOG_BODY_MAX_BYTES.
 *
 * Which headers carry credentials is this one rule: any name containing one
 * of these words, in any case. Broad on purpose (`key` covers
 * X-Api-Key, Ocp-Apim-Subscription-Key, X-Access-Key, X-Shared-Key; `auth`
 * covers Authorization and X-Auth): a header masked needlessly costs a
 * reader of the log little, a credential left in it is a leak.
 */
const SENSITIVE_HEADER_WORDS = ['auth', 'cookie', 'token', 'secret', 'password', 'passwd', 'key', 'credential', 'session', 'signature'] as const

const SENSITIVE_HEADER = new RegExp(SENSITIVE_HEADER_WORDS.join('|'), 'i')
const SENSITIVE_FIELD = /token|secret|password|passwd|api[-_]?key|credential|client[-_]?assertion/i
const MASK = '***'

export interface MaskingRules {
  /** Header names (any case) to mask besides the usual credential headers: the configured authHeader and tokenHeader. */
  headers: readonly string[]
  /** Values to mask wherever they appear (the fetched token). */
  secrets: readonly string[]
  /** Mask JSON fields named like secrets in bodies (token exchanges). */
  maskJsonFields: boolean
  maxBodyBytes: number
}

const maskValue = (value: string): string => {
  const scheme = /^(Bearer|Basic|Token|Digest|Bot|ApiKey|MAC|Hawk)\s+\S/i.exec(value)
  return scheme === null ? MASK : `${scheme[1]} ${MASK}`
}

// A secret of 1–3 characters would match all over a log (see docs/webhooks.md, Masking).
const hideSecrets = (text: string, secrets: readonly string[]): string =>
  secrets.filter((s) => s.length >= 4).reduce((out, secret) => out.split(secret).join(MASK), text)

export const maskHeaders = (headers: Record<string, string>, rules: Pick<MaskingRules, 'headers' | 'secrets'>): Record<string, string> => {
  const extra = new Set(rules.headers.filter(Boolean).map((h) => h.toLowerCase()))
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [
    name, SENSITIVE_HEADER.test(name) || extra.has(name.toLowerCase()) ? maskValue(value) : hideSecrets(value, rules.secrets),
  ]))
}

const maskJson = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(maskJson)
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, child]) => [key, SENSITIVE_FIELD.test(key) && typeof child !== 'object' ? MASK : maskJson(child)]))
  }
  return value
}

/** A form field's name as the receiver reads it (`client%5Fassertion` is `client_assertion`). */
const formName = (raw: string): string => {
  try {
    return decodeURIComponent(raw.replaceAll('+', ' '))
  } catch {
    return raw
  }
}

const maskForm = (body: string): string => body.split('&').map((pair) => {
  const equals = pair.indexOf('=')
  return equals >= 0 && SENSITIVE_FIELD.test(formName(pair.slice(0, equals))) ? `${pair.slice(0, equals + 1)}${MASK}` : pair
}).join('&')

const maskFields = (body: string): string => {
  try {
    return JSON.stringify(maskJson(JSON.parse(body)))
  } catch {
    return maskForm(body)
  }
}

const hideSecretsIn = (value: unknown, secrets: readonly string[]): unknown => {
  if (typeof value === 'string') return hideSecrets(value, secrets)
  if (Array.isArray(value)) return value.map((item) => hideSecretsIn(item, secrets))
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, child]) => [hideSecrets(key, secrets), hideSecretsIn(child, secrets)]))
  }
  return value
}

/**
 * Response-query results with the fetched token masked in every text (keys
 * too): a destination that echoes the request answers with it, and the
 * results are kept in the log, shown in answers and read by fromWebhook.
 */
export const maskQueryResults = (results: Record<string, unknown>, secrets: readonly string[]): Record<string, unknown> =>
  secrets.length === 0 ? results : Object.fromEntries(Object.entries(results).map(([name, value]) => [name, hideSecretsIn(value, secrets)]))

/** The first `max` bytes of a body, never ending inside a UTF-8 sequence. */
export const cutBody = (body: string, max: number): { body: string; bodyBytes: number; bodyTruncated: boolean } => {
  const bytes = Buffer.from(body, 'utf8')
  if (bytes.length <= max) return { body, bodyBytes: bytes.length, bodyTruncated: false }
  return { body: bytes.subarray(0, max).toString('utf8').replace(/\uFFFD+$/, ''), bodyBytes: bytes.length, bodyTruncated: true }
}

const recordBody = (body: string, rules: MaskingRules) => {
  const masked = hideSecrets(rules.maskJsonFields ? maskFields(body) : body, rules.secrets)
  return cutBody(masked, rules.maxBodyBytes)
}

export const recordRequest = (request: OutgoingRequest, rules: MaskingRules): RecordedRequest => ({
  method: request.method,
  url: hideSecrets(request.url, rules.secrets),
  headers: maskHeaders(request.headers, rules),
  ...recordBody(request.body, rules),
})

export const recordResponse = (response: IncomingResponse, rules: MaskingRules): RecordedResponse => {
  const recorded = recordBody(response.body, rules)
  return { status: response.status, headers: maskHeaders(response.headers, rules), ...recorded, bodyTruncated: recorded.bodyTruncated || response.truncated }
}

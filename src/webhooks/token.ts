import { jsonPathMatches } from './jsonPath.js'
import type { SendError } from '../events/webhookSend.js'
import type { IncomingResponse } from './http.js'

/**
 * Where the token of an `authEnabled` webhook comes from, and how it goes in:
 * - `tokenHeader` set: the value of that response header (any case), as is.
 * - otherwise the JSON response body at `tokenSourceKey` (default
 *   `access_token`): a dot path (`data.token`, `items.0.token`) or, starting
 *   with `$`, a JSONPath whose first match is taken. Numbers become text.
 * - it is sent in header `authHeader` (default `Authorization`) as
 *   `<tokenType> <token>`, or the bare token when `tokenType` is empty.
 */
export interface TokenRules {
  tokenHeader: string
  tokenSourceKey: string
  tokenType: string
  authHeader: string
}

export const DEFAULT_TOKEN_KEY = 'access_token'
export const DEFAULT_AUTH_HEADER = 'Authorization'

const atPath = (json: unknown, path: string): unknown => {
  if (path.startsWith('$')) {
    // A filter can fail on the answer's values (`@.a.b` where `a` is missing): no token, as for a path matching nothing.
    try {
      return jsonPathMatches(path, json)[0]
    } catch {
      return undefined
    }
  }
  let value = json
  for (const part of path.split('.')) {
    if (value === null || typeof value !== 'object' || !Object.hasOwn(value, part)) return undefined
    value = (value as Record<string, unknown>)[part]
  }
  return value
}

export const extractToken = (response: IncomingResponse, rules: TokenRules): { token: string } | { error: SendError } => {
  if (rules.tokenHeader.trim() !== '') {
    const value = response.headers[rules.tokenHeader.trim().toLowerCase()]?.trim() ?? ''
    return value === '' ? { error: { code: 'TOKEN_NOT_FOUND', message: `the token response has no header ${rules.tokenHeader}` } } : { token: value }
  }
  const key = rules.tokenSourceKey.trim() === '' ? DEFAULT_TOKEN_KEY : rules.tokenSourceKey.trim()
  let json: unknown
  try {
    json = JSON.parse(response.body)
  } catch {
    return { error: { code: 'TOKEN_NOT_FOUND', message: 'the token response body is not JSON' } }
  }
  const value = atPath(json, key)
  if (typeof value === 'number') return { token: String(value) }
  if (typeof value !== 'string' || value.trim() === '') return { error: { code: 'TOKEN_NOT_FOUND', message: `the token response body has no text at ${key}` } }
  return { token: value.trim() }
}

export const authorization = (rules: TokenRules, token: string): [string, string] => [
  rules.authHeader.trim() === '' ? DEFAULT_AUTH_HEADER : rules.authHeader.trim(),
  rules.tokenType.trim() === '' ? token : `${rules.tokenType.trim()} ${token}`,
]

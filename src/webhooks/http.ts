import type { Agent } from 'undici'
import { request } from 'undici'
import type { SendError } from '../events/webhookSend.js'
import { errorMessage } from '../shared/errors.js'
import { checkDestination, DestinationError } from './destination.js'

/** A request to make and what came back, unmasked and uncut: masking and cutting happen when it is recorded. */
export const httpMethods = ['POST', 'PUT', 'PATCH', 'GET'] as const
export type HttpMethod = (typeof httpMethods)[number]

export interface OutgoingRequest {
  method: HttpMethod
  url: string
  headers: Record<string, string>
  body: string
}

export interface IncomingResponse {
  status: number
  headers: Record<string, string>
  body: string
  /** True when the body was longer than WEBHOOK_RESPONSE_MAX_BYTES and only its start was read. */
  truncated: boolean
}

export interface Exchange {
  request: OutgoingRequest
  response: IncomingResponse | null
  error: SendError | null
  durationMs: number
}

export interface HttpOptions {
  agent: Agent
  timeoutMs: number
  maxResponseBytes: number
  allowPrivate: boolean
  /** For durations; performance.now by default. */
  now?: () => number
}

const headersOf = (raw: Record<string, string | string[] | undefined>): Record<string, string> =>
  Object.fromEntries(Object.entries(raw).filter((e): e is [string, string | string[]] => e[1] !== undefined)
    .map(([name, value]) => [name.toLowerCase(), Array.isArray(value) ? value.join(', ') : value]))

const causeCode = (error: unknown): string | undefined => {
  for (let current: unknown = error, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth++) {
    if ('code' in current && typeof current.code === 'string') {
      if (current.code !== 'UND_ERR_SOCKET' || current.cause === undefined) return current.code
    }
  }
  return undefined
}

const describeFailure = (error: unknown, timeoutMs: number, aborted: boolean): SendError => {
  if (aborted) return { code: 'TIMEOUT', message: `no complete answer within ${timeoutMs} ms` }
  if (error instanceof DestinationError) return { code: error.code, message: error.message }
  const code = causeCode(error)
  const message = errorMessage(error)
  if (code === 'EDESTINATIONREFUSED') return { code: 'DESTINATION_REFUSED', message }
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return { code: 'DNS_FAILURE', message }
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT') {
    return { code: 'TIMEOUT', message: `no complete answer within ${timeoutMs} ms` }
  }
  return { code: 'CONNECTION_FAILED', message: code === undefined ? message : `${code}: ${message}` }
}

const readCapped = async (body: AsyncIterable<Buffer>, max: number): Promise<{ text: string; truncated: boolean }> => {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of body) {
    if (size + chunk.length > max) {
      chunks.push(chunk.subarray(0, max - size))
      return { text: Buffer.concat(chunks).toString('utf8'), truncated: true }
    }
    chunks.push(chunk)
    size += chunk.length
  }
  return { text: Buffer.concat(chunks).toString('utf8'), truncated: false }
}

/** `work`, or the signal's reason once it aborts first: a DNS lookup cannot be cancelled, but nothing need wait for it. */
const beforeAbort = <T>(work: Promise<T>, signal: AbortSignal): Promise<T> =>
  new Promise<T>((resolve, reject) => {
    const abandon = () => reject(signal.reason)
    signal.addEventListener('abort', abandon, { once: true })
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', abandon))
  })

/** One HTTP exchange: destination checked, bounded in time (whole exchange) and in response size; never throws. */
export const exchange = async (outgoing: OutgoingRequest, options: HttpOptions): Promise<Exchange> => {
  const now = options.now ?? (() => performance.now())
  const started = now()
  const controller = new AbortController()
  const timer = setTimeout(() => controller.abort(), options.timeoutMs)
  try {
    await beforeAbort(checkDestination(outgoing.url, options.allowPrivate), controller.signal)
    const response = await request(outgoing.url, {
      method: outgoing.method,
      headers: outgoing.headers,
      body: outgoing.method === 'GET' ? null : outgoing.body,
      dispatcher: options.agent,
      signal: controller.signal,
    })
    const { text, truncated } = await readCapped(response.body, options.maxResponseBytes)
    if (truncated) response.body.destroy()
    return {
      request: outgoing,
      response: { status: response.statusCode, headers: headersOf(response.headers), body: text, truncated },
      error: null,
      durationMs: Math.round(now() - started),
    }
  } catch (error) {
    return { request: outgoing, response: null, error: describeFailure(error, options.timeoutMs, controller.signal.aborted), durationMs: Math.round(now() - started) }
  } finally {
    clearTimeout(timer)
  }
}

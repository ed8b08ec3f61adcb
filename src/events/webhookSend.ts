import type { Event } from './types.js'

/**
 * One send of a webhook, automatic, manual or test: a stream
 * `webhookSend-<sendId>` holding the start (written before anything goes on
 * the wire), then the outcome. Automatic sends use an id derived from
 * (trigger event, webhook), so a second start of the same pair finds the
 * stream and sends nothing. A start with no outcome after a crash is closed
 * as `unknown` and never sent again.
 */
export type SendTriggerType = 'PaymentOrderApproved' | 'CreditDisbursed' | 'manual' | 'test'

export interface SendTrigger {
  type: SendTriggerType
  /** The event that caused an automatic send; null for test and manual sends. */
  eventId: string | null
  /** The log a manual send repeats; null otherwise. */
  logId: string | null
  /**
   * A manual send's chain of re-sends leads back to this send (its id is the
   * Standard Webhooks message id) and its trigger type: recorded at the start,
   * so a long chain is never walked. Absent in other sends, and in manual
   * sends recorded before it was kept.
   */
  originalSendId?: string
  originalType?: SendTriggerType
}

/** An HTTP request as recorded: credentials in headers masked, body cut at WEBHOOK_LOG_BODY_MAX_BYTES. */
export interface RecordedRequest {
  method: string
  url: string
  headers: Record<string, string>
  body: string
  /** Size of the whole body in bytes. */
  bodyBytes: number
  bodyTruncated: boolean
}

export interface RecordedResponse {
  status: number
  headers: Record<string, string>
  body: string
  bodyBytes: number
  bodyTruncated: boolean
}

export type SendErrorCode =
  | 'TEMPLATE_ERROR' | 'INVALID_HEADERS' | 'DESTINATION_REFUSED' | 'DNS_FAILURE' | 'CONNECTION_FAILED' | 'TIMEOUT'
  | 'HTTP_STATUS' | 'AUTH_FAILED' | 'TOKEN_NOT_FOUND' | 'SIGNING_FAILED' | 'OUTCOME_UNKNOWN' | 'DESTINATION_UNAVAILABLE'

export interface SendError {
  code: SendErrorCode
  message: string
}

/** The token request made before the send when `authEnabled`. */
export interface RecordedAuthExchange {
  request: RecordedRequest | null
  response: RecordedResponse | null
  error: SendError | null
  durationMs: number
}

export type WebhookSendStarted = Event<'WebhookSendStarted', {
  sendId: string
  organizationId: string
  /** Null for a test send of a configuration that is not stored. */
  webhookId: string | null
  tag: string
  trigger: SendTrigger
  creditId: string | null
  orderId: string | null
  /** The rendered request about to be sent (before the token is injected); null when rendering failed. */
  request: RecordedRequest | null
  startedAt: string
}>

export type WebhookSendCompleted = Event<'WebhookSendCompleted', {
  sendId: string
  organizationId: string
  webhookId: string | null
  /** delivered: the destination answered 2xx; failed: anything else. */
  outcome: 'delivered' | 'failed'
  /** The request as sent, with the token header masked. */
  request: RecordedRequest | null
  response: RecordedResponse | null
  auth: RecordedAuthExchange | null
  error: SendError | null
  /** name → value extracted by responseQueries from a delivered JSON response (null for a result cut for its size). */
  responseQueryResults: Record<string, unknown>
  /** Names whose result was over the size limits and is kept as null (absent in sends recorded before the limits). */
  responseQueryResultsCut?: string[]
  durationMs: number
  completedAt: string
}>

export type WebhookSendOutcomeUnknown = Event<'WebhookSendOutcomeUnknown', {
  sendId: string
  organizationId: string
  webhookId: string | null
  reason: string
  recordedAt: string
}>

export type WebhookSendEvent = WebhookSendStarted | WebhookSendCompleted | WebhookSendOutcomeUnknown

import type { RecordedResponse, SendError, SendTrigger } from '../events/webhookSend.js'

/** Waits before each automatic retry: 1 minute, 5, 30, then 2 and 6 hours; later attempts wait 6 hours too. */
const RETRY_DELAYS_MS = [60_000, 300_000, 1_800_000, 7_200_000, 21_600_000] as const

export const retryDelayMs = (attempt: number): number => RETRY_DELAYS_MS[Math.min(attempt, RETRY_DELAYS_MS.length) - 1] ?? 60_000

/** Answers saying the destination did not take the request and may later: too many requests, unavailable. */
const TRY_LATER = new Set([429, 503])

/**
 * Whether a failed send may be made again without risking a second delivery:
 * nothing reached the destination (its breaker was open, its name did not
 * resolve, it refused the connection, the token request before it failed),
 * or it answered that it did not take the request (429, 503). A timeout, a
 * connection cut mid-exchange or any other answer may have been acted on;
 * a template or header error would fail the same way again.
 */
export const isRetryableFailure = (error: SendError | null, response: Pick<RecordedResponse, 'status'> | null, refusedConnection: boolean): boolean => {
  if (error === null) return false
  switch (error.code) {
    case 'DESTINATION_UNAVAILABLE':
    case 'DNS_FAILURE':
    case 'AUTH_FAILED':
      return true
    case 'CONNECTION_FAILED':
      return refusedConnection
    case 'HTTP_STATUS':
      return response !== null && TRY_LATER.has(response.status)
    case 'TEMPLATE_ERROR':
    case 'INVALID_HEADERS':
    case 'DESTINATION_REFUSED':
    case 'TIMEOUT':
    case 'TOKEN_NOT_FOUND':
    case 'SIGNING_FAILED':
    case 'OUTCOME_UNKNOWN':
      return false
    default: {
      const _never: never = error.code
      return _never
    }
  }
}

/** Only sends of a trigger are retried by themselves; manual re-sends and tests are a person's. */
export const isAutomatic = (trigger: SendTrigger): boolean => trigger.type === 'PaymentOrderApproved' || trigger.type === 'CreditDisbursed'

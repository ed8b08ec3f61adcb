import type { ScheduledRetry, SendTrigger, WebhookSendCompleted, WebhookSendEvent, WebhookSendStarted } from '../events/webhookSend.js'
import { AppError } from '../shared/errors.js'
import { deterministicIdAfter } from '../shared/ids.js'
import type { Aggregate } from './decider.js'
import { isAutomatic, retryDelayMs } from './webhookRetryPolicy.js'

type StartedData = WebhookSendStarted['data']
type CompletedData = WebhookSendCompleted['data']

export type WebhookSendCommand =
  | ({ type: 'StartWebhookSend'; now: string } & Omit<StartedData, 'startedAt'>)
  /**
   * `retryable`: the failure reached nothing (webhookRetryPolicy.ts);
   * `retryAttempts`: how many retries an automatic send gets (WEBHOOK_RETRY_ATTEMPTS).
   */
  | ({ type: 'CompleteWebhookSend'; retryable: boolean; retryAttempts: number; now: string } & Omit<CompletedData, 'sendId' | 'organizationId' | 'webhookId' | 'completedAt'>)
  | { type: 'MarkWebhookSendUnknown'; reason: string; now: string }
  /** The `webhookRetries` job: the scheduled retry's time has come. */
  | { type: 'ReleaseWebhookRetry'; now: string }

export interface WebhookSendState {
  status: 'none' | 'started' | 'delivered' | 'failed' | 'unknown'
  sendId: string
  organizationId: string
  webhookId: string | null
  trigger: SendTrigger | null
  creditId: string | null
  orderId: string | null
  /** The retry this failed send scheduled, until it is released. */
  retry: { scheduled: ScheduledRetry; released: boolean } | null
}

/** The id of an automatic retry: one per (original send, attempt), so a retry released twice is sent once. */
export const retrySendId = (trigger: SendTrigger, originalSendId: string, attempt: number): string =>
  deterministicIdAfter(trigger.eventId ?? originalSendId, originalSendId, `retry-${attempt}`)

/** The retry a failed automatic send schedules, or null (not retryable, not automatic, or its attempts used). */
const nextRetry = (state: WebhookSendState, command: Extract<WebhookSendCommand, { type: 'CompleteWebhookSend' }>): ScheduledRetry | null => {
  const { trigger } = state
  if (command.outcome !== 'failed' || !command.retryable || trigger === null || !isAutomatic(trigger) || state.status !== 'started') return null
  const attempt = (trigger.attempt ?? 0) + 1
  if (attempt > command.retryAttempts) return null
  const originalSendId = trigger.originalSendId ?? state.sendId
  return {
    retrySendId: retrySendId(trigger, originalSendId, attempt), attempt, creditId: state.creditId, orderId: state.orderId,
    trigger: { type: trigger.type, eventId: trigger.eventId, logId: null, originalSendId, originalType: trigger.originalType ?? trigger.type, attempt },
  }
}

/**
 * A send's life: started once (a second start decides nothing, which is how
 * the caller learns not to send), then one outcome. An outcome that arrives
 * after the send was closed as unknown (another instance restarted meanwhile)
 * is still recorded: it is the truth.
 */
export const webhookSendAggregate: Aggregate<WebhookSendCommand, WebhookSendEvent, WebhookSendState> = {
  streamType: 'webhookSend',
  eventTypes: ['WebhookSendStarted', 'WebhookSendCompleted', 'WebhookSendOutcomeUnknown', 'WebhookSendRetryScheduled', 'WebhookSendRetryReleased'],
  initialState: () => ({ status: 'none', sendId: '', organizationId: '', webhookId: null, trigger: null, creditId: null, orderId: null, retry: null }),
  decide(command, state) {
    switch (command.type) {
      case 'StartWebhookSend': {
        if (state.status !== 'none') return []
        const { type: _type, now, ...data } = command
        return [{ type: 'WebhookSendStarted', data: { ...data, startedAt: now } }]
      }
      case 'CompleteWebhookSend': {
        if (state.status === 'none') throw new AppError('NOT_FOUND', 'webhook send not found', { resource: 'webhook send' })
        if (state.status !== 'started' && state.status !== 'unknown') return []
        const { type: _type, now, retryable: _retryable, retryAttempts: _attempts, ...data } = command
        const ids = { sendId: state.sendId, organizationId: state.organizationId, webhookId: state.webhookId }
        const completed: WebhookSendEvent = { type: 'WebhookSendCompleted', data: { ...ids, ...data, completedAt: now } }
        const retry = nextRetry(state, command)
        if (retry === null) return [completed]
        const dueAt = new Date(Date.parse(now) + retryDelayMs(retry.attempt)).toISOString()
        return [completed, { type: 'WebhookSendRetryScheduled', data: { ...ids, ...retry, dueAt, scheduledAt: now } }]
      }
      case 'MarkWebhookSendUnknown':
        if (state.status !== 'started') return []
        return [{ type: 'WebhookSendOutcomeUnknown', data: {
          sendId: state.sendId, organizationId: state.organizationId, webhookId: state.webhookId, reason: command.reason, recordedAt: command.now,
        } }]
      case 'ReleaseWebhookRetry': {
        if (state.retry === null || state.retry.released) return []
        return [{ type: 'WebhookSendRetryReleased', data: {
          sendId: state.sendId, organizationId: state.organizationId, webhookId: state.webhookId, ...state.retry.scheduled, releasedAt: command.now,
        } }]
      }
      default: {
        const _never: never = command
        return _never
      }
    }
  },
  evolve(state, event) {
    switch (event.type) {
      case 'WebhookSendStarted':
        return {
          status: 'started', sendId: event.data.sendId, organizationId: event.data.organizationId, webhookId: event.data.webhookId,
          trigger: event.data.trigger, creditId: event.data.creditId, orderId: event.data.orderId, retry: null,
        }
      case 'WebhookSendCompleted':
        return { ...state, status: event.data.outcome }
      case 'WebhookSendOutcomeUnknown':
        return { ...state, status: 'unknown' }
      case 'WebhookSendRetryScheduled': {
        const { retrySendId: id, attempt, trigger, creditId, orderId } = event.data
        return { ...state, retry: { scheduled: { retrySendId: id, attempt, trigger, creditId, orderId }, released: false } }
      }
      case 'WebhookSendRetryReleased':
        return state.retry === null ? state : { ...state, retry: { ...state.retry, released: true } }
      default: {
        const _never: never = event
        return _never
      }
    }
  },
}

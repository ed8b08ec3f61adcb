import type { WebhookSendCompleted, WebhookSendEvent, WebhookSendStarted } from '../events/webhookSend.js'
import { AppError } from '../shared/errors.js'
import type { Aggregate } from './decider.js'

type StartedData = WebhookSendStarted['data']
type CompletedData = WebhookSendCompleted['data']

export type WebhookSendCommand =
  | ({ type: 'StartWebhookSend'; now: string } & Omit<StartedData, 'startedAt'>)
  | ({ type: 'CompleteWebhookSend'; now: string } & Omit<CompletedData, 'sendId' | 'organizationId' | 'webhookId' | 'completedAt'>)
  | { type: 'MarkWebhookSendUnknown'; reason: string; now: string }

export interface WebhookSendState {
  status: 'none' | 'started' | 'delivered' | 'failed' | 'unknown'
  sendId: string
  organizationId: string
  webhookId: string | null
}

/**
 * A send's life: started once (a second start decides nothing, which is how
 * the caller learns not to send), then one outcome. An outcome that arrives
 * after the send was closed as unknown (another instance restarted meanwhile)
 * is still recorded: it is the truth.
 */
export const webhookSendAggregate: Aggregate<WebhookSendCommand, WebhookSendEvent, WebhookSendState> = {
  streamType: 'webhookSend',
  eventTypes: ['WebhookSendStarted', 'WebhookSendCompleted', 'WebhookSendOutcomeUnknown'],
  initialState: () => ({ status: 'none', sendId: '', organizationId: '', webhookId: null }),
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
        const { type: _type, now, ...data } = command
        return [{ type: 'WebhookSendCompleted', data: { sendId: state.sendId, organizationId: state.organizationId, webhookId: state.webhookId, ...data, completedAt: now } }]
      }
      case 'MarkWebhookSendUnknown':
        if (state.status !== 'started') return []
        return [{ type: 'WebhookSendOutcomeUnknown', data: {
          sendId: state.sendId, organizationId: state.organizationId, webhookId: state.webhookId, reason: command.reason, recordedAt: command.now,
        } }]
      default: {
        const _never: never = command
        return _never
      }
    }
  },
  evolve(state, event) {
    switch (event.type) {
      case 'WebhookSendStarted':
        return { status: 'started', sendId: event.data.sendId, organizationId: event.data.organizationId, webhookId: event.data.webhookId }
      case 'WebhookSendCompleted':
        return { ...state, status: event.data.outcome }
      case 'WebhookSendOutcomeUnknown':
        return { ...state, status: 'unknown' }
      default: {
        const _never: never = event
        return _never
      }
    }
  },
}

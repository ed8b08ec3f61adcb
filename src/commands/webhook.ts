import type { WebhookConfiguration, WebhookEvent } from '../events/webhook.js'
import { AppError } from '../shared/errors.js'
import type { Aggregate } from './decider.js'

export type WebhookCommand =
  | { type: 'CreateWebhook'; webhookId: string; organizationId: string; configuration: WebhookConfiguration; now: string }
  | { type: 'UpdateWebhook'; changes: Partial<WebhookConfiguration>; now: string }
  | { type: 'ArchiveWebhook'; now: string }

export interface WebhookState {
  status: 'none' | 'active' | 'archived'
  webhookId: string
  organizationId: string
  configuration: WebhookConfiguration | null
}

const requireExisting = (state: WebhookState): WebhookConfiguration => {
  if (state.status === 'none' || state.configuration === null) throw new AppError('NOT_FOUND', 'webhook not found', { resource: 'webhook' })
  return state.configuration
}

export const webhookAggregate: Aggregate<WebhookCommand, WebhookEvent, WebhookState> = {
  streamType: 'webhook',
  eventTypes: ['WebhookCreated', 'WebhookUpdated', 'WebhookArchived'],
  initialState: () => ({ status: 'none', webhookId: '', organizationId: '', configuration: null }),
  decide(command, state) {
    switch (command.type) {
      case 'CreateWebhook':
        if (state.status !== 'none') throw new AppError('ALREADY_EXISTS', 'webhook already exists')
        return [{ type: 'WebhookCreated', data: {
          webhookId: command.webhookId, organizationId: command.organizationId, configuration: command.configuration, createdAt: command.now,
        } }]
      case 'UpdateWebhook': {
        const current = requireExisting(state)
        if (state.status === 'archived') throw new AppError('NOT_ACTIVE', 'an archived webhook cannot be changed')
        const changes: Partial<WebhookConfiguration> = {}
        for (const key of Object.keys(command.changes) as Array<keyof WebhookConfiguration>) {
          if (JSON.stringify(command.changes[key]) !== JSON.stringify(current[key])) Object.assign(changes, { [key]: command.changes[key] })
        }
        if (Object.keys(changes).length === 0) return []
        return [{ type: 'WebhookUpdated', data: { webhookId: state.webhookId, organizationId: state.organizationId, changes, updatedAt: command.now } }]
      }
      case 'ArchiveWebhook':
        requireExisting(state)
        if (state.status === 'archived') return []
        return [{ type: 'WebhookArchived', data: { webhookId: state.webhookId, organizationId: state.organizationId, archivedAt: command.now } }]
      default: {
        const _never: never = command
        return _never
      }
    }
  },
  evolve(state, event) {
    switch (event.type) {
      case 'WebhookCreated':
        return { status: 'active', webhookId: event.data.webhookId, organizationId: event.data.organizationId, configuration: event.data.configuration }
      case 'WebhookUpdated':
        return { ...state, configuration: state.configuration === null ? null : { ...state.configuration, ...event.data.changes } }
      case 'WebhookArchived':
        return { ...state, status: 'archived' }
      default: {
        const _never: never = event
        return _never
      }
    }
  },
}

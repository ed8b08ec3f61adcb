import type { RequestKey } from '../events/types.js'
import type { WebhookConfiguration, WebhookEvent } from '../events/webhook.js'
import { AppError } from '../shared/errors.js'
import { deterministicId } from '../shared/ids.js'
import type { Aggregate } from './decider.js'
import type { CommandContext, CommandHandler } from './handler.js'
import { createStreamOnce } from './idempotency.js'

export type WebhookCommand =
  /**
   * `idempotency`: the creator's `Idempotency-Key` (the id from `keyedWebhookId`) and its request's digest.
   * `mayReadScores`: whether the creator (or editor) holds `ReadAnalysis`. `scoresHidden`: what the request asks of the
   * rendering of credits' scores (absent: a creator who may read them sends them, one who may not does not; an edit keeps it).
   */
  | {
    type: 'CreateWebhook'; webhookId: string; organizationId: string; configuration: WebhookConfiguration; mayReadScores: boolean; now: string
    scoresHidden?: boolean
    idempotency?: RequestKey
  }
  | { type: 'UpdateWebhook'; changes: Partial<WebhookConfiguration>; scoresHidden?: boolean; mayReadScores: boolean; now: string }
  | { type: 'ArchiveWebhook'; now: string }

export interface WebhookState {
  status: 'none' | 'active' | 'archived'
  webhookId: string
  organizationId: string
  configuration: WebhookConfiguration | null
  /** Its sends render `.Credit.Score` empty: whoever last created or changed it may not read scores. */
  scoresHidden: boolean
  /** The `Idempotency-Key` it was created with, and its request's digest; absent when it was created without one. */
  idempotency?: RequestKey
}

const scoresNeedReadAnalysis = (what: string): AppError =>
  new AppError('FORBIDDEN', `${what} needs permission ReadAnalysis`, { permission: 'ReadAnalysis' })

const requireExisting = (state: WebhookState): WebhookConfiguration => {
  if (state.status === 'none' || state.configuration === null) throw new AppError('NOT_FOUND', 'webhook not found', { resource: 'webhook' })
  return state.configuration
}

export const webhookAggregate: Aggregate<WebhookCommand, WebhookEvent, WebhookState> = {
  streamType: 'webhook',
  eventTypes: ['WebhookCreated', 'WebhookUpdated', 'WebhookArchived'],
  initialState: () => ({ status: 'none', webhookId: '', organizationId: '', configuration: null, scoresHidden: false }),
  decide(command, state) {
    switch (command.type) {
      case 'CreateWebhook':
        if (state.status !== 'none') {
          // A creation with a Key that lost a race to the same Key: the caller compares it with the webhook the first one made.
          if (command.idempotency !== undefined) return []
          throw new AppError('ALREADY_EXISTS', 'webhook already exists')
        }
        if (command.scoresHidden === false && !command.mayReadScores) throw scoresNeedReadAnalysis('sending credits\' scores')
        return [{ type: 'WebhookCreated', data: {
          webhookId: command.webhookId, organizationId: command.organizationId, configuration: command.configuration, createdAt: command.now,
          ...(command.idempotency === undefined ? {} : { idempotency: command.idempotency }),
          ...((command.scoresHidden ?? !command.mayReadScores) ? { scoresHidden: true as const } : {}),
        } }]
      case 'UpdateWebhook': {
        const current = requireExisting(state)
        if (state.status === 'archived') throw new AppError('NOT_ACTIVE', 'an archived webhook cannot be changed')
        const changes: Partial<WebhookConfiguration> = {}
        for (const key of Object.keys(command.changes) as Array<keyof WebhookConfiguration>) {
          if (JSON.stringify(command.changes[key]) !== JSON.stringify(current[key])) Object.assign(changes, { [key]: command.changes[key] })
        }
        const scoresHidden = command.scoresHidden !== undefined && command.scoresHidden !== state.scoresHidden ? command.scoresHidden : undefined
        if (Object.keys(changes).length === 0 && scoresHidden === undefined) return []
        // A webhook that sends scores could be pointed anywhere by whoever edits it: only someone who may read scores does.
        if (!state.scoresHidden && !command.mayReadScores) throw scoresNeedReadAnalysis('changing a webhook whose sends render credits\' scores')
        // Turning them on is asked for, never a side effect of another change (an administrator rotating a secret of a member's webhook).
        if (scoresHidden === false && !command.mayReadScores) throw scoresNeedReadAnalysis('sending credits\' scores')
        return [{ type: 'WebhookUpdated', data: {
          webhookId: state.webhookId, organizationId: state.organizationId, changes, updatedAt: command.now,
          ...(scoresHidden === undefined ? {} : { scoresHidden }),
        } }]
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
        return {
          status: 'active', webhookId: event.data.webhookId, organizationId: event.data.organizationId, configuration: event.data.configuration,
          scoresHidden: event.data.scoresHidden === true,
          ...(event.data.idempotency === undefined ? {} : { idempotency: event.data.idempotency }),
        }
      case 'WebhookUpdated':
        return {
          ...state, configuration: state.configuration === null ? null : { ...state.configuration, ...event.data.changes },
          scoresHidden: event.data.scoresHidden ?? state.scoresHidden,
        }
      case 'WebhookArchived':
        return { ...state, status: 'archived' }
      default: {
        const _never: never = event
        return _never
      }
    }
  },
}

/** The id of the webhook an organization's `Idempotency-Key` names: one webhook per Key, whatever the concurrency. */
export const keyedWebhookId = (organizationId: string, key: string): string => deterministicId('webhook', organizationId, key)

/**
 * A webhook creation under an `Idempotency-Key` (its id from
 * `keyedWebhookId`): the first creates the webhook, the same request again
 * gets it back (`created: false`) whatever it has become, another request
 * with the Key is refused (409 `IDEMPOTENCY_KEY_REUSED`).
 */
export const createWebhookOnce = (
  commands: CommandHandler, command: Extract<WebhookCommand, { type: 'CreateWebhook' }> & { idempotency: RequestKey }, context: CommandContext,
): Promise<{ created: boolean; position: number }> => createStreamOnce(commands, webhookAggregate, command.webhookId, command, context, {
  what: 'webhook creation request', details: { webhookId: command.webhookId }, exists: (state) => state.status !== 'none',
})

import type { Event, RequestKey } from './types.js'

/** The interface's webhook configuration fields (templates are Go text/template syntax, rendered at send time). */
export interface WebhookConfiguration {
  tag: string
  url: string
  /** JSON text of HTTP headers; a template. */
  requestHeader: string
  /** A template. */
  requestBody: string
  authEnabled: boolean
  authUrl: string
  authMethod: string
  authRequestBody: string
  authRequestHeader: string
  tokenSourceKey: string
  tokenType: string
  authHeader: string
  tokenHeader: string
  /** name → JSONPath applied to the destination's response. */
  responseQueries: Record<string, string>
  /** Standard Webhooks signing secret, sealed with the data key; null: unsigned (the interface's default). */
  signingSecret: string | null
}

export type WebhookCreated = Event<'WebhookCreated', {
  webhookId: string
  organizationId: string
  configuration: WebhookConfiguration
  createdAt: string
  /** The creator's `Idempotency-Key` and a keyed digest of its request (it may hold secrets); absent when it sent none. */
  idempotency?: RequestKey
  /** Present when its sends render `.Credit.Score` empty: its creator may not read scores (`ReadAnalysis`) or asked so. */
  scoresHidden?: true
}>
/** Carries only the configuration fields that changed. */
export type WebhookUpdated = Event<'WebhookUpdated', {
  webhookId: string
  organizationId: string
  changes: Partial<WebhookConfiguration>
  updatedAt: string
  /** Present when the change turns the rendering of credits' scores off (true) or on (false, asked by a holder of `ReadAnalysis`). */
  scoresHidden?: boolean
}>
export type WebhookArchived = Event<'WebhookArchived', { webhookId: string; organizationId: string; archivedAt: string }>

export type WebhookEvent = WebhookCreated | WebhookUpdated | WebhookArchived

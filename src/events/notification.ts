import type { Event } from './types.js'

export type NotificationChannel = 'smtp' | 'log'

/** What a notification is about: its topic and the id of the record it concerns (e.g. an audit id). */
export interface NotificationTopic {
  topic: 'signature-file-deleted'
  topicId: string
}

/**
 * Recorded before the message leaves, so that after a crash the service knows a
 * send may have happened and does not repeat it (at most once).
 */
export type NotificationDispatched = Event<'NotificationDispatched', NotificationTopic & {
  notificationId: string
  organizationId: string
  channel: NotificationChannel
  recipient: string | null
  subject: string
  /** The event the notification answers. */
  causationEventId: string
  dispatchedAt: string
}>
export type NotificationDelivered = Event<'NotificationDelivered', NotificationTopic & {
  notificationId: string
  organizationId: string
  channel: NotificationChannel
  /** SMTP message id; null when only logged. */
  messageId: string | null
  deliveredAt: string
}>
export type NotificationFailed = Event<'NotificationFailed', NotificationTopic & {
  notificationId: string
  organizationId: string
  channel: NotificationChannel
  error: string
  failedAt: string
}>

/** `NotificationFailed.error` of a notice that had nowhere to go: its recipient has no address. */
export const SIGNER_WITHOUT_ADDRESS = 'the signer has no e-mail address'

/** `NotificationFailed.error` of a send a stop cut short: it may have gone out, and is not sent again. */
export const SEND_CUT_SHORT = 'the service stopped while sending; the outcome is unknown and the message was not sent again'

export type NotificationEvent = NotificationDispatched | NotificationDelivered | NotificationFailed

import type { NotificationChannel } from '../events/notification.js'

export interface OutgoingMessage {
  to: string
  subject: string
  text: string
  html: string
}

export interface SentMessage {
  /** The transport's id of the message (SMTP Message-ID); null when only logged. */
  messageId: string | null
}

/**
 * Where notifications leave the service. Fed by process managers from events,
 * which record every outcome; a send that throws is recorded as failed.
 */
export interface Notifier {
  readonly channel: NotificationChannel
  /** Whether a message needs a recipient address to go anywhere. */
  readonly needsRecipient: boolean
  send(message: OutgoingMessage): Promise<SentMessage>
  close(): Promise<void>
}

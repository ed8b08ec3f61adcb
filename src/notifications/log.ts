import type { Logger } from 'pino'
import type { Notifier, OutgoingMessage, SentMessage } from './notifier.js'

/** Without SMTP: every message is written to the log (and recorded as an event by the caller). */
export class LogNotifier implements Notifier {
  readonly channel = 'log' as const
  readonly needsRecipient = false
  constructor(private readonly logger: Logger) {}

  async send(message: OutgoingMessage): Promise<SentMessage> {
    this.logger.info({ notification: { to: message.to, subject: message.subject, text: message.text } }, 'notification (no SMTP_URL: logged, not sent)')
    return { messageId: null }
  }

  async close(): Promise<void> {}
}

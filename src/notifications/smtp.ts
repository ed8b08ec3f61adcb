import nodemailer, { type Transporter } from 'nodemailer'
import type { Notifier, OutgoingMessage, SentMessage } from './notifier.js'

export interface SmtpOptions {
  url: string
  from: string
  timeoutMs: number
}

/** E-mail through an SMTP server (nodemailer), one pooled connection set for the process. */
export class SmtpNotifier implements Notifier {
  readonly channel = 'smtp' as const
  readonly needsRecipient = true
  private readonly transport: Transporter

  constructor(private readonly options: SmtpOptions) {
    this.transport = nodemailer.createTransport({
      url: options.url,
      pool: true,
      maxConnections: 2,
      connectionTimeout: options.timeoutMs,
      greetingTimeout: options.timeoutMs,
      socketTimeout: options.timeoutMs,
    })
  }

  async send(message: OutgoingMessage): Promise<SentMessage> {
    const info = await this.transport.sendMail({ from: this.options.from, to: message.to, subject: message.subject, text: message.text, html: message.html })
    const messageId: unknown = info.messageId
    return { messageId: typeof messageId === 'string' ? messageId : null }
  }

  async close(): Promise<void> {
    this.transport.close()
  }
}

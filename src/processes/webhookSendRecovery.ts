import type { Services } from '../services.js'
import { closeInterruptedSends } from '../webhooks/sender.js'
import { defineProcess } from './process.js'

/**
 * At start-up, before any process sends, a webhook send that was started and
 * never concluded (the process died in between) is recorded as `unknown`. It
 * is never sent again: automatic sends are keyed by (trigger event, webhook),
 * and a re-send is a deliberate POST /webhook/{id}/request.
 */
export const webhookSendRecoveryProcess = defineProcess<Services, never>({
  name: 'webhookSendRecovery',
  handles: [],
  async handle() {},
  async recover(services) {
    const closed = await closeInterruptedSends(services, 'the service stopped after the send started and before its outcome was recorded; it was not sent again')
    if (closed > 0) services.logger.warn({ closed }, 'webhook sends interrupted by a stop recorded as unknown')
  },
})

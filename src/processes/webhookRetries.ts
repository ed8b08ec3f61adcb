import { webhookSendAggregate } from '../commands/webhookSend.js'
import type { Services } from '../services.js'
import type { ScheduledJob } from './scheduler.js'

/** Retries released per run: the rest wait for the next run, ten seconds on. */
const RELEASE_BATCH = 200

/**
 * Releases the automatic webhook retries whose time has come
 * (`WebhookSendRetryReleased`, once per retry); the webhookRetry process
 * then sends each under its own id.
 */
export const webhookRetriesJob: ScheduledJob<Services> = {
  name: 'webhookRetries',
  schedule: '*/10 * * * * *',
  async run(services) {
    const now = services.clock.now().toISOString()
    for (const due of await services.queries.webhookSends.dueRetries(now, RELEASE_BATCH)) {
      try {
        await services.commands.execute(webhookSendAggregate, due.failedSendId, { type: 'ReleaseWebhookRetry', now }, {
          organizationId: due.organizationId, actorId: null, correlationId: due.failedSendId, causationId: null,
        })
      } catch (error) {
        // One retry's failure must not hold back the others; it is released on a later run.
        services.logger.error({ err: error, sendId: due.failedSendId }, 'webhook retry could not be released')
      }
    }
  },
}

import { creditLimitAggregate, utcDate } from '../commands/creditLimit.js'
import type { Services } from '../services.js'
import { newId } from '../shared/ids.js'
import type { ScheduledJob } from './scheduler.js'

const BATCH = 200

/**
 * Moves limits whose expiration date has passed (in UTC) to `expired`, one
 * `CreditLimitExpired` event each. Hourly, so a day's expiries land within the
 * first hour of the next day even after a restart; a limit renewed meanwhile is
 * left alone by its decider.
 */
export const creditLimitExpiryJob: ScheduledJob<Services> = {
  name: 'creditLimitExpiry',
  schedule: '5 * * * *',
  async run(services) {
    const now = services.clock.now()
    const today = utcDate(now)
    const correlationId = newId()
    let afterId = ''
    let position = 0
    for (;;) {
      const batch = await services.queries.creditLimits.lapsed(today, afterId, BATCH)
      for (const limit of batch) {
        try {
          const result = await services.commands.execute(creditLimitAggregate, limit._id, { type: 'ExpireCreditLimit', today, now: now.toISOString() }, {
            organizationId: limit.creditorId, actorId: null, correlationId,
          })
          position = Math.max(position, result.position)
        } catch (error) {
          // One limit that cannot be expired now (a conflict) must not hold back the others; the next run retries it.
          services.logger.warn({ err: error, creditLimitId: limit._id }, 'credit limit not expired')
        }
      }
      const last = batch.at(-1)
      if (last === undefined || batch.length < BATCH) break
      afterId = last._id
    }
    await services.settle(position)
  },
}

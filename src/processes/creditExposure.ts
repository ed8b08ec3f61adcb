import { exposureEventTypes, followCreditExposure } from '../commands/creditExposure.js'
import type { Services } from '../services.js'
import { causedBy, defineProcess } from './process.js'

/** Credit-limit exposure follows the credits: reserved at disbursement, released as they are paid, cancelled or rejected (docs/credit-limits.md). */
export const creditExposureProcess = defineProcess<Services, (typeof exposureEventTypes)[number]>({
  name: 'creditExposure',
  handles: exposureEventTypes,
  // A credit limit counts each credit on its own, so credits are followed concurrently (a shared limit's conflicts are retried by the command handler).
  inTurnPer: (event) => event.data.creditId,
  async handle(event, services) {
    await followCreditExposure(services.commands, event, causedBy(event))
  },
})

import { exposureEventTypes, followCreditExposure } from '../commands/creditExposure.js'
import type { Services } from '../services.js'
import { causedBy, defineProcess } from './process.js'

/** Credit-limit exposure follows the credits: reserved at disbursement, released as they are paid, cancelled or rejected (docs/credit-limits.md). */
export const creditExposureProcess = defineProcess<Services, (typeof exposureEventTypes)[number]>({
  name: 'creditExposure',
  handles: exposureEventTypes,
  async handle(event, services) {
    await followCreditExposure(services.commands, event, causedBy(event))
  },
})

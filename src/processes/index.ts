import type { Services } from '../services.js'
import { organizationSetupProcess } from './organizationSetup.js'
import type { ProcessManager } from './process.js'
import type { ScheduledJob } from './scheduler.js'
import { creditLimitExpiryJob } from './creditLimitExpiry.js'

/** Every process manager of the service. */
export const allProcesses: ReadonlyArray<ProcessManager<Services>> = [
  organizationSetupProcess,
]

/** Every node-cron job of the service. */
export const allJobs: ReadonlyArray<ScheduledJob<Services>> = [
  creditLimitExpiryJob,
]

import type { Services } from '../services.js'
import { organizationSetupProcess } from './organizationSetup.js'
import type { ProcessManager } from './process.js'
import type { ScheduledJob } from './scheduler.js'
import { paymentApplicationProcess, paymentFlowProcess, paymentOutcomesJob } from './paymentFlow.js'

/** Every process manager of the service. */
export const allProcesses: ReadonlyArray<ProcessManager<Services>> = [
  organizationSetupProcess,
  paymentFlowProcess,
  paymentApplicationProcess,
]

/** Every node-cron job of the service. */
export const allJobs: ReadonlyArray<ScheduledJob<Services>> = [
  paymentOutcomesJob,
]

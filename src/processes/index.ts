import type { Services } from '../services.js'
import { organizationSetupProcess } from './organizationSetup.js'
import { exportRunnerProcess } from './exportRunner.js'
import { exportFileCleanupProcess } from './exportFileCleanup.js'
import { exportScheduledJobs } from './exportJobs.js'
import type { ProcessManager } from './process.js'
import type { ScheduledJob } from './scheduler.js'
import { webhookSendRecoveryProcess } from './webhookSendRecovery.js'
import { signerNotificationsProcess } from './signerNotifications.js'
import { paymentApplicationProcess, paymentFlowProcess, paymentOutcomesJob } from './paymentFlow.js'
import { creditLimitExpiryJob } from './creditLimitExpiry.js'
import { registrationRecoveryJob } from './registrationRecovery.js'
import { creditScoringProcess } from './creditScoring.js'
import { creditExposureProcess } from './creditExposure.js'
import { webhookFiringProcess } from './webhookFiring.js'

/** Every process manager of the service. */
export const allProcesses: ReadonlyArray<ProcessManager<Services>> = [
  organizationSetupProcess,
  webhookSendRecoveryProcess,
  exportRunnerProcess,
  exportFileCleanupProcess,
  signerNotificationsProcess,
  paymentFlowProcess,
  paymentApplicationProcess,
  creditScoringProcess,
  creditExposureProcess,
  webhookFiringProcess,
]

/** Every node-cron job of the service. */
export const allJobs: ReadonlyArray<ScheduledJob<Services>> = [
  ...exportScheduledJobs,
  paymentOutcomesJob,
  creditLimitExpiryJob,
  registrationRecoveryJob,
]

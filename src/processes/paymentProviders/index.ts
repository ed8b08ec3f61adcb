import type { PaymentProviderName } from '../../shared/lending.js'
import type { Config } from '../../shared/config.js'
import { manualProvider } from './manual.js'
import type { PaymentProvider } from './port.js'
import { sandboxProvider } from './sandbox.js'

export type { PaymentProvider, ProviderOutcome, ProviderPayment, ProviderSubmission } from './port.js'

/** The built-in providers, by the name credit lines and orders use. */
export const paymentProviders = (config: Pick<Config, 'sandboxDelayMs' | 'sandboxFailAmount'>): Readonly<Record<PaymentProviderName, PaymentProvider>> => ({
  manual: manualProvider,
  sandbox: sandboxProvider({ delayMs: config.sandboxDelayMs, failAmount: config.sandboxFailAmount }),
})

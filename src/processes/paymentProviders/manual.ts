import type { PaymentProvider } from './port.js'

/** Payments made outside the service (cash, transfer): the order waits until someone approves or rejects it through the API. */
export const manualProvider: PaymentProvider = {
  name: 'manual',
  takesPayments: false,
  start: async () => null,
  outcome: async () => null,
}

import { createHash } from 'node:crypto'
import { money } from '../../shared/money.js'
import type { PaymentProvider } from './port.js'

const reference = (prefix: string, orderId: string) =>
  `${prefix}-${createHash('sha256').update(`${prefix}:${orderId}`).digest('hex').slice(0, 16).toUpperCase()}`

/**
 * A simulated gateway for trying the payment flow end to end: it accepts every
 * payment with references derived from the order id (so a repeated start gives
 * the same ones), completes it once `delayMs` has passed, and declines an
 * order whose amount equals `failAmount`.
 */
export const sandboxProvider = (options: { delayMs: number; failAmount: string }): PaymentProvider => {
  const failAmount = money(options.failAmount)
  return {
    name: 'sandbox',
    takesPayments: true,
    start: async (payment, now) => ({
      transactionReference: reference('SBX-TX', payment.orderId),
      paymentReference: reference('SBX-PAY', payment.orderId),
      pollAfter: new Date(now.getTime() + options.delayMs).toISOString(),
    }),
    outcome: async (payment, now) => {
      const processingEnds = Date.parse(payment.submittedAt) + options.delayMs
      if (now.getTime() < processingEnds) return null
      if (money(payment.amount).equals(failAmount)) {
        return { outcome: 'failed', errorMessage: `sandbox: payment declined (amount ${payment.amount} is the decline trigger)`, paymentReference: '' }
      }
      return { outcome: 'completed', errorMessage: '', paymentReference: reference('SBX-PAY', payment.orderId) }
    },
  }
}

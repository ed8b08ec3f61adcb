import { paymentOrderAggregate } from '../commands/paymentOrder.js'
import { applyApprovedPayment, withdrawIfUnpayable } from '../commands/payments.js'
import type { Services } from '../services.js'
import { paymentProviders } from './paymentProviders/index.js'
import { causedBy, defineProcess } from './process.js'
import type { ScheduledJob } from './scheduler.js'

/** A new order starts the payment flow with its provider; a provider that processes it records the submission on the order. */
export const paymentFlowProcess = defineProcess<Services, 'PaymentOrderCreated'>({
  name: 'paymentFlow',
  handles: ['PaymentOrderCreated'],
  inTurnPer: (event) => event.data.orderId,
  async handle(event, services) {
    const provider = paymentProviders(services.config)[event.data.provider]
    const { orderId, amount, currency, method, gatewayOption, createdAt, creditId, installmentId } = event.data
    // Started only while pending: an order decided, withdrawn or taken already (a redelivery) is not handed to the provider again.
    if ((await services.commands.load(paymentOrderAggregate, orderId)).state.status !== 'pending') return
    if (provider.takesPayments) {
      // Not handed over for a credit a payoff settled since the order was made: the provider would charge the debtor for nothing.
      // A manual order is left alone: it records money received outside the service, which a person approves or rejects.
      const check = await withdrawIfUnpayable(services.commands, { creditId, installmentId, orderId }, services.clock.now().toISOString(), causedBy(event))
      if (check.outcome !== 'stands') return
    }
    const submission = await provider.start({ orderId, amount, currency, method, gatewayOption, createdAt }, services.clock.now())
    if (submission === null) return
    // Only a pending order is submitted, so a redelivery after a crash records nothing twice.
    await services.commands.execute(paymentOrderAggregate, orderId, {
      type: 'SubmitPaymentOrder', ...submission, now: services.clock.now().toISOString(),
    }, causedBy(event))
  },
})

/** Every approved order is applied to its credit once: the credit remembers the orders it applied. */
export const paymentApplicationProcess = defineProcess<Services, 'PaymentOrderApproved'>({
  name: 'paymentApplication',
  handles: ['PaymentOrderApproved'],
  inTurnPer: (event) => event.data.creditId,
  async handle(event, services) {
    await applyApprovedPayment(services.commands, event.data, causedBy(event))
  },
})

const POLL_BATCH = 500

/**
 * Asks providers for the outcome of the orders they are processing once their
 * poll time has come. Everything it needs is in the read model rebuilt from
 * the log, so after a restart it settles whatever fell due meanwhile; a
 * settled order ignores a second outcome.
 */
export const paymentOutcomesJob: ScheduledJob<Services> = {
  name: 'paymentOutcomes',
  schedule: '* * * * * *',
  async run(services) {
    const now = services.clock.now()
    const providers = paymentProviders(services.config)
    for (const doc of await services.queries.paymentOrders.dueForPolling(now.toISOString(), POLL_BATCH)) {
      const order = doc.order
      if (order === null) continue
      try {
        const outcome = await providers[order.provider].outcome({
          orderId: order.orderId, amount: order.amount, currency: order.currency, method: order.method, gatewayOption: order.gatewayOption,
          createdAt: order.createdAt, transactionReference: doc.transactionReference, submittedAt: doc.submittedAt ?? order.createdAt,
        }, now)
        if (outcome === null) continue
        await services.commands.execute(paymentOrderAggregate, order.orderId, {
          type: 'SettlePaymentOrder', ...outcome, now: now.toISOString(),
        }, { organizationId: order.organizationId, actorId: `provider:${order.provider}`, correlationId: order.orderId, causationId: null })
      } catch (error) {
        // One order's failure must not hold back the others; it is asked again on the next run.
        services.logger.error({ err: error, orderId: order.orderId, provider: order.provider }, 'payment outcome could not be recorded')
      }
    }
  },
}

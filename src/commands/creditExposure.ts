import type { CreditEvent } from '../events/credit.js'
import type { CreditState, CreditStreamEvent } from '../events/creditState.js'
import { dayOf } from '../shared/amortization.js'
import { creditAggregate } from './credit.js'
import { creditLimitAggregate, creditLimitIdOf } from './creditLimit.js'
import type { CommandContext, CommandHandler } from './handler.js'

/** The credit events that move what a credit counts against its debtor's credit limit. */
export type ExposureEvent = Extract<CreditEvent, { type: 'CreditDisbursed' | 'CreditPaymentApplied' | 'CreditPaid' | 'CreditCancelled' | 'CreditRejected' }>

export const exposureEventTypes: ReadonlyArray<ExposureEvent['type']> = ['CreditDisbursed', 'CreditPaymentApplied', 'CreditPaid', 'CreditCancelled', 'CreditRejected']

export const isExposureEvent = (event: CreditStreamEvent): event is ExposureEvent => (exposureEventTypes as readonly string[]).includes(event.type)

/** What stays counted for the credit after the event, and why. */
const release = (event: Exclude<ExposureEvent, { type: 'CreditDisbursed' }>) => {
  switch (event.type) {
    case 'CreditPaymentApplied':
      return { remaining: event.data.outstanding.principal, reason: 'payment' as const, at: event.data.appliedAt }
    case 'CreditPaid':
      return { remaining: '0', reason: 'paid' as const, at: event.data.paidAt }
    case 'CreditCancelled':
      return { remaining: '0', reason: 'cancelled' as const, at: event.data.cancelledAt }
    case 'CreditRejected':
      return { remaining: '0', reason: 'rejected' as const, at: event.data.rejectedAt }
    default: {
      const _never: never = event
      return _never
    }
  }
}

/**
 * Ends what a credit that ended without disbursement counts on its debtor's
 * limit stream, and bars a reservation still on its way (docs/credit-limits.md).
 */
export const closeCreditExposure = (
  commands: CommandHandler,
  credit: Pick<CreditState, 'creditId' | 'organizationId' | 'debtorId' | 'currency'>,
  reason: 'cancelled' | 'rejected',
  now: string,
  context: CommandContext,
) => {
  const { creditId, organizationId, debtorId, currency } = credit
  const creditLimitId = creditLimitIdOf(organizationId, debtorId, currency)
  return commands.execute(creditLimitAggregate, creditLimitId, {
    type: 'CloseCreditExposure', creditLimitId, organizationId, debtorId, currency, creditId, reason, now,
  }, context)
}

/**
 * Keeps what a credit counts against its debtor's credit limit equal to its
 * outstanding principal: a disbursement that found no reservation (a credit
 * disbursed before the limit stream knew it) is recorded, each payment lowers
 * the count to the principal still owed, and a paid, cancelled or rejected
 * credit releases it all. A cancelled or rejected credit that was approved is
 * closed on the limit stream instead, which also bars a reservation still on
 * its way (docs/credit-limits.md). Idempotent on the limit stream (a credit is
 * reserved or closed once, a release only lowers), so a redelivery changes
 * nothing.
 */
export const followCreditExposure = async (commands: CommandHandler, event: ExposureEvent, context: CommandContext) => {
  const { creditId, organizationId } = event.data
  if (event.type === 'CreditDisbursed') {
    const { debtorId, currency, principal, disbursedAt } = event.data
    const creditLimitId = creditLimitIdOf(organizationId, debtorId, currency)
    return commands.execute(creditLimitAggregate, creditLimitId, {
      type: 'ReserveCreditLimit', creditLimitId, organizationId, debtorId, currency, creditId, amount: principal, check: false,
      today: dayOf(disbursedAt), now: disbursedAt,
    }, context)
  }
  const { state: credit } = await commands.load(creditAggregate, creditId)
  const { remaining, reason, at } = release(event)
  // Only a credit once approved can have a disbursement between its check and its reservation; closing the others would
  // add an event to the limit stream for every rejected request.
  if ((reason === 'cancelled' || reason === 'rejected') && credit.approvedAt !== null) return closeCreditExposure(commands, credit, reason, at, context)
  return commands.execute(creditLimitAggregate, creditLimitIdOf(organizationId, credit.debtorId, credit.currency), {
    type: 'ReleaseCreditLimit', creditId, remaining, reason, now: at,
  }, context)
}

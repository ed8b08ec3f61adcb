import type { PaymentAllocation } from '../events/credit.js'
import { exact, isZero, plus, toMoneyText, ZERO } from '../shared/exactDecimal.js'
import { toMoneyString } from '../shared/money.js'
import type { InterestWaiver } from '../shared/installments.js'
import { applyAt, defineProjection } from './projection.js'
import type { Filter, ReadStore } from './readStore.js'

/**
 * One movement of money on a credit: its disbursement, or one payment applied
 * to it. Ledgers, cut-offs (the portfolio as it stood at a moment), bureau
 * reports and refinancing read these instead of replaying credits.
 */
export interface CreditMovementDoc {
  _id: string
  _position?: number
  organizationId: string
  creditId: string
  creditLineId: string
  debtorId: string
  currency: string
  kind: 'disbursement' | 'payment'
  /** When the credit's balance changed: disbursedAt, or the payment's appliedAt. */
  at: string
  /** Disbursements: the transfer reference; payments: the order id. */
  reference: string
  /** Disbursements: the method (bank_transfer, nequi…); payments: null. */
  method: string | null
  /** Who disbursed; '' for payments (the order has its own approver). */
  actorId: string
  /** Principal lent (disbursement) or repaid (payment). */
  principal: string
  /** Interest collected (payments). */
  interest: string
  /** Charged on top of the order's amount, not applied to the debt. */
  collectionCosts: string
  /** Received beyond what was owed (a balance in the debtor's favour). */
  unapplied: string
  /** Disbursements: the principal; payments: the order's amount (applied + unapplied). */
  amount: string
  /** Payments: the order's target, an installment id or `zero` (the payoff); '' for disbursements. */
  target: string
  allocations: PaymentAllocation[]
  /** Interest a payoff forgave (not accrued by its value date); only on such payments. */
  waivers?: InterestWaiver[]
  /** The credit owes nothing after this movement. */
  settles: boolean
}

const collection = {
  name: 'credit_movements',
  indexes: [{ creditId: 1, at: 1 }, { organizationId: 1, at: 1 }, { debtorId: 1 }],
} as const

const disbursementId = (creditId: string) => `${creditId}:disbursement`
/** The movement (and ledger-a entry) of a payment order applied to a credit. */
export const paymentMovementId = (creditId: string, orderId: string) => `${creditId}:payment:${orderId}`

export const creditMovementsProjection = defineProjection({
  name: 'creditMovements',
  handles: ['CreditDisbursed', 'CreditPaymentApplied'],
  collections: [collection],
  async project(store, event, position) {
    const docs = store.collection<CreditMovementDoc>(collection)
    switch (event.type) {
      case 'CreditDisbursed': {
        const { creditId, organizationId, creditLineId, debtorId, currency, principal, method, reference, disbursedBy, disbursedAt } = event.data
        const zero = toMoneyString(0, currency)
        return applyAt(docs, disbursementId(creditId), position, (): CreditMovementDoc => ({
          _id: disbursementId(creditId), organizationId, creditId, creditLineId, debtorId, currency, kind: 'disbursement', at: disbursedAt,
          reference, method, actorId: disbursedBy, principal, interest: zero, collectionCosts: zero, unapplied: zero, amount: principal,
          target: '', allocations: [], settles: false, _position: position,
        }))
      }
      case 'CreditPaymentApplied': {
        const { creditId, organizationId, creditLineId, currency, orderId, installmentId, amount, unappliedAmount, collectionCosts, allocations,
          outstanding, appliedAt, payoff } = event.data
        // Payments come after the disbursement, whose movement names the debtor (the payment event does not).
        const disbursement = await docs.get(disbursementId(creditId))
        const sum = (part: 'principal' | 'interest') => toMoneyText(allocations.reduce((total, a) => plus(total, exact(a[part])), ZERO), currency)
        const id = paymentMovementId(creditId, orderId)
        return applyAt(docs, id, position, (): CreditMovementDoc => {
          const movement: CreditMovementDoc = {
            _id: id, organizationId, creditId, creditLineId, debtorId: disbursement?.debtorId ?? '', currency, kind: 'payment', at: appliedAt,
            reference: orderId, method: null, actorId: '', principal: sum('principal'), interest: sum('interest'),
            collectionCosts: toMoneyText(exact(collectionCosts), currency), unapplied: toMoneyText(exact(unappliedAmount), currency),
            amount: toMoneyText(exact(amount), currency), target: installmentId, allocations, settles: isZero(exact(outstanding.total)), _position: position,
          }
          if (payoff !== undefined) movement.waivers = payoff.waivers
          return movement
        })
      }
      default: {
        const _never: never = event
        return _never
      }
    }
  },
})

export const creditMovementQueries = (store: ReadStore) => {
  const docs = store.collection<CreditMovementDoc>(collection)
  return {
    /** Movements of an organization (e.g. `{at: {$gte, $lt}}`), streamed in no particular order. */
    stream: (organizationId: string, filter: Filter = {}) => docs.stream({ ...filter, organizationId }),
    count: (organizationId: string, filter: Filter = {}) => docs.count({ ...filter, organizationId }),
    /** One credit's movements before a moment, oldest first (a credit has a bounded number of them). */
    ofCredit: (creditId: string, before: string) => docs.find({ creditId, at: { $lt: before } }, { sort: { at: 1, _id: 1 } }),
  }
}

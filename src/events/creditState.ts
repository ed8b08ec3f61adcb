import { exact, plus, toMoneyText } from '../shared/exactDecimal.js'
import { applyAllocations, installmentPosition, type InstallmentPosition } from '../shared/installments.js'
import type { CreditStateName } from '../shared/lending.js'
import type { CreditEvent, CreditRequested, CreditScored } from './credit.js'
import type { TaxApplied } from './tax.js'

/** What a credit stream holds: its own events and the taxes applied to its principal at disbursement. */
export type CreditStreamEvent = CreditEvent | TaxApplied

export type CreditScore = Omit<CreditScored['data'], 'creditId' | 'organizationId'>

/** What a credit request fixes for the life of the credit, as CreditRequested records it. */
export type CreditTerms = Omit<CreditRequested['data'], 'installments' | 'requestedAt' | 'firstPeriod'>

/**
 * What a credit stream folds into: the credit decider decides on it, and the
 * credits read model stores it as it is, so the API, `asOf` and the model agree.
 * It is kept here, beside the events, because projections import only events
 * and shared code. Plain JSON.
 */
export interface CreditState extends CreditTerms {
  status: 'none' | CreditStateName
  installments: InstallmentPosition[]
  /** Orders already applied: an approval applied twice changes nothing. */
  appliedOrders: string[]
  unapplied: string
  score: CreditScore | null
  /** Taxes applied to the principal at disbursement. */
  taxes: Array<TaxApplied['data']>
  requestedAt: string
  approvedAt: string | null
  approvedBy: string | null
  rejectedAt: string | null
  rejectionReason: string | null
  cancelledAt: string | null
  cancellationReason: string | null
  disbursedAt: string | null
  disbursementMethod: string | null
  disbursementReference: string | null
  firstDueDate: string | null
  maturityDate: string | null
  /** The first period its first installment's interest is for (the request's until disbursement); null on credits requested before first periods were weighed. */
  firstPeriod: { months: number; days: number } | null
  paidAt: string | null
  updatedAt: string
}

export const initialCreditState = (): CreditState => ({
  status: 'none', creditId: '', organizationId: '', creditLineId: '', creditLineName: '', debtorId: '', principal: '0', term: 0, rate: '0',
  rateType: 'FIXED', monthlyRate: '0', currency: '', installmentAmount: '0', totalInterest: '0', totalAmount: '0', requestedFirstDueDate: null,
  availableDays: 0, installments: [], appliedOrders: [], unapplied: '0', score: null, taxes: [], requestedAt: '', approvedAt: null, approvedBy: null,
  rejectedAt: null, rejectionReason: null, cancelledAt: null, cancellationReason: null, disbursedAt: null, disbursementMethod: null,
  disbursementReference: null, firstDueDate: null, maturityDate: null, firstPeriod: null, paidAt: null, updatedAt: '',
})

/** The schedule's interest, summed. */
const scheduledInterest = (installments: readonly InstallmentPosition[], currency: string): string =>
  toMoneyText(installments.reduce((sum, i) => plus(sum, exact(i.interest)), exact('0')), currency)

export const evolveCredit = (state: CreditState, event: CreditStreamEvent): CreditState => {
  switch (event.type) {
    case 'CreditRequested': {
      const { installments, requestedAt, firstPeriod, ...data } = event.data
      return {
        ...initialCreditState(), ...data, status: 'Solicitado', requestedAt, updatedAt: requestedAt, firstPeriod: firstPeriod ?? null,
        installments: installments.map((i) => installmentPosition(i, '0', '0', null)),
      }
    }
    case 'CreditApproved':
      return { ...state, status: 'Aprobado', approvedAt: event.data.approvedAt, approvedBy: event.data.approvedBy, updatedAt: event.data.approvedAt }
    case 'CreditRejected':
      return { ...state, status: 'Rechazado', rejectedAt: event.data.rejectedAt, rejectionReason: event.data.reason, updatedAt: event.data.rejectedAt }
    case 'CreditCancelled':
      return { ...state, status: 'Anulado', cancelledAt: event.data.cancelledAt, cancellationReason: event.data.reason, updatedAt: event.data.cancelledAt }
    case 'CreditDisbursed': {
      const dates = new Map(event.data.installments.map((i) => [i.installmentId, i.dueDate]))
      const { firstPeriod } = event.data
      const installments = state.installments.map((i) => {
        const row = firstPeriod === undefined || i.number !== 1 ? i : { ...i, interest: firstPeriod.interest, amount: firstPeriod.amount }
        return installmentPosition(row, i.paidPrincipal, i.paidInterest, i.paidAt, dates.get(i.installmentId) ?? i.dueDate, i.waivedInterest)
      })
      const totalInterest = firstPeriod === undefined ? state.totalInterest : scheduledInterest(installments, state.currency)
      return {
        ...state, status: 'Desembolsado', disbursedAt: event.data.disbursedAt, disbursementMethod: event.data.method,
        disbursementReference: event.data.reference, firstDueDate: event.data.firstDueDate, maturityDate: event.data.maturityDate,
        installments, totalInterest, firstPeriod: firstPeriod === undefined ? state.firstPeriod : { months: firstPeriod.months, days: firstPeriod.days },
        totalAmount: firstPeriod === undefined ? state.totalAmount : toMoneyText(plus(exact(state.principal), exact(totalInterest)), state.currency),
        updatedAt: event.data.disbursedAt,
      }
    }
    case 'CreditScored': {
      const { creditId: _creditId, organizationId: _organizationId, ...score } = event.data
      return { ...state, score, updatedAt: score.scoredAt }
    }
    case 'CreditPaymentApplied':
      return {
        ...state,
        installments: applyAllocations(state.installments, event.data.allocations, state.currency, event.data.appliedAt, event.data.payoff?.waivers),
        appliedOrders: [...state.appliedOrders, event.data.orderId],
        unapplied: toMoneyText(plus(exact(state.unapplied), exact(event.data.unappliedAmount)), state.currency),
        updatedAt: event.data.appliedAt,
      }
    case 'CreditPaid':
      return { ...state, status: 'Pagado', paidAt: event.data.paidAt, updatedAt: event.data.paidAt }
    case 'TaxApplied':
      return { ...state, taxes: [...state.taxes, event.data] }
    default: {
      const _never: never = event
      return _never
    }
  }
}

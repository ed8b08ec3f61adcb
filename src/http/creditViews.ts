import { Type, type Static } from 'typebox'
import type { CreditState } from '../events/creditState.js'
import { creditFigures, installmentStatus, type CreditDoc } from '../projections/credits.js'
import { installmentAmounts, installmentArrearsDays, isPaid, type InstallmentPosition } from '../shared/installments.js'
import { creditStates, rejectionReasonWithoutScore } from '../shared/lending.js'
import { exact, plus, toMoneyText, ZERO } from '../shared/exactDecimal.js'
import { toMoneyString } from '../shared/money.js'
import { payoffOf } from '../shared/payoff.js'
import { MoneyString, MoneyText, Timestamp, Uuid } from './schemas.js'

const Day = Type.String({ format: 'date', description: 'YYYY-MM-DD' })
/**
 * Not a union: the serializer checks each branch of one against its format, and a credit an earlier
 * release disbursed may carry due dates past year 9999 (`10000-05-30`), which it must still show as recorded.
 */
const NullableDay = Type.Unsafe<string | null>({ type: ['string', 'null'], format: 'date', description: 'YYYY-MM-DD, or null' })
const NullableTimestamp = Type.Union([Timestamp, Type.Null()])
const NullableText = Type.Union([Type.String(), Type.Null()])

export const Installment = Type.Object({
  ID: Uuid,
  number: Type.Integer({ description: '1-based' }),
  dueDate: Day,
  principal: MoneyString,
  interest: MoneyString,
  amount: MoneyString,
  paidPrincipal: MoneyString,
  paidInterest: MoneyString,
  waivedInterest: MoneyText('interest of a period not accrued when the credit was paid off, forgiven (docs/credits.md); 0 otherwise'),
  paidAmount: MoneyString,
  outstanding: MoneyString,
  status: Type.Enum(['pending', 'partial', 'paid'] as const),
  paidAt: NullableTimestamp,
  daysPastDue: Type.Integer({ description: 'days since the due date while anything is owed on a Desembolsado credit; else 0' }),
})

const Debtor = Type.Union([Type.Null(), Type.Object({
  ID: Uuid,
  type: Type.String({ description: 'natural or legal' }),
  name: Type.String(),
  documentType: Type.String(),
  documentNumber: Type.String(),
  email: Type.String(),
  phone: Type.String(),
})])

const creditFields = {
  ID: Uuid,
  organizationId: Uuid,
  creditLineId: Uuid,
  creditLineName: Type.String(),
  debtorId: Uuid,
  debtor: Debtor,
  state: Type.Enum(creditStates),
  principal: MoneyString,
  term: Type.Integer({ description: 'months' }),
  rate: Type.String({ description: 'the line\'s rate percentage at request time' }),
  rateType: Type.String(),
  monthlyRate: Type.String({ description: 'monthly rate as a percentage (10 decimals)' }),
  currency: Type.String(),
  installmentAmount: MoneyString,
  totalInterest: MoneyString,
  totalAmount: MoneyString,
  firstDueDate: NullableDay,
  maturityDate: NullableDay,
  firstPeriod: Type.Union([Type.Object({ months: Type.Integer(), days: Type.Integer() }), Type.Null()], {
    description: 'the period the first installment\'s interest is for, to the first due date (from the request day until disbursement): whole months, then days; ' +
      'null on credits requested before November 2026, whose first installment is a month\'s interest',
  }),
  balances: Type.Object({
    outstandingPrincipal: MoneyString,
    outstandingInterest: MoneyString,
    outstandingTotal: MoneyString,
    paidTotal: MoneyString,
    waivedInterest: MoneyText('interest a payoff forgave (not accrued by its value date); 0 otherwise'),
    payoff: Type.Union([MoneyText('what paying the credit off costs on the day arrears are counted to (today, or an earlier `asOf`\'s): the amount of a `zero` order made then'), Type.Null()], {
      description: 'null unless Desembolsado (docs/credits.md, "Paying a credit off")',
    }),
    unapplied: Type.String({ description: 'received beyond what was owed (to refund or re-apply)' }),
  }),
  installmentsPaid: Type.Integer(),
  installmentsCount: Type.Integer(),
  nextDueDate: NullableDay,
  daysPastDue: Type.Integer({ description: 'arrears: days the oldest unpaid installment is overdue (Desembolsado credits)' }),
  score: Type.Union([Type.Null(), Type.Object({
    scoringModelId: Type.String(),
    version: Type.String({ description: 'version label of the model that scored' }),
    versionNumber: Type.Integer(),
    score: Type.String({ description: 'decimal string' }),
    decision: Type.Enum(['approve', 'review', 'reject'] as const),
    reasons: Type.Array(Type.String(), { description: 'each variable, penalty and bonus that counted, and the decision' }),
    scoredAt: Timestamp,
  }, { description: 'the automatic score (docs/scoring.md); null when the organization had no default model in force at the request, or when the caller lacks ReadAnalysis' })]),
  taxes: Type.Array(Type.Object({
    taxId: Uuid, name: Type.String(), type: Type.String(), appliesTo: Type.String({ description: 'CREDIT' }), base: MoneyString,
    percentage: Type.String({ description: 'decimal string' }), amount: MoneyString, currency: Type.String(), appliedAt: Timestamp,
  }), { description: 'taxes on CREDIT applied to the principal at disbursement (docs/taxes.md)' }),
  requestedAt: Timestamp,
  approvedAt: NullableTimestamp,
  approvedBy: NullableText,
  rejectedAt: NullableTimestamp,
  rejectionReason: NullableText,
  cancelledAt: NullableTimestamp,
  cancellationReason: NullableText,
  disbursedAt: NullableTimestamp,
  disbursementMethod: NullableText,
  disbursementReference: NullableText,
  paidAt: NullableTimestamp,
  updatedAt: Timestamp,
}

export const CreditSummary = Type.Object(creditFields)
export const Credit = Type.Object({ ...creditFields, installments: Type.Array(Installment) })

export const installmentView = (state: CreditState, installment: InstallmentPosition, today: string): Static<typeof Installment> => ({
  ID: installment.installmentId, number: installment.number, dueDate: installment.dueDate, principal: installment.principal,
  interest: installment.interest, amount: installment.amount, ...installmentAmounts(installment, state.currency),
  waivedInterest: toMoneyString(installment.waivedInterest ?? '0', state.currency),
  status: installmentStatus(installment), paidAt: installment.paidAt, daysPastDue: installmentArrearsDays(state.status, installment, today),
})

/** The payoff of a Desembolsado credit by a zero order made on the day (null otherwise). */
const payoffOn = (state: CreditState, day: string): string | null => {
  if (state.status !== 'Desembolsado' || state.disbursedAt === null) return null
  const at = `${day}T00:00:00.000Z`
  return toMoneyText(payoffOf(state, state.disbursedAt, at, at).total, state.currency)
}

const waivedInterestOf = (state: CreditState): string =>
  toMoneyText(state.installments.reduce((sum, i) => (i.waivedInterest === undefined ? sum : plus(sum, exact(i.waivedInterest))), ZERO), state.currency)

/**
 * The credit on the wire, from the aggregate's state: the read model stores
 * that state, and `?asOf` folds the events up to a moment, so both render alike.
 */
/** `withScore`: the caller may read the automatic score (ReadAnalysis); otherwise it is null. */
export const creditSummaryView = (state: CreditState, debtor: CreditDoc['debtor'], today: string, withScore: boolean): Static<typeof CreditSummary> => {
  if (state.status === 'none') throw new Error('a credit that does not exist has no view')
  const figures = creditFigures(state)
  const oldest = state.installments.find((i) => !isPaid(i))
  return {
    ID: state.creditId, organizationId: state.organizationId, creditLineId: state.creditLineId, creditLineName: state.creditLineName,
    debtorId: state.debtorId,
    debtor: debtor === null ? null : {
      ID: debtor.id, type: debtor.type, name: debtor.name, documentType: debtor.documentType, documentNumber: debtor.documentNumber,
      email: debtor.email, phone: debtor.phone,
    },
    state: state.status, principal: state.principal, term: state.term, rate: state.rate, rateType: state.rateType, monthlyRate: state.monthlyRate,
    currency: state.currency, installmentAmount: state.installmentAmount, totalInterest: state.totalInterest, totalAmount: state.totalAmount,
    firstDueDate: state.firstDueDate, maturityDate: state.maturityDate, firstPeriod: state.firstPeriod,
    balances: {
      outstandingPrincipal: figures.outstandingPrincipal, outstandingInterest: figures.outstandingInterest, outstandingTotal: figures.outstandingTotal,
      paidTotal: figures.paidTotal, waivedInterest: waivedInterestOf(state), payoff: payoffOn(state, today),
      unapplied: toMoneyString(state.unapplied, state.currency),
    },
    installmentsPaid: figures.installmentsPaid, installmentsCount: state.installments.length, nextDueDate: figures.nextDueDate,
    daysPastDue: oldest === undefined ? 0 : installmentArrearsDays(state.status, oldest, today), score: withScore ? state.score : null,
    taxes: state.taxes.map(({ taxId, name, type, appliesTo, base, percentage, amount, currency, appliedAt }) => ({
      taxId, name, type, appliesTo, base, percentage, amount, currency, appliedAt,
    })),
    requestedAt: state.requestedAt, approvedAt: state.approvedAt, approvedBy: state.approvedBy, rejectedAt: state.rejectedAt,
    rejectionReason: withScore ? state.rejectionReason : rejectionReasonWithoutScore(state.rejectionReason), cancelledAt: state.cancelledAt, cancellationReason: state.cancellationReason,
    disbursedAt: state.disbursedAt, disbursementMethod: state.disbursementMethod, disbursementReference: state.disbursementReference,
    paidAt: state.paidAt, updatedAt: state.updatedAt,
  }
}

// Object.assign, not a spread followed by a key: in Node 20 that form makes a hidden class per call (docs/benchmarks.md, "Stop 25").
export const creditView = (state: CreditState, debtor: CreditDoc['debtor'], today: string, withScore: boolean): Static<typeof Credit> =>
  Object.assign(creditSummaryView(state, debtor, today, withScore), {
    installments: state.installments.map((i) => installmentView(state, i, today)),
  })

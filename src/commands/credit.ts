import type { CreditDisbursed, CreditEvent } from '../events/credit.js'
import { evolveCredit, initialCreditState, type CreditScore, type CreditState, type CreditStreamEvent, type CreditTerms } from '../events/creditState.js'
import type { TaxRate } from '../events/tax.js'
import {
  addMonths, dayOf, dayOfMonthOf, firstPeriodInterest, firstPeriodOf, frenchSchedule, LAST_YEAR, monthlyRateOf, monthlyRatePercent, scheduleEndsByLastYear, type Schedule,
} from '../shared/amortization.js'
import { AppError, invalidFields, invalidTransition, type FieldError } from '../shared/errors.js'
import { exact, isZero, lessThan, minus, toMoneyText, ZERO } from '../shared/exactDecimal.js'
import { deterministicId } from '../shared/ids.js'
import { allocatePayment, applyAllocations, owedFor, totalOutstanding } from '../shared/installments.js'
import { automaticRejectionReason, creditTransitions, ZERO_INSTALLMENT, type CreditStateName } from '../shared/lending.js'
import { payoffOf, payoffShortfall, settleQuote } from '../shared/payoff.js'
import { fitsMinorUnit, MONEY_INPUT_LIMIT, money, toMoneyString, withinMoneyBound } from '../shared/money.js'
import type { Aggregate } from './decider.js'
import { taxApplications } from './taxation.js'

export interface CreditBounds {
  principalMin: string
  principalMax: string
  timeMin: number
  timeMax: number
}

/** Who approves or rejects a credit on an automatic score's decision (`approvedBy`, `rejectedBy`). */
export const scoringActor = (scoringModelId: string): string => `scoring-model:${scoringModelId}`

export type CreditCommand =
  | (Pick<CreditTerms, 'creditId' | 'organizationId' | 'creditLineId' | 'creditLineName' | 'debtorId' | 'principal' | 'term' | 'rate' | 'rateType'
    | 'currency' | 'availableDays' | 'requestedFirstDueDate' | 'idempotency'> & { type: 'RequestCredit'; bounds: CreditBounds; now: string })
  | { type: 'ApproveCredit'; by: string; now: string }
  | { type: 'RejectCredit'; reason: string; by: string; now: string }
  | { type: 'CancelCredit'; reason: string; by: string; now: string }
  /**
   * `allowedMethods`: the line's disbursement methods (empty: any). `taxes`: the
   * organization's active taxes (read before the command, like `now`); those on
   * `CREDIT` apply to the principal and are recorded with the disbursement.
   */
  | { type: 'DisburseCredit'; method: string; reference: string; allowedMethods: readonly string[]; taxes: readonly TaxRate[]; by: string; now: string }
  /** An automatic score: recorded once, while the credit is Solicitado; `approve` and `reject` decide the credit in the same append. */
  | ({ type: 'RecordCreditScore'; now: string } & Omit<CreditScore, 'scoredAt'>)
  /** `valueDate`, `orderedAt`: the order's payment date and creation; a `zero` order is weighed against the payoff on their day (payoffOf). */
  | {
    type: 'ApplyPayment'; orderId: string; installmentId: string; installmentNumber: number; amount: string; collectionCosts: string
    valueDate: string; orderedAt: string; now: string
  }

export const installmentId = (creditId: string, number: number): string => deterministicId('installment', creditId, number)

const requireCredit = (state: CreditState): CreditStateName => {
  if (state.status === 'none') throw new AppError('NOT_FOUND', 'credit not found', { resource: 'credit' })
  return state.status
}

/** Refuses a move the state machine does not allow, naming the moves it does. */
const move = (state: CreditState, to: CreditStateName): void => {
  const from = requireCredit(state)
  const allowed = creditTransitions[from]
  if (!allowed.includes(to)) throw invalidTransition(from, to, allowed)
}

const requestErrors = (command: Extract<CreditCommand, { type: 'RequestCredit' }>): FieldError[] => {
  const { principal, term, bounds, currency } = command
  const errors: FieldError[] = []
  if (!fitsMinorUnit(principal, currency)) errors.push({ field: 'body.principal', message: `has more decimals than ${currency} allows` })
  else if (money(principal).lessThan(bounds.principalMin) || money(principal).greaterThan(bounds.principalMax)) {
    errors.push({ field: 'body.principal', message: `must be between ${bounds.principalMin} and ${bounds.principalMax}` })
  } else if (!withinMoneyBound(principal)) {
    // The default of a line recorded before the money bound, whose own bounds may allow more.
    errors.push({ field: 'body.principal', message: `must be below ${money(MONEY_INPUT_LIMIT).toFixed()}` })
  }
  const termOk = term >= bounds.timeMin && term <= bounds.timeMax
  if (!termOk) errors.push({ field: 'body.term', message: `must be between ${bounds.timeMin} and ${bounds.timeMax} months` })
  const requested = command.requestedFirstDueDate
  if (requested !== null && requested <= dayOf(command.now)) {
    errors.push({ field: 'body.firstDueDate', message: 'must be after the request date' })
  } else if (requested !== null && requested > addMonths(dayOf(command.now), FIRST_PERIOD_MONTHS_MAX)) {
    errors.push({ field: 'body.firstDueDate', message: `must be within ${FIRST_PERIOD_MONTHS_MAX} months of the request date (${addMonths(dayOf(command.now), FIRST_PERIOD_MONTHS_MAX)})` })
  } else if (requested !== null && termOk && !scheduleEndsByLastYear(requested, term)) {
    errors.push({ field: 'body.firstDueDate', message: `must leave the last of ${term} monthly installments on or before ${LAST_YEAR}-12-31` })
  }
  return errors
}

/** The longest first period a request may ask for: its first installment carries that period's interest, compounded. */
export const FIRST_PERIOD_MONTHS_MAX = 12

/**
 * Every installment must owe something: a level payment that rounds to 0 in
 * the minor unit (100 JPY over 480 months), or one rounded up so far that the
 * principal is paid off early, leaves installments of 0 that read as paid
 * before any payment.
 */
const scheduleErrors = (command: Extract<CreditCommand, { type: 'RequestCredit' }>, schedule: Schedule): FieldError[] => {
  const zeros = schedule.installments.filter((i) => money(i.amount).isZero()).length
  if (money(schedule.installmentAmount).isFinite() && zeros === 0) return []
  const { principal, term, currency } = command
  const why = `${principal} ${currency} over ${term} months leaves ${zeros} installments of 0 ${currency} (level payment ${schedule.installmentAmount}); `
    + 'every installment must owe something'
  return [
    { field: 'body.principal', message: `is too small for the term: ${why}` },
    { field: 'body.term', message: `is too long for the principal: ${why}` },
  ]
}

/**
 * The first due date at an instant (the request's, for the provisional
 * schedule; the disbursement's) and the day of the month every due date keeps:
 * the requested date when it is still ahead, else one month after that day on
 * its day of the month. Disbursed on Jan 31, a credit falls due on Feb 28,
 * Mar 31, Apr 30: clamped in short months, never drifting to the 28th.
 */
export const dueDaysAt = (requested: string | null, instant: string): { firstDueDate: string; dayOfMonth: number } => {
  const day = dayOf(instant)
  const anchor = requested !== null && requested > day ? requested : day
  return { firstDueDate: anchor === day ? addMonths(day, 1) : anchor, dayOfMonth: dayOfMonthOf(anchor) }
}

const decideRequest = (command: Extract<CreditCommand, { type: 'RequestCredit' }>, state: CreditState): CreditEvent[] => {
  if (state.status !== 'none') {
    // A request with a Key that lost a race to the same Key: the caller compares it with the credit the first one made.
    if (command.idempotency !== undefined) return []
    throw new AppError('ALREADY_EXISTS', 'credit already exists')
  }
  const errors = requestErrors(command)
  if (errors.length > 0) throw invalidFields(errors)
  const due = dueDaysAt(command.requestedFirstDueDate, command.now)
  const firstPeriod = firstPeriodOf(dayOf(command.now), due.firstDueDate)
  const schedule = frenchSchedule({
    principal: command.principal, term: command.term, monthlyRate: monthlyRateOf(command.rate, command.rateType), currency: command.currency, ...due,
    firstPeriod: { ...firstPeriod, rate: command.rate, rateType: command.rateType },
  })
  const unpayable = scheduleErrors(command, schedule)
  if (unpayable.length > 0) throw invalidFields(unpayable)
  return [{ type: 'CreditRequested', data: {
    creditId: command.creditId, organizationId: command.organizationId, creditLineId: command.creditLineId, creditLineName: command.creditLineName,
    debtorId: command.debtorId, principal: toMoneyString(command.principal, command.currency), term: command.term, rate: command.rate,
    rateType: command.rateType, monthlyRate: monthlyRatePercent(command.rate, command.rateType), currency: command.currency,
    installmentAmount: schedule.installmentAmount, totalInterest: schedule.totalInterest, totalAmount: schedule.totalAmount,
    requestedFirstDueDate: command.requestedFirstDueDate, firstPeriod, availableDays: command.availableDays,
    installments: schedule.installments.map((i) => ({ installmentId: installmentId(command.creditId, i.number), ...i })),
    requestedAt: command.now, ...(command.idempotency === undefined ? {} : { idempotency: command.idempotency }),
  } }]
}

/** The first period from the disbursement day to the first due date, and the first installment's interest and amount for it. */
const firstPeriodAt = (state: CreditState, start: string, firstDueDate: string): NonNullable<CreditDisbursed['data']['firstPeriod']> => {
  const period = firstPeriodOf(start, firstDueDate)
  const interest = firstPeriodInterest(state.principal, state.rate, state.rateType, period, state.currency)
  const principal = state.installments.find((i) => i.number === 1)?.principal ?? '0'
  return { ...period, interest: toMoneyString(interest, state.currency), amount: toMoneyString(interest.plus(principal), state.currency) }
}

const decideDisbursement = (command: Extract<CreditCommand, { type: 'DisburseCredit' }>, state: CreditState): CreditStreamEvent[] => {
  move(state, 'Desembolsado')
  if (command.allowedMethods.length > 0 && !command.allowedMethods.includes(command.method)) {
    throw invalidFields([{ field: 'body.method', message: `must be one of the line's disbursement methods: ${command.allowedMethods.join(', ')}` }])
  }
  if (state.availableDays > 0 && state.approvedAt !== null) {
    const expires = new Date(Date.parse(state.approvedAt) + state.availableDays * 86_400_000).toISOString()
    if (command.now > expires) throw new AppError('APPROVAL_EXPIRED', `the approval expired at ${expires}; cancel the credit and request it again`, { expiredAt: expires })
  }
  const { firstDueDate: first, dayOfMonth } = dueDaysAt(state.requestedFirstDueDate, command.now)
  if (!scheduleEndsByLastYear(first, state.installments.length)) {
    // Only a credit requested before such first due dates were refused gets here.
    throw new AppError('CONFLICT', `the last installment would fall after ${LAST_YEAR}-12-31 (first due date ${first}, ${state.installments.length} months); `
      + 'cancel the credit and request it again with an earlier firstDueDate', { firstDueDate: first, term: state.installments.length })
  }
  const installments = state.installments.map((i) => ({ installmentId: i.installmentId, number: i.number, dueDate: addMonths(first, i.number - 1, dayOfMonth) }))
  const firstPeriod = state.firstPeriod === null ? null : firstPeriodAt(state, dayOf(command.now), first)
  if (firstPeriod !== null && money(firstPeriod.amount).isZero()) {
    // The request's check that every installment owes something, again for the period the disbursement day leaves.
    throw new AppError('CONFLICT', `disbursed today the first installment (due ${first}) would owe nothing: its principal part is 0 and its `
      + `${firstPeriod.months} months and ${firstPeriod.days} days of interest round to 0; disburse it on or after ${first} (the first due date then moves a month on), `
      + 'or cancel the credit and request it again', { firstDueDate: first })
  }
  return [{ type: 'CreditDisbursed', data: {
    creditId: state.creditId, organizationId: state.organizationId, creditLineId: state.creditLineId, debtorId: state.debtorId,
    principal: state.principal, currency: state.currency, method: command.method, reference: command.reference, firstDueDate: first,
    maturityDate: installments[installments.length - 1]?.dueDate ?? first, installments,
    // Credits requested before first periods were weighed keep the schedule they were shown: a month's interest.
    ...(firstPeriod === null ? {} : { firstPeriod }),
    disbursedBy: command.by, disbursedAt: command.now,
  } }, ...taxApplications(command.taxes, { appliesTo: 'CREDIT', subjectId: state.creditId, base: state.principal, currency: state.currency }, command.now)]
}

const decideScore = (command: Extract<CreditCommand, { type: 'RecordCreditScore' }>, state: CreditState): CreditStreamEvent[] => {
  requireCredit(state)
  // Scored once; a credit a person has already decided keeps that decision.
  if (state.status !== 'Solicitado' || state.score !== null) return []
  const { type: _type, now, ...score } = command
  const ids = { creditId: state.creditId, organizationId: state.organizationId }
  const scored: CreditStreamEvent = { type: 'CreditScored', data: { ...ids, ...score, scoredAt: now } }
  const by = scoringActor(command.scoringModelId)
  switch (command.decision) {
    case 'approve':
      return [scored, { type: 'CreditApproved', data: { ...ids, approvedBy: by, approvedAt: now } }]
    case 'reject':
      return [scored, { type: 'CreditRejected', data: {
        ...ids, reason: automaticRejectionReason(command.version), rejectedBy: by, rejectedAt: now,
      } }]
    case 'review':
      return [scored]
    default: {
      const _never: never = command.decision
      return _never
    }
  }
}

/**
 * A `zero` order, weighed against the payoff on its day: covering it, each
 * installment's accrued interest and principal paid, the interest of later
 * periods waived, the rest unapplied; short of it, accrued interest and
 * principal oldest first, nothing waived. Null when the credit is not
 * Desembolsado (a payment after the payoff: unapplied).
 */
const payoffOrder = (state: CreditState, command: Extract<CreditCommand, { type: 'ApplyPayment' }>) => {
  if (state.status !== 'Desembolsado' || state.disbursedAt === null) return null
  const quote = payoffOf(state, state.disbursedAt, command.valueDate, command.orderedAt)
  const amount = exact(command.amount)
  if (lessThan(amount, quote.total)) {
    return { allocations: payoffShortfall(state.installments, quote, amount, state.currency), applied: amount, unapplied: ZERO, payoff: null }
  }
  const { allocations, waivers } = settleQuote(quote, state.currency)
  return { allocations, applied: quote.total, unapplied: minus(amount, quote.total), payoff: { day: quote.day, waivers } }
}

const decidePayment = (command: Extract<CreditCommand, { type: 'ApplyPayment' }>, state: CreditState): CreditEvent[] => {
  const status = requireCredit(state)
  if (state.appliedOrders.includes(command.orderId)) return []
  if (status !== 'Desembolsado' && status !== 'Pagado') {
    throw new AppError('CREDIT_NOT_PAYABLE', `a ${status} credit takes no payments`, { state: status })
  }
  if (owedFor(state.installments, command.installmentId) === null) throw new AppError('NOT_FOUND', 'installment not found', { resource: 'installment' })
  const { currency } = state
  const payoff = command.installmentId === ZERO_INSTALLMENT ? payoffOrder(state, command) : null
  const { allocations, applied, unapplied } = payoff ?? allocatePayment(state.installments, command.installmentId, exact(command.amount), currency)
  const settled = payoff?.payoff ?? null
  const after = totalOutstanding(applyAllocations(state.installments, allocations, currency, command.now, settled?.waivers))
  const events: CreditEvent[] = [{ type: 'CreditPaymentApplied', data: {
    creditId: state.creditId, organizationId: state.organizationId, creditLineId: state.creditLineId, orderId: command.orderId,
    installmentId: command.installmentId, installmentNumber: command.installmentNumber, currency, amount: command.amount,
    appliedAmount: toMoneyText(applied, currency), unappliedAmount: toMoneyText(unapplied, currency), collectionCosts: command.collectionCosts,
    allocations,
    ...(settled === null ? {} : { payoff: settled }),
    outstanding: {
      principal: toMoneyText(after.principal, currency), interest: toMoneyText(after.interest, currency), total: toMoneyText(after.total, currency),
    },
    appliedAt: command.now,
  } }]
  if (status === 'Desembolsado' && isZero(after.total)) {
    events.push({ type: 'CreditPaid', data: { creditId: state.creditId, organizationId: state.organizationId, paidAt: command.now } })
  }
  return events
}

export const creditAggregate: Aggregate<CreditCommand, CreditStreamEvent, CreditState> = {
  streamType: 'credit',
  eventTypes: ['CreditRequested', 'CreditApproved', 'CreditRejected', 'CreditCancelled', 'CreditDisbursed', 'CreditScored',
    'CreditPaymentApplied', 'CreditPaid', 'TaxApplied'],
  initialState: initialCreditState,
  decide(command, state) {
    switch (command.type) {
      case 'RequestCredit':
        return decideRequest(command, state)
      case 'ApproveCredit':
        move(state, 'Aprobado')
        return [{ type: 'CreditApproved', data: { creditId: state.creditId, organizationId: state.organizationId, approvedBy: command.by, approvedAt: command.now } }]
      case 'RejectCredit':
        move(state, 'Rechazado')
        return [{ type: 'CreditRejected', data: {
          creditId: state.creditId, organizationId: state.organizationId, reason: command.reason, rejectedBy: command.by, rejectedAt: command.now,
        } }]
      case 'CancelCredit': {
        move(state, 'Anulado')
        const from = state.status === 'Aprobado' ? 'Aprobado' : 'Solicitado'
        return [{ type: 'CreditCancelled', data: {
          creditId: state.creditId, organizationId: state.organizationId, reason: command.reason, from, cancelledBy: command.by, cancelledAt: command.now,
        } }]
      }
      case 'DisburseCredit':
        return decideDisbursement(command, state)
      case 'RecordCreditScore':
        return decideScore(command, state)
      case 'ApplyPayment':
        return decidePayment(command, state)
      default: {
        const _never: never = command
        return _never
      }
    }
  },
  evolve: evolveCredit,
}

/** Whether an installment of the credit may still take an order. */
export const installmentPayable = (state: CreditState, target: string): 'unknown' | 'paid' | 'payable' => {
  const owed = owedFor(state.installments, target)
  if (owed === null) return 'unknown'
  if (isZero(owed)) return 'paid'
  return 'payable'
}

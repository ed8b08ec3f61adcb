import type { CreditLimitEvent, CreditLimitExposureClosed, CreditLimitReleased, CreditLimitReserved, CreditLimitStatus } from '../events/creditLimit.js'
import { AppError, invalidFields, type FieldError } from '../shared/errors.js'
import { deterministicId } from '../shared/ids.js'
import { fitsMinorUnit, isCurrencyCode, money, toMoneyString } from '../shared/money.js'
import type { Aggregate } from './decider.js'

/** One limit per creditor, debtor and currency: the id is derived from the three. */
export const creditLimitIdOf = (creditorId: string, debtorId: string, currency: string): string =>
  deterministicId('creditLimit', creditorId, debtorId, currency)

/** Today's date (YYYY-MM-DD) in UTC: limits are valid through their expiration date, in UTC. */
export const utcDate = (now: Date): string => now.toISOString().slice(0, 10)

export const isCalendarDate = (text: string): boolean => {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text)) return false
  const date = new Date(`${text}T00:00:00.000Z`)
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === text
}

export type CreditLimitCommand =
  | {
    type: 'CreateCreditLimit'
    creditLimitId: string
    organizationId: string
    debtorId: string
    currency: string
    maxAmount: string
    expirationDate: string
    /** UTC date of `now`: the expiration date may not be before it. */
    today: string
    now: string
  }
  | { type: 'ChangeCreditLimit'; maxAmount?: string; expirationDate?: string; status?: 'active' | 'inactive'; today: string; now: string }
  | { type: 'ExpireCreditLimit'; today: string; now: string }
  /**
   * Counts a credit's principal against the limit. With `check`, an active
   * limit refuses an amount above what is available (CREDIT_LIMIT_EXCEEDED);
   * without, the exposure is recorded as it is (the money is already out).
   * A credit is counted once: a second reservation changes nothing, and so
   * does one for a credit closed here (it ended without disbursement).
   */
  | (Pick<CreditLimitReserved['data'], 'creditLimitId' | 'organizationId' | 'debtorId' | 'currency' | 'creditId' | 'amount'>
    & { type: 'ReserveCreditLimit'; check: boolean; today: string; now: string })
  /** Lowers what is counted for a credit to `remaining` (never raises it). */
  | (Pick<CreditLimitReleased['data'], 'creditId' | 'remaining' | 'reason'> & { type: 'ReleaseCreditLimit'; now: string })
  /**
   * The credit ended without disbursement: what it counts is released to 0;
   * when nothing is counted yet, it is closed, so a reservation that lands
   * afterwards (a disbursement checked before the end) counts nothing.
   */
  | (Pick<CreditLimitExposureClosed['data'], 'creditLimitId' | 'organizationId' | 'debtorId' | 'currency' | 'creditId' | 'reason'>
    & { type: 'CloseCreditExposure'; now: string })

export interface CreditLimitState {
  status: 'none' | CreditLimitStatus
  creditLimitId: string
  organizationId: string
  debtorId: string
  currency: string
  maxAmount: string
  expirationDate: string
  /** creditId → principal counted against the limit; '0' once released or closed, so a credit is never counted again. */
  exposures: Record<string, string>
}

/** Σ of what is counted against the limit. */
export const usedAmountOf = (state: Pick<CreditLimitState, 'exposures'>) =>
  Object.values(state.exposures).reduce((sum, amount) => sum.plus(amount), money(0))

/** A limit restricts lending while active and not past its expiration date (UTC), even before the expiry job has run. */
export const isEnforced = (state: CreditLimitState, today: string): boolean => state.status === 'active' && state.expirationDate >= today

/** The refusal of `amount` by the limit, or null when it fits (or the limit does not restrict). */
export const limitRefusal = (state: CreditLimitState, amount: string, today: string): AppError | null => {
  if (!isEnforced(state, today)) return null
  const used = usedAmountOf(state)
  const available = money(state.maxAmount).minus(used)
  if (money(amount).lte(available)) return null
  const currency = state.currency
  return new AppError('CREDIT_LIMIT_EXCEEDED', `${toMoneyString(amount, currency)} ${currency} exceeds the ${toMoneyString(available, currency)} ${currency} available on the debtor's credit limit`, {
    creditLimitId: state.creditLimitId, currency, maxAmount: toMoneyString(state.maxAmount, currency), usedAmount: toMoneyString(used, currency),
    availableAmount: toMoneyString(available, currency), requestedAmount: toMoneyString(amount, currency),
  })
}

const amountProblems = (maxAmount: string, currency: string): FieldError[] => {
  const amount = money(maxAmount)
  if (amount.lte(0)) return [{ field: 'body.maxAmount', message: 'must be greater than zero' }]
  if (isCurrencyCode(currency) && !fitsMinorUnit(amount, currency)) return [{ field: 'body.maxAmount', message: `has more decimals than ${currency} allows` }]
  return []
}

const dateProblems = (expirationDate: string, today: string): FieldError[] => {
  if (!isCalendarDate(expirationDate)) return [{ field: 'body.expirationDate', message: 'must be a date YYYY-MM-DD' }]
  if (expirationDate < today) return [{ field: 'body.expirationDate', message: `must not be before today (${today}, UTC)` }]
  return []
}

const requireValid = (problems: FieldError[]): void => {
  if (problems.length > 0) throw invalidFields(problems)
}

/** Lowers what the credit counts to `remaining`; nothing when it counts no more than that. */
const releaseTo = (state: CreditLimitState, creditId: string, remaining: string, reason: CreditLimitReleased['data']['reason'], at: string): CreditLimitEvent[] => {
  const counted = state.exposures[creditId]
  if (counted === undefined || money(remaining).gte(counted)) return []
  const released = money(counted).minus(remaining)
  return [{ type: 'CreditLimitReleased', data: {
    creditLimitId: state.creditLimitId, organizationId: state.organizationId, creditId, amount: released.toFixed(),
    remaining: money(remaining).toFixed(), reason, usedAmount: usedAmountOf(state).minus(released).toFixed(), at,
  } }]
}

const requireLimit = (state: CreditLimitState): void => {
  if (state.status === 'none') throw new AppError('NOT_FOUND', 'credit limit not found', { resource: 'creditLimit' })
}

/** The status events of a change: activation, deactivation, and renewal of an expired limit by a new expiration date. */
const statusEvents = (state: CreditLimitState, wanted: 'active' | 'inactive' | undefined, renewed: boolean, expirationDate: string, today: string, at: string): CreditLimitEvent[] => {
  const ids = { creditLimitId: state.creditLimitId, organizationId: state.organizationId }
  const target = wanted ?? (state.status === 'expired' && renewed ? 'active' : undefined)
  if (target === undefined || target === state.status) return []
  if (!renewed && (state.status === 'expired' || (target === 'active' && expirationDate < today))) {
    throw new AppError('INVALID_TRANSITION', `the limit expired on ${state.expirationDate}; give a new expirationDate to renew it`, {
      from: state.status, to: target,
    })
  }
  return [target === 'active' ? { type: 'CreditLimitActivated', data: { ...ids, at } } : { type: 'CreditLimitDeactivated', data: { ...ids, at } }]
}

export const creditLimitAggregate: Aggregate<CreditLimitCommand, CreditLimitEvent, CreditLimitState> = {
  streamType: 'creditLimit',
  eventTypes: ['CreditLimitCreated', 'CreditLimitAmountChanged', 'CreditLimitExpirationChanged', 'CreditLimitActivated', 'CreditLimitDeactivated', 'CreditLimitExpired',
    'CreditLimitReserved', 'CreditLimitReleased', 'CreditLimitExposureClosed'],
  initialState: () => ({ status: 'none', creditLimitId: '', organizationId: '', debtorId: '', currency: '', maxAmount: '0', expirationDate: '', exposures: {} }),
  decide(command, state) {
    switch (command.type) {
      case 'CreateCreditLimit': {
        // The request's own faults first: a 409 would send the client to PATCH with the same bad values.
        const currencyProblems = isCurrencyCode(command.currency) ? [] : [{ field: 'body.currency', message: 'is not an ISO 4217 currency code' }]
        requireValid([...currencyProblems, ...amountProblems(command.maxAmount, command.currency), ...dateProblems(command.expirationDate, command.today)])
        if (state.status !== 'none') {
          throw new AppError('ALREADY_EXISTS', `this debtor already has a ${state.currency} limit (${state.status}); change it with PATCH`, {
            creditLimitId: state.creditLimitId,
          })
        }
        return [{ type: 'CreditLimitCreated', data: {
          creditLimitId: command.creditLimitId, organizationId: command.organizationId, debtorId: command.debtorId, currency: command.currency,
          maxAmount: money(command.maxAmount).toFixed(), expirationDate: command.expirationDate, createdAt: command.now,
        } }]
      }
      case 'ChangeCreditLimit': {
        requireLimit(state)
        requireValid([
          ...(command.maxAmount === undefined ? [] : amountProblems(command.maxAmount, state.currency)),
          ...(command.expirationDate === undefined ? [] : dateProblems(command.expirationDate, command.today)),
        ])
        const ids = { creditLimitId: state.creditLimitId, organizationId: state.organizationId }
        const events: CreditLimitEvent[] = []
        if (command.maxAmount !== undefined && !money(command.maxAmount).equals(state.maxAmount)) {
          events.push({ type: 'CreditLimitAmountChanged', data: {
            ...ids, maxAmount: money(command.maxAmount).toFixed(), previousMaxAmount: state.maxAmount, at: command.now,
          } })
        }
        const renewed = command.expirationDate !== undefined && command.expirationDate !== state.expirationDate
        if (command.expirationDate !== undefined && renewed) {
          events.push({ type: 'CreditLimitExpirationChanged', data: {
            ...ids, expirationDate: command.expirationDate, previousExpirationDate: state.expirationDate, at: command.now,
          } })
        }
        const expirationDate = command.expirationDate ?? state.expirationDate
        return [...events, ...statusEvents(state, command.status, renewed, expirationDate, command.today, command.now)]
      }
      case 'ExpireCreditLimit':
        requireLimit(state)
        if (state.status === 'expired' || state.expirationDate >= command.today) return []
        return [{ type: 'CreditLimitExpired', data: {
          creditLimitId: state.creditLimitId, organizationId: state.organizationId, expirationDate: state.expirationDate, at: command.now,
        } }]
      case 'ReserveCreditLimit': {
        if (state.exposures[command.creditId] !== undefined) return []
        const refusal = command.check ? limitRefusal(state, command.amount, command.today) : null
        if (refusal !== null) throw refusal
        return [{ type: 'CreditLimitReserved', data: {
          creditLimitId: command.creditLimitId, organizationId: command.organizationId, debtorId: command.debtorId, currency: command.currency,
          creditId: command.creditId, amount: command.amount, checked: command.check && isEnforced(state, command.today),
          usedAmount: usedAmountOf(state).plus(command.amount).toFixed(), at: command.now,
        } }]
      }
      case 'ReleaseCreditLimit':
        return releaseTo(state, command.creditId, command.remaining, command.reason, command.now)
      case 'CloseCreditExposure': {
        if (state.exposures[command.creditId] !== undefined) return releaseTo(state, command.creditId, '0', command.reason, command.now)
        return [{ type: 'CreditLimitExposureClosed', data: {
          creditLimitId: command.creditLimitId, organizationId: command.organizationId, debtorId: command.debtorId, currency: command.currency,
          creditId: command.creditId, reason: command.reason, at: command.now,
        } }]
      }
      default: {
        const _never: never = command
        return _never
      }
    }
  },
  evolve(state, event) {
    switch (event.type) {
      case 'CreditLimitCreated':
        return {
          ...state, status: 'active', creditLimitId: event.data.creditLimitId, organizationId: event.data.organizationId, debtorId: event.data.debtorId,
          currency: event.data.currency, maxAmount: event.data.maxAmount, expirationDate: event.data.expirationDate,
        }
      case 'CreditLimitAmountChanged':
        return { ...state, maxAmount: event.data.maxAmount }
      case 'CreditLimitExpirationChanged':
        return { ...state, expirationDate: event.data.expirationDate }
      case 'CreditLimitActivated':
        return { ...state, status: 'active' }
      case 'CreditLimitDeactivated':
        return { ...state, status: 'inactive' }
      case 'CreditLimitExpired':
        return { ...state, status: 'expired' }
      case 'CreditLimitReserved': {
        const { creditLimitId, organizationId, debtorId, currency, creditId, amount } = event.data
        return { ...state, creditLimitId, organizationId, debtorId, currency, exposures: { ...state.exposures, [creditId]: amount } }
      }
      case 'CreditLimitReleased':
        return { ...state, exposures: { ...state.exposures, [event.data.creditId]: event.data.remaining } }
      case 'CreditLimitExposureClosed': {
        const { creditLimitId, organizationId, debtorId, currency, creditId } = event.data
        return { ...state, creditLimitId, organizationId, debtorId, currency, exposures: { ...state.exposures, [creditId]: '0' } }
      }
      default: {
        const _never: never = event
        return _never
      }
    }
  },
}

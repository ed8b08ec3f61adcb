import { keptChanges, keptConfiguration, type CreditLineConfiguration, type CreditLineEvent } from '../events/creditLine.js'
import type { RequestKey } from '../events/types.js'
import { AppError, invalidFields, type FieldError } from '../shared/errors.js'
import { deterministicId } from '../shared/ids.js'
import { MAX_TERM_MONTHS } from '../shared/lending.js'
import { fitsMinorUnit, isCurrencyCode, money, NON_NEGATIVE_DECIMAL_PATTERN, toMoneyString } from '../shared/money.js'
import type { Aggregate } from './decider.js'
import { canonical, hashRequest } from './idempotency.js'

export type CreditLineCommand =
  /** `idempotency`: the creator's `Idempotency-Key` (the line id from `keyedCreditLineId`) and its request's hash (`creditLineRequestHash`). */
  | { type: 'CreateCreditLine'; creditLineId: string; organizationId: string; configuration: CreditLineConfiguration; now: string; idempotency?: RequestKey }
  | { type: 'UpdateCreditLine'; changes: Partial<CreditLineConfiguration>; now: string }

export interface CreditLineState {
  exists: boolean
  creditLineId: string
  organizationId: string
  configuration: CreditLineConfiguration | null
  /** The `Idempotency-Key` it was created with, and its request's hash; absent when it was created without one. */
  idempotency?: RequestKey
}

const decimal = new RegExp(NON_NEGATIVE_DECIMAL_PATTERN)

/** Every rule a line's configuration must satisfy as a whole (field names as in the request body). */
export const configurationErrors = (c: CreditLineConfiguration): FieldError[] => {
  const errors: FieldError[] = []
  const currencyOk = isCurrencyCode(c.currency)
  if (!currencyOk) errors.push({ field: 'body.currency', message: 'must be an ISO 4217 currency code' })
  const amounts = (['principalMin', 'principalDefault', 'principalMax'] as const).filter((field) => {
    const value = c[field]
    if (!decimal.test(value) || money(value).lessThanOrEqualTo(0)) {
      errors.push({ field: `body.${field}`, message: 'must be a positive decimal string' })
      return false
    }
    if (currencyOk && !fitsMinorUnit(value, c.currency)) {
      errors.push({ field: `body.${field}`, message: `has more decimals than ${c.currency} allows` })
      return false
    }
    return true
  })
  if (amounts.length === 3) {
    if (money(c.principalMin).greaterThan(c.principalDefault)) errors.push({ field: 'body.principalDefault', message: 'must be at least principalMin' })
    if (money(c.principalDefault).greaterThan(c.principalMax)) errors.push({ field: 'body.principalMax', message: 'must be at least principalDefault' })
  }
  const terms = (['timeMin', 'timeDefault', 'timeMax'] as const).filter((field) => {
    const value = c[field]
    if (!Number.isInteger(value) || value < 1 || value > MAX_TERM_MONTHS) {
      errors.push({ field: `body.${field}`, message: `must be a whole number of months from 1 to ${MAX_TERM_MONTHS}` })
      return false
    }
    return true
  })
  if (terms.length === 3) {
    if (c.timeMin > c.timeDefault) errors.push({ field: 'body.timeDefault', message: 'must be at least timeMin' })
    if (c.timeDefault > c.timeMax) errors.push({ field: 'body.timeMax', message: 'must be at least timeDefault' })
  }
  if (!decimal.test(c.rate)) errors.push({ field: 'body.rate', message: 'must be a non-negative decimal string' })
  if (c.jurisdiction.code !== c.jurisdictionCode) errors.push({ field: 'body.jurisdiction.code', message: 'must equal jurisdictionCode' })
  if (!Number.isInteger(c.availableDays) || c.availableDays < 0) errors.push({ field: 'body.availableDays', message: 'must be a non-negative integer' })
  return errors
}

const validate = (configuration: CreditLineConfiguration): void => {
  const errors = configurationErrors(configuration)
  if (errors.length > 0) throw invalidFields(errors)
}

/**
 * The configuration with its amounts at the currency's minor unit ("000500"
 * USD is "500.00", "20000000.0000" JPY is "20000000") and its rate as a plain
 * decimal ("012.50" is "12.5"), as credits and orders record theirs. Only for
 * a configuration that passed `configurationErrors`: a valid amount has no
 * more decimals than its currency takes, so nothing is rounded.
 */
export const canonicalConfiguration = (c: CreditLineConfiguration): CreditLineConfiguration => ({
  ...c,
  principalMin: toMoneyString(c.principalMin, c.currency),
  principalDefault: toMoneyString(c.principalDefault, c.currency),
  principalMax: toMoneyString(c.principalMax, c.currency),
  rate: money(c.rate).toFixed(),
})

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b)

const requireLine = (state: CreditLineState): CreditLineConfiguration => {
  if (!state.exists || state.configuration === null) throw new AppError('NOT_FOUND', 'credit line not found', { resource: 'creditLine' })
  return state.configuration
}

export const creditLineAggregate: Aggregate<CreditLineCommand, CreditLineEvent, CreditLineState> = {
  streamType: 'creditLine',
  eventTypes: ['CreditLineCreated', 'CreditLineUpdated'],
  initialState: () => ({ exists: false, creditLineId: '', organizationId: '', configuration: null }),
  decide(command, state) {
    switch (command.type) {
      case 'CreateCreditLine':
        if (state.exists) {
          // A concurrent request with the same Key created it first: `createCreditLineOnce` answers that line.
          if (command.idempotency !== undefined) return []
          throw new AppError('ALREADY_EXISTS', 'credit line already exists')
        }
        validate(command.configuration)
        return [{ type: 'CreditLineCreated', data: {
          creditLineId: command.creditLineId, organizationId: command.organizationId, configuration: canonicalConfiguration(command.configuration),
          createdAt: command.now, ...(command.idempotency === undefined ? {} : { idempotency: command.idempotency }),
        } }]
      case 'UpdateCreditLine': {
        const current = requireLine(state)
        const given: Partial<CreditLineConfiguration> = {}
        for (const [key, value] of Object.entries(keptChanges(command.changes))) {
          if (!same(value, current[key as keyof CreditLineConfiguration])) Object.assign(given, { [key]: value })
        }
        if (Object.keys(given).length === 0) return []
        const next = { ...current, ...given }
        validate(next)
        // Compared in canonical form, so "100.00" for a stored "100" changes nothing, and a new currency rewrites the
        // amounts at its minor unit. A line recorded before amounts were canonical keeps its strings until one changes.
        const was = canonicalConfiguration(current)
        const becomes = canonicalConfiguration(next)
        const changes: Partial<CreditLineConfiguration> = {}
        for (const key of Object.keys(becomes) as Array<keyof CreditLineConfiguration>) {
          if (!same(becomes[key], was[key])) Object.assign(changes, { [key]: becomes[key] })
        }
        if (Object.keys(changes).length === 0) return []
        return [{ type: 'CreditLineUpdated', data: {
          creditLineId: state.creditLineId, organizationId: state.organizationId, changes, updatedAt: command.now,
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
      case 'CreditLineCreated': {
        const { creditLineId, organizationId, configuration, idempotency } = event.data
        return { exists: true, creditLineId, organizationId, configuration: keptConfiguration(configuration), ...(idempotency === undefined ? {} : { idempotency }) }
      }
      case 'CreditLineUpdated':
        return { ...state, configuration: state.configuration === null ? null : { ...state.configuration, ...keptChanges(event.data.changes) } }
      default: {
        const _never: never = event
        return _never
      }
    }
  },
}

/** The id of the credit line an organization's `Idempotency-Key` names: one line per Key, whatever the concurrency. */
export const keyedCreditLineId = (organizationId: string, key: string): string => deterministicId('creditLine', organizationId, key)

/**
 * What makes two creations with one Key "the same": the configuration as the
 * line records it (amounts at the currency's minor unit, the rate as a plain
 * decimal, defaults filled in, fields in any order), its webhook links as
 * sets. Only for a configuration that passed `configurationErrors`.
 */
export const creditLineRequestHash = (configuration: CreditLineConfiguration): string => {
  const kept = keptConfiguration(canonicalConfiguration(configuration))
  const links = { onOrderWebhooks: [...new Set(kept.onOrderWebhooks)].sort(), onDeliveredWebhooks: [...new Set(kept.onDeliveredWebhooks)].sort() }
  return hashRequest([canonical({ ...kept, ...links })])
}

/** Payment-method names of nested groups, flattened. */
export const methodNames = (groups: string[][]): string[] => [...new Set(groups.flat())]

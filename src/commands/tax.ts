import type { TaxEvent, TaxFields } from '../events/tax.js'
import type { RequestKey } from '../events/types.js'
import { AppError, invalidFields, type FieldError } from '../shared/errors.js'
import { deterministicId } from '../shared/ids.js'
import { money } from '../shared/money.js'
import { sameMembers } from '../shared/sets.js'
import type { Aggregate } from './decider.js'
import type { CommandContext, CommandHandler } from './handler.js'
import { createStreamOnce, hashRequest } from './idempotency.js'

export type TaxCommand =
  /** `idempotency`: the creator's `Idempotency-Key` (the tax id from `keyedTaxId`) and its request's hash (`taxRequestHash`). */
  | { type: 'CreateTax'; taxId: string; organizationId: string; isActive: boolean; fields: TaxFields; now: string; idempotency?: RequestKey }
  | { type: 'UpdateTax'; changes: Partial<TaxFields>; isActive?: boolean; now: string }
  | { type: 'ActivateTax'; now: string }
  | { type: 'DeactivateTax'; now: string }

export interface TaxState {
  exists: boolean
  taxId: string
  organizationId: string
  isActive: boolean
  fields: TaxFields | null
  /** The `Idempotency-Key` it was created with, and its request's hash; absent when it was created without one. */
  idempotency?: RequestKey
}

/** Digits a percentage or minimum amount may carry: enough for 0.4140 % and for every ISO 4217 minor unit. */
export const TAX_DECIMAL_PLACES = 4

const fieldProblems = (fields: Partial<TaxFields>): FieldError[] => {
  const problems: FieldError[] = []
  if (fields.percentage !== undefined) {
    const percentage = money(fields.percentage)
    if (percentage.lt(0) || percentage.gt(100)) problems.push({ field: 'body.percentage', message: 'must be between 0 and 100' })
    if (percentage.decimalPlaces() > TAX_DECIMAL_PLACES) problems.push({ field: 'body.percentage', message: `has more than ${TAX_DECIMAL_PLACES} decimal places` })
  }
  if (fields.minimumAmount !== undefined) {
    const minimum = money(fields.minimumAmount)
    if (minimum.lt(0)) problems.push({ field: 'body.minimum_amount', message: 'must not be negative' })
    if (minimum.decimalPlaces() > TAX_DECIMAL_PLACES) problems.push({ field: 'body.minimum_amount', message: `has more than ${TAX_DECIMAL_PLACES} decimal places` })
  }
  if (fields.appliesTo !== undefined) {
    if (fields.appliesTo.length === 0) problems.push({ field: 'body.applies_to', message: 'must name at least one of CREDIT, FEE, PAYMENT' })
    if (new Set(fields.appliesTo).size !== fields.appliesTo.length) problems.push({ field: 'body.applies_to', message: 'must not repeat a value' })
  }
  if (fields.name !== undefined && fields.name.trim() === '') problems.push({ field: 'body.name', message: 'must not be blank' })
  return problems
}

const requireValid = (fields: Partial<TaxFields>): void => {
  const problems = fieldProblems(fields)
  if (problems.length > 0) throw invalidFields(problems)
}

const sameValue = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b)

/** Decimal strings are compared by value, so 19 and 19.0 are the same percentage; `applies_to` in any order is the same. */
const unchanged = (key: keyof TaxFields, next: unknown, current: TaxFields): boolean => {
  if (key === 'percentage' || key === 'minimumAmount') return money(String(next)).equals(current[key])
  if (key === 'appliesTo') return Array.isArray(next) && sameMembers(next, current[key])
  return sameValue(next, current[key])
}

const requireTax = (state: TaxState): TaxFields => {
  if (!state.exists || state.fields === null) throw new AppError('NOT_FOUND', 'tax not found', { resource: 'tax' })
  return state.fields
}

/** The event that switches the tax on or off, when it is not already so. */
const activity = (state: TaxState, isActive: boolean | undefined, at: string): TaxEvent[] => {
  if (isActive === undefined || isActive === state.isActive) return []
  const ids = { taxId: state.taxId, organizationId: state.organizationId, at }
  return [isActive ? { type: 'TaxActivated', data: ids } : { type: 'TaxDeactivated', data: ids }]
}

export const taxAggregate: Aggregate<TaxCommand, TaxEvent, TaxState> = {
  streamType: 'tax',
  eventTypes: ['TaxCreated', 'TaxUpdated', 'TaxActivated', 'TaxDeactivated'],
  initialState: () => ({ exists: false, taxId: '', organizationId: '', isActive: false, fields: null }),
  decide(command, state) {
    switch (command.type) {
      case 'CreateTax': {
        if (state.exists) {
          // A creation with a Key that lost a race to the same Key: the caller compares it with the tax the first one made.
          if (command.idempotency !== undefined) return []
          throw new AppError('ALREADY_EXISTS', 'tax already exists')
        }
        requireValid(command.fields)
        return [{ type: 'TaxCreated', data: {
          taxId: command.taxId, organizationId: command.organizationId, ...command.fields, isActive: command.isActive, createdAt: command.now,
          ...(command.idempotency === undefined ? {} : { idempotency: command.idempotency }),
        } }]
      }
      case 'UpdateTax': {
        const current = requireTax(state)
        requireValid(command.changes)
        const changes: Partial<TaxFields> = {}
        for (const key of Object.keys(command.changes) as Array<keyof TaxFields>) {
          const next = command.changes[key]
          if (next !== undefined && !unchanged(key, next, current)) Object.assign(changes, { [key]: next })
        }
        const updated: TaxEvent[] = Object.keys(changes).length === 0
          ? []
          : [{ type: 'TaxUpdated', data: { taxId: state.taxId, organizationId: state.organizationId, changes, updatedAt: command.now } }]
        return [...updated, ...activity(state, command.isActive, command.now)]
      }
      case 'ActivateTax':
        requireTax(state)
        return activity(state, true, command.now)
      case 'DeactivateTax':
        requireTax(state)
        return activity(state, false, command.now)
      default: {
        const _never: never = command
        return _never
      }
    }
  },
  evolve(state, event) {
    switch (event.type) {
      case 'TaxCreated': {
        const { taxId, organizationId, isActive, createdAt: _createdAt, idempotency, ...fields } = event.data
        return { exists: true, taxId, organizationId, isActive, fields, ...(idempotency === undefined ? {} : { idempotency }) }
      }
      case 'TaxUpdated':
        return { ...state, fields: state.fields === null ? null : { ...state.fields, ...event.data.changes } }
      case 'TaxActivated':
        return { ...state, isActive: true }
      case 'TaxDeactivated':
        return { ...state, isActive: false }
      default: {
        const _never: never = event
        return _never
      }
    }
  },
}

/** The id of the tax an organization's `Idempotency-Key` names: one tax per Key, whatever the concurrency. */
export const keyedTaxId = (organizationId: string, key: string): string => deterministicId('tax', organizationId, key)

/**
 * What makes two creations with one Key "the same": every field as the tax
 * takes it (percentages and amounts by value, `applies_to` as a set, the
 * defaults filled in), so a retry spelled otherwise is still the same request.
 */
export const taxRequestHash = (fields: TaxFields, isActive: boolean): string => hashRequest([
  fields.name, fields.description, money(fields.percentage).toFixed(), fields.type, [...fields.appliesTo].sort(),
  money(fields.minimumAmount).toFixed(), isActive,
])

/**
 * A tax creation under an `Idempotency-Key` (its tax id from `keyedTaxId`):
 * the first creates the tax, the same request again gets it back
 * (`created: false`) whatever it has become, another request with the Key is
 * refused (409 `IDEMPOTENCY_KEY_REUSED`). Taxes are the organization's, so
 * whoever may create one may have it back.
 */
export const createTaxOnce = (
  commands: CommandHandler, command: Extract<TaxCommand, { type: 'CreateTax' }> & { idempotency: RequestKey }, context: CommandContext,
): Promise<{ created: boolean; position: number }> => createStreamOnce(commands, taxAggregate, command.taxId, command, context, {
  what: 'tax creation request', details: { taxId: command.taxId }, exists: (state) => state.exists,
})

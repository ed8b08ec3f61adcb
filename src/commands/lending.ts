import type { CreditRequestKey } from '../events/credit.js'
import type { CreditLineConfiguration } from '../events/creditLine.js'
import type { CreditState } from '../events/creditState.js'
import type { TaxRate } from '../events/tax.js'
import type { RequestKey } from '../events/types.js'
import { dayOf } from '../shared/amortization.js'
import { AppError, invalidFields, notFound, type FieldError } from '../shared/errors.js'
import { deterministicId } from '../shared/ids.js'
import { money } from '../shared/money.js'
import { creditAggregate, type CreditCommand } from './credit.js'
import { closeCreditExposure } from './creditExposure.js'
import { creditLimitAggregate, creditLimitIdOf, limitRefusal } from './creditLimit.js'
import { configurationErrors, creditLineAggregate, creditLineRequestHash, methodNames, type CreditLineState } from './creditLine.js'
import type { CommandContext, CommandHandler } from './handler.js'
import { createOnceUnderKey, hashRequest } from './idempotency.js'
import { organizationAggregate } from './organization.js'
import { profileAggregate } from './profile.js'
import { webhookAggregate } from './webhook.js'

/** Workflows of credit lines and credits: each loads the aggregates its decision needs, then runs one command. */

type WebhookLinks = Pick<CreditLineConfiguration, 'onOrderWebhooks' | 'onDeliveredWebhooks'>

/**
 * Webhooks being linked must exist in the line's organization and not be
 * archived. Ids already linked are not checked again: a webhook archived after
 * it was linked stays linked (and simply does not fire).
 */
/** Checks the links as the request gave them (duplicates included), so a refusal names the position in the body. */
const checkWebhookLinks = async (commands: CommandHandler, organizationId: string, links: Partial<WebhookLinks>, current: Partial<WebhookLinks>) => {
  const errors: FieldError[] = []
  const linkable = new Map<string, boolean>()
  for (const field of ['onOrderWebhooks', 'onDeliveredWebhooks'] as const) {
    const already = new Set(current[field] ?? [])
    for (const [index, id] of (links[field] ?? []).entries()) {
      if (already.has(id)) continue
      let ok = linkable.get(id)
      if (ok === undefined) {
        const { state } = await commands.load(webhookAggregate, id)
        ok = state.status === 'active' && state.organizationId === organizationId
        linkable.set(id, ok)
      }
      if (!ok) errors.push({ field: `body.${field}.${index}`, message: `webhook ${id} does not exist in this organization or is archived` })
    }
  }
  if (errors.length > 0) throw invalidFields(errors)
}

/**
 * A line belongs to a configuration of its own organization; an organization
 * has one, its default. Another organization's is refused as an unknown one is.
 */
const checkConfiguration = async (commands: CommandHandler, organizationId: string, entityConfigID: string | undefined) => {
  if (entityConfigID === undefined) return
  const { state } = await commands.load(organizationAggregate, organizationId)
  if (state.status !== 'none' && state.defaultConfigId === entityConfigID) return
  throw invalidFields([{ field: 'body.entityConfigID', message: `configuration ${entityConfigID} does not exist in this organization` }])
}

const unique = (ids: string[] | undefined) => (ids === undefined ? undefined : [...new Set(ids)])

/**
 * Creates a credit line; with an `Idempotency-Key` (`key`, the line id from
 * `keyedCreditLineId`) the first request creates it, the same request again
 * gets it back (`created: false`) whatever it has become (its webhooks
 * archived since, say), another request with the Key is refused (409
 * `IDEMPOTENCY_KEY_REUSED`). An invalid configuration, or another
 * organization's `entityConfigID`, is refused (400) before the Key is looked
 * at; the webhook links only when the line is created.
 */
export const createCreditLine = async (
  commands: CommandHandler,
  input: { creditLineId: string; organizationId: string; configuration: CreditLineConfiguration; now: string; key?: string },
  context: CommandContext,
): Promise<{ created: boolean; position: number }> => {
  const configuration = {
    ...input.configuration,
    onOrderWebhooks: unique(input.configuration.onOrderWebhooks) ?? [],
    onDeliveredWebhooks: unique(input.configuration.onDeliveredWebhooks) ?? [],
  }
  const create = async (idempotency: RequestKey | undefined) => {
    await checkWebhookLinks(commands, input.organizationId, input.configuration, {})
    return commands.execute(creditLineAggregate, input.creditLineId, {
      type: 'CreateCreditLine', creditLineId: input.creditLineId, organizationId: input.organizationId, configuration, now: input.now,
      ...(idempotency === undefined ? {} : { idempotency }),
    }, context)
  }
  if (input.key === undefined) {
    await checkConfiguration(commands, input.organizationId, input.configuration.entityConfigID)
    return { created: true, position: (await create(undefined)).position }
  }
  const errors = configurationErrors(configuration)
  if (errors.length > 0) throw invalidFields(errors)
  await checkConfiguration(commands, input.organizationId, input.configuration.entityConfigID)
  const idempotency = { key: input.key, requestHash: creditLineRequestHash(configuration) }
  return createOnceUnderKey({
    requested: idempotency, what: 'credit line creation request', details: { creditLineId: input.creditLineId },
    load: () => commands.load(creditLineAggregate, input.creditLineId), exists: (state) => state.exists, recordedKey: (state) => state.idempotency,
    create: () => create(idempotency),
  })
}

/** The line when it exists in the organization; another organization's line is not found. */
export const loadCreditLineIn = async (commands: CommandHandler, organizationId: string, creditLineId: string): Promise<CreditLineState & { configuration: CreditLineConfiguration }> => {
  const { state } = await commands.load(creditLineAggregate, creditLineId)
  if (state.configuration === null || state.organizationId !== organizationId) throw notFound('credit line', creditLineId)
  return { ...state, configuration: state.configuration }
}

export const updateCreditLine = async (
  commands: CommandHandler,
  input: { creditLineId: string; organizationId: string; changes: Partial<CreditLineConfiguration>; now: string },
  context: CommandContext,
) => {
  const line = await loadCreditLineIn(commands, input.organizationId, input.creditLineId)
  await checkConfiguration(commands, input.organizationId, input.changes.entityConfigID)
  await checkWebhookLinks(commands, input.organizationId, input.changes, line.configuration)
  const changes = { ...input.changes }
  const orderLinks = unique(changes.onOrderWebhooks)
  const deliveredLinks = unique(changes.onDeliveredWebhooks)
  if (orderLinks !== undefined) changes.onOrderWebhooks = orderLinks
  if (deliveredLinks !== undefined) changes.onDeliveredWebhooks = deliveredLinks
  return commands.execute(creditLineAggregate, input.creditLineId, { type: 'UpdateCreditLine', changes, now: input.now }, context)
}

/** The credit when it exists in the organization; another organization's credit is not found. */
export const loadCreditIn = async (commands: CommandHandler, organizationId: string, creditId: string): Promise<CreditState> => {
  const { state } = await commands.load(creditAggregate, creditId)
  if (state.status === 'none' || state.organizationId !== organizationId) throw notFound('credit', creditId)
  return state
}

const unknownReference = (field: string, message: string) => invalidFields([{ field, message }])

export interface CreditRequest {
  creditId: string
  organizationId: string
  creditLineId: string
  debtorId: string
  principal?: string
  term?: number
  firstDueDate?: string
  idempotency?: CreditRequestKey
  now: string
}

/**
 * A credit request: the line must be active in the organization, the debtor
 * an active profile of the same organization; principal and term default to
 * the line's and must fall inside its bounds; the rate comes from the line,
 * as a plain decimal (a line recorded before lines were canonical may hold
 * "012.50": the credit records "12.5").
 * The principal must fit in what the debtor's active credit limit (this
 * creditor, the line's currency) has available now; nothing is reserved until
 * the disbursement, which checks again.
 */
export const requestCredit = async (commands: CommandHandler, input: CreditRequest, context: CommandContext) => {
  const { state: line } = await commands.load(creditLineAggregate, input.creditLineId)
  if (line.configuration === null || line.organizationId !== input.organizationId) {
    throw unknownReference('body.creditLineId', 'unknown credit line in this organization')
  }
  const config = line.configuration
  if (!config.active) throw new AppError('NOT_ACTIVE', `credit line ${input.creditLineId} is not active`, { resource: 'creditLine' })
  const { state: debtor } = await commands.load(profileAggregate, input.debtorId)
  if (!debtor.exists || debtor.organizationId !== input.organizationId) {
    throw unknownReference('body.debtorId', 'unknown profile in this organization')
  }
  if (!debtor.active) throw new AppError('NOT_ACTIVE', `profile ${input.debtorId} is not active`, { resource: 'profile' })
  const command: CreditCommand = {
    type: 'RequestCredit', creditId: input.creditId, organizationId: input.organizationId, creditLineId: input.creditLineId,
    creditLineName: config.name, debtorId: input.debtorId, principal: input.principal ?? config.principalDefault, term: input.term ?? config.timeDefault,
    rate: money(config.rate).toFixed(), rateType: config.rateType, currency: config.currency, availableDays: config.availableDays,
    bounds: { principalMin: config.principalMin, principalMax: config.principalMax, timeMin: config.timeMin, timeMax: config.timeMax },
    requestedFirstDueDate: input.firstDueDate ?? null, now: input.now, ...(input.idempotency === undefined ? {} : { idempotency: input.idempotency }),
  }
  // A malformed request is a 400 before it is weighed against the limit.
  creditAggregate.decide(command, creditAggregate.initialState())
  const { state: limit } = await commands.load(creditLimitAggregate, creditLimitIdOf(input.organizationId, input.debtorId, config.currency))
  const refusal = limitRefusal(limit, command.principal, dayOf(input.now))
  if (refusal !== null) throw refusal
  return commands.execute(creditAggregate, input.creditId, command, context)
}

/** The id of the credit an organization's `Idempotency-Key` names: one credit per Key, whatever the concurrency. */
export const keyedCreditId = (organizationId: string, key: string): string => deterministicId('credit', organizationId, key)

/** What makes two requests with one Key "the same": the body's fields, the principal compared as an amount, absent fields as absent. */
export const creditRequestHash = (body: Pick<CreditRequest, 'creditLineId' | 'debtorId' | 'principal' | 'term' | 'firstDueDate'>): string =>
  hashRequest([body.creditLineId, body.debtorId, body.principal === undefined ? null : money(body.principal).toFixed(), body.term ?? null, body.firstDueDate ?? null])

/**
 * A credit request under an `Idempotency-Key` (`input.idempotency`, its
 * credit id from `keyedCreditId`): the first request creates the credit,
 * the same request again gets it back (`created: false`) whatever its state
 * now, and another request with the Key is refused.
 */
export const requestCreditOnce = (
  commands: CommandHandler, input: CreditRequest & { idempotency: CreditRequestKey }, context: CommandContext,
): Promise<{ created: boolean; position: number }> => createOnceUnderKey({
  requested: input.idempotency, what: 'credit request', details: { creditId: input.creditId },
  load: () => commands.load(creditAggregate, input.creditId), exists: (state) => state.status !== 'none', recordedKey: (state) => state.idempotency,
  create: () => requestCredit(commands, input, context),
})

/** Where a disbursement reports what it could not do itself and left to a process (the HTTP request's log). */
export interface DisbursementLog {
  warn(details: object, message: string): void
}

/**
 * Gives back at once a reservation the disbursement made when the credit ended
 * up cancelled or rejected instead (a concurrent move). Those states are final,
 * so this cannot take a reservation from a disbursement that happened. The
 * creditExposure process closes the credit on the limit stream as well when it
 * handles the end, so this only spares the wait for it.
 */
const closeUnlessDisbursed = async (commands: CommandHandler, credit: CreditState, context: CommandContext, now: string) => {
  const { state } = await commands.load(creditAggregate, credit.creditId)
  if (state.status !== 'Anulado' && state.status !== 'Rechazado') return
  await closeCreditExposure(commands, credit, state.status === 'Anulado' ? 'cancelled' : 'rejected', now, context)
}

/**
 * A disbursement: the method must be one of the line's disbursement methods
 * (any when the line names none). The principal is first reserved on the
 * debtor's credit-limit stream (creditor, debtor, currency), decided on that
 * stream's expected revision, so two disbursements racing for one limit cannot
 * both pass; an active limit without room refuses with CREDIT_LIMIT_EXCEEDED
 * and nothing is disbursed. Taxes on `CREDIT` are recorded with it.
 */
export const disburseCredit = async (
  commands: CommandHandler,
  input: {
    creditId: string; organizationId: string; method: string; reference: string; taxes: readonly TaxRate[]; by: string; now: string
    log?: DisbursementLog
  },
  context: CommandContext,
) => {
  const credit = await loadCreditIn(commands, input.organizationId, input.creditId)
  const { state: line } = await commands.load(creditLineAggregate, credit.creditLineId)
  const command: CreditCommand = {
    type: 'DisburseCredit', method: input.method, reference: input.reference, allowedMethods: methodNames(line.configuration?.disbursementMethods ?? []),
    taxes: input.taxes, by: input.by, now: input.now,
  }
  // Refusals of the credit itself (state, method, expired approval) come before anything is reserved.
  creditAggregate.decide(command, credit)
  const creditLimitId = creditLimitIdOf(credit.organizationId, credit.debtorId, credit.currency)
  await commands.execute(creditLimitAggregate, creditLimitId, {
    type: 'ReserveCreditLimit', creditLimitId, organizationId: credit.organizationId, debtorId: credit.debtorId, currency: credit.currency,
    creditId: credit.creditId, amount: credit.principal, check: true, today: dayOf(input.now), now: input.now,
  }, context)
  try {
    return await commands.execute(creditAggregate, input.creditId, command, context)
  } catch (error) {
    // Left in place otherwise: a retried disbursement reuses it, and a later cancellation releases it. Failing
    // to release must not hide why the disbursement failed; the creditExposure process releases it then.
    await closeUnlessDisbursed(commands, credit, context, input.now).catch((releaseError: unknown) => {
      input.log?.warn({ err: releaseError, creditId: input.creditId, creditLimitId },
        'the failed disbursement could not release its credit-limit reservation; the creditExposure process will')
    })
    throw error
  }
}

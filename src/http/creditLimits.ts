import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { creditLimitAggregate, creditLimitIdOf, utcDate } from '../commands/creditLimit.js'
import { profileAggregate } from '../commands/profile.js'
import { availableAmountOf, type CreditLimitDoc } from '../projections/creditLimits.js'
import type { Services } from '../services.js'
import { AppError, invalidFields, notFound } from '../shared/errors.js'
import { toMoneyString } from '../shared/money.js'
import { commandContext, organizationOf } from './context.js'
import { failures, MoneyInput, MoneyString, OrganizationHeaders, Timestamp, Uuid } from './schemas.js'

const Status = Type.Enum(['active', 'inactive', 'expired'])
const Currency = Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217 currency code' })
const DateOnly = Type.String({ format: 'date', description: 'YYYY-MM-DD, the last day the limit is valid (UTC)' })

const CreditLimit = Type.Object({
  creditLimitId: Uuid,
  debtorInfo: Type.Object({ debtorId: Uuid, name: Type.String(), documentType: Type.String(), documentNumber: Type.String() }),
  maxAmount: MoneyString,
  usedAmount: MoneyString,
  availableAmount: MoneyString,
  currency: Type.String(),
  status: Status,
  expirationDate: Type.String({ description: 'YYYY-MM-DD' }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
})

const view = (doc: CreditLimitDoc) => ({
  creditLimitId: doc._id, debtorInfo: doc.debtorInfo, maxAmount: toMoneyString(doc.maxAmount, doc.currency),
  usedAmount: toMoneyString(doc.usedAmount, doc.currency), availableAmount: toMoneyString(availableAmountOf(doc), doc.currency),
  currency: doc.currency, status: doc.status, expirationDate: doc.expirationDate, createdAt: doc.createdAt, updatedAt: doc.updatedAt,
})

const One = Type.Object({ creditorId: Uuid, creditLimit: CreditLimit })
const IdParams = Type.Object({ creditLimitId: Uuid })
const tags = ['Credit limits']

/** Limits the creditor (the organization in `Organization-ID`) sets for its debtors. */
export const creditLimitRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const { queries } = services

  const load = async (creditorId: string, id: string) => {
    const doc = await queries.creditLimits.get(creditorId, id)
    if (doc === null) throw notFound('credit limit', id)
    return doc
  }

  app.get('/creditor/credit-limits', {
    config: { organization: 'header', permissions: ['ReadCreditLimit'] },
    schema: {
      summary: 'List the credit limits the creditor has set',
      description: 'The summary covers every limit that matches, not only the page. Totals add amounts as they are: filter by `currency` when limits are in several.',
      tags,
      headers: OrganizationHeaders,
      querystring: Type.Object({
        status: Type.Optional(Status),
        limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
        offset: Type.Integer({ minimum: 0, default: 0 }),
        debtorId: Type.Optional(Uuid),
        currency: Type.Optional(Currency),
      }, { additionalProperties: false }),
      response: {
        200: Type.Object({
          creditorId: Uuid,
          creditLimits: Type.Array(CreditLimit),
          summary: Type.Object({ totalLimits: Type.Integer(), totalMaxAmount: MoneyString, totalUsedAmount: MoneyString, totalAvailableAmount: MoneyString }),
          pagination: Type.Object({ total: Type.Integer(), limit: Type.Integer(), offset: Type.Integer(), hasMore: Type.Boolean() }),
        }),
        ...failures(400, 401, 403),
      },
    },
  }, async (request) => {
    const creditorId = organizationOf(request).id
    const { status, limit, offset, debtorId, currency } = request.query
    const { items, summary } = await queries.creditLimits.list({
      creditorId, limit, offset, ...(status === undefined ? {} : { status }), ...(debtorId === undefined ? {} : { debtorId }),
      ...(currency === undefined ? {} : { currency }),
    })
    const only = summary.currencies.length === 1 ? summary.currencies[0] : undefined
    return {
      creditorId,
      creditLimits: items.map(view),
      summary: {
        totalLimits: summary.totalLimits, totalMaxAmount: toMoneyString(summary.totalMaxAmount, only),
        totalUsedAmount: toMoneyString(summary.totalUsedAmount, only), totalAvailableAmount: toMoneyString(summary.totalAvailableAmount, only),
      },
      pagination: { total: summary.totalLimits, limit, offset, hasMore: offset + items.length < summary.totalLimits },
    }
  })

  app.get('/creditor/credit-limits/:creditLimitId', {
    config: { organization: 'header', permissions: ['ReadCreditLimit'] },
    schema: { summary: 'One credit limit', tags, headers: OrganizationHeaders, params: IdParams, response: { 200: One, ...failures(400, 401, 403, 404) } },
  }, async (request) => {
    const creditorId = organizationOf(request).id
    return { creditorId, creditLimit: view(await load(creditorId, request.params.creditLimitId)) }
  })

  app.post('/creditor/credit-limits', {
    config: { organization: 'header', permissions: ['WriteCreditLimit'] },
    schema: {
      summary: 'Set a credit limit for a debtor',
      description: 'One limit per debtor and currency: a second one answers 409 with the existing `creditLimitId` (change it with PATCH).',
      tags,
      headers: OrganizationHeaders,
      body: Type.Object({
        debtorId: Type.String({ format: 'uuid', description: 'a profile of the organization' }),
        maxAmount: MoneyInput('decimal string, greater than zero'),
        currency: Currency,
        expirationDate: DateOnly,
      }, { additionalProperties: false }),
      response: { 201: One, ...failures(400, 401, 403, 409) },
    },
  }, async (request, reply) => {
    const creditorId = organizationOf(request).id
    const { debtorId, maxAmount, currency, expirationDate } = request.body
    const { state: debtor } = await services.commands.load(profileAggregate, debtorId)
    if (!debtor.exists || debtor.organizationId !== creditorId) {
      throw invalidFields([{ field: 'body.debtorId', message: 'is not a profile of this organization' }])
    }
    if (!debtor.active) throw new AppError('NOT_ACTIVE', `profile ${debtorId} is inactive`, { debtorId })
    const creditLimitId = creditLimitIdOf(creditorId, debtorId, currency)
    const now = services.clock.now()
    await services.execute(creditLimitAggregate, creditLimitId, {
      type: 'CreateCreditLimit', creditLimitId, organizationId: creditorId, debtorId, currency, maxAmount, expirationDate,
      today: utcDate(now), now: now.toISOString(),
    }, commandContext(request))
    return reply.code(201).send({ creditorId, creditLimit: view(await load(creditorId, creditLimitId)) })
  })

  app.patch('/creditor/credit-limits/:creditLimitId', {
    config: { organization: 'header', permissions: ['WriteCreditLimit'] },
    schema: {
      summary: 'Change a credit limit: status, amount, expiration',
      description: 'An expired limit is renewed by a new `expirationDate` (not before today); it comes back `active` unless `status` says `inactive`.',
      tags,
      headers: OrganizationHeaders,
      params: IdParams,
      body: Type.Object({
        status: Type.Optional(Type.Enum(['active', 'inactive'])),
        maxAmount: Type.Optional(MoneyInput('decimal string, greater than zero')),
        expirationDate: Type.Optional(DateOnly),
      }, { additionalProperties: false, minProperties: 1 }),
      response: { 200: One, ...failures(400, 401, 403, 404, 409) },
    },
  }, async (request) => {
    const creditorId = organizationOf(request).id
    await load(creditorId, request.params.creditLimitId)
    const { status, maxAmount, expirationDate } = request.body
    const now = services.clock.now()
    await services.execute(creditLimitAggregate, request.params.creditLimitId, {
      type: 'ChangeCreditLimit', today: utcDate(now), now: now.toISOString(),
      ...(status === undefined ? {} : { status }), ...(maxAmount === undefined ? {} : { maxAmount }), ...(expirationDate === undefined ? {} : { expirationDate }),
    }, commandContext(request))
    return { creditorId, creditLimit: view(await load(creditorId, request.params.creditLimitId)) }
  })
}

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type, type Static } from 'typebox'
import { keyedCreditLineId } from '../commands/creditLine.js'
import { createCreditLine, updateCreditLine } from '../commands/lending.js'
import type { CreditLineConfiguration } from '../events/creditLine.js'
import type { CreditLineDoc } from '../projections/creditLines.js'
import type { Services } from '../services.js'
import { AppError, notFound } from '../shared/errors.js'
import { newId } from '../shared/ids.js'
import { MAX_TERM_MONTHS, paymentProviderNames, rateTypes } from '../shared/lending.js'
import { commandContext, organizationOf } from './context.js'
import { failures, IdempotencyKeyHeader, MoneyInput, NonBlankText, OrganizationHeaders, PageQuery, Pagination, pagination, Timestamp, Uuid } from './schemas.js'

/** An amount of a line as answered (lines recorded before the money bound keep their amounts). */
export const PositiveDecimal = Type.String({ pattern: '^[0-9]+(\\.[0-9]+)?$', description: 'decimal string', examples: ['1500000.00'] })
export const Months = (description: string) => Type.Integer({ minimum: 1, maximum: MAX_TERM_MONTHS, description: `${description}, in months` })
export const MethodGroups = (description: string) =>
  Type.Array(Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 50 }), { maxItems: 50, description })
export const TextGroups = (description: string) =>
  Type.Array(Type.Array(Type.String({ maxLength: 500 }), { maxItems: 50 }), { maxItems: 50, description })
const WebhookIds = (description: string) => Type.Array(Uuid, { maxItems: 50, description })
export const Jurisdiction = Type.Object({ code: Type.String({ minLength: 1, maxLength: 20 }), name: Type.String({ maxLength: 200 }) }, { additionalProperties: false })

const RATE_DESCRIPTION = 'a percentage per year, e.g. "24.5"; FIXED: effective annual rate (E.A.), FIXED_NOMINAL: nominal annual rate paid monthly (N.M.V.)'

/**
 * Ten decimals are more than any published rate carries, and keep the
 * smallest rate (10^-10 % a year) far above the monthly rate the schedule
 * takes as zero; six integer digits keep a schedule's figures inside the
 * precision money is computed with (src/shared/money.ts).
 */
const Rate = Type.String({ pattern: '^[0-9]{1,6}(\\.[0-9]{1,10})?$', description: `${RATE_DESCRIPTION}; at most 6 integer digits and 10 decimals` })

/** The body fields of a credit line; defaults only on creation (PATCH takes any subset and fills nothing in). */
const lineFields = (creating: boolean) => {
  const withDefault = <T extends object>(value: unknown, options: T) => (creating ? { ...options, default: value } : options)
  return {
    name: NonBlankText({ maxLength: 200 }),
    description: Type.Optional(Type.String(withDefault('', { maxLength: 2000 }))),
    principalMin: MoneyInput(),
    principalMax: MoneyInput(),
    principalDefault: MoneyInput(),
    timeMin: Months('shortest term'),
    timeMax: Months('longest term'),
    timeDefault: Months('default term'),
    rate: Rate,
    rateType: Type.Optional(Type.Enum(rateTypes, withDefault('FIXED', { description: 'how `rate` is read; both are fixed for the life of a credit' }))),
    entityConfigID: Type.Optional(Type.String({
      format: 'uuid', description: 'configuration the line belongs to: the organization\'s own (its default configuration, also the default); any other is refused',
    })),
    currency: Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217 code' }),
    jurisdictionCode: Type.String({ minLength: 1, maxLength: 20, description: 'e.g. an ISO 3166 code such as CO' }),
    jurisdiction: Type.Optional(Jurisdiction),
    gatewayMethods: Type.Optional(MethodGroups('payment method names, grouped; the first is the default Method of orders')),
    disbursementMethods: Type.Optional(MethodGroups('disbursement method names, grouped; a disbursement must use one (any when empty)')),
    availableDays: Type.Optional(Type.Integer(withDefault(0, { minimum: 0, maximum: 3650, description: 'days an approved credit stays disbursable; 0: no limit' }))),
    conditions: Type.Optional(TextGroups('conditions, grouped')),
    benefits: Type.Optional(TextGroups('benefits, grouped')),
    active: Type.Optional(Type.Boolean(withDefault(true, { description: 'only active lines take credit requests and appear in GET /products' }))),
    provider: Type.Optional(Type.Enum(paymentProviderNames, withDefault('manual', { description: 'default payment provider of the line\'s orders' }))),
    requireDistinctApprover: Type.Optional(Type.Boolean(withDefault(false, { description: 'payment orders must be approved by someone other than their creator' }))),
    onOrderWebhooks: Type.Optional(WebhookIds('webhooks fired when a payment order of the line is approved')),
    onDeliveredWebhooks: Type.Optional(WebhookIds('webhooks fired when a credit of the line reaches Desembolsado')),
  }
}

const CreateBody = Type.Object(lineFields(true), { additionalProperties: false })
const PatchBody = Type.Partial(Type.Object(lineFields(false)), { additionalProperties: false, minProperties: 1 })

export const CreditLine = Type.Object({
  ID: Uuid,
  organizationId: Uuid,
  name: Type.String(),
  description: Type.String(),
  principalMin: PositiveDecimal,
  principalMax: PositiveDecimal,
  principalDefault: PositiveDecimal,
  timeMin: Type.Integer({ description: 'months' }),
  timeMax: Type.Integer({ description: 'months' }),
  timeDefault: Type.Integer({ description: 'months' }),
  rate: Type.String({ description: RATE_DESCRIPTION }),
  rateType: Type.String(),
  entityConfigID: Type.String(),
  currency: Type.String(),
  jurisdictionCode: Type.String(),
  jurisdiction: Jurisdiction,
  gatewayMethods: Type.Array(Type.Array(Type.String())),
  disbursementMethods: Type.Array(Type.Array(Type.String())),
  availableDays: Type.Integer(),
  conditions: Type.Array(Type.Array(Type.String())),
  benefits: Type.Array(Type.Array(Type.String())),
  active: Type.Boolean(),
  provider: Type.String(),
  requireDistinctApprover: Type.Boolean(),
  onOrderWebhooks: Type.Array(Type.String()),
  onDeliveredWebhooks: Type.Array(Type.String()),
  createdAt: Timestamp,
  updatedAt: Timestamp,
})

export const creditLineView = (doc: CreditLineDoc): Static<typeof CreditLine> => {
  const { _id, _position, ...fields } = doc
  return { ID: _id, ...fields }
}

const regionNames = new Intl.DisplayNames(['en'], { type: 'region' })

/** The jurisdiction's name: the one given, else the English country name of a two-letter code, else the code. */
const jurisdictionOf = (code: string, given: { code: string; name: string } | undefined) => {
  if (given !== undefined && given.name !== '') return given
  let name = code
  if (/^[A-Z]{2}$/.test(code)) {
    try {
      name = regionNames.of(code) ?? code
    } catch {
      name = code
    }
  }
  return { code: given?.code ?? code, name }
}

const One = Type.Object({ status: Type.Literal('success'), data: Type.Object({ creditLine: CreditLine }) })

/** Credit lines: the configurable products an organization lends under (write side and full configuration). */
export const creditLineRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const { queries, commands } = services

  const load = async (organizationId: string, id: string) => {
    const doc = await queries.creditLines.getIn(organizationId, id)
    if (doc === null) throw notFound('credit line', id)
    return doc
  }

  app.post('/credit-lines', {
    config: { organization: 'header', permissions: ['WriteCreditLine'] },
    schema: {
      summary: 'Create a credit line',
      description: 'Fields as in ProductDTO plus `disbursementMethods`, `provider`, `requireDistinctApprover` and the webhook links. ' +
        'Rules: principalMin ≤ principalDefault ≤ principalMax, timeMin ≤ timeDefault ≤ timeMax (months), amounts within the currency\'s minor unit, ' +
        'linked webhooks must exist in the organization and not be archived. ' +
        'With an `Idempotency-Key` header the request can be sent again safely (a retry after a timeout): the first creates the line (201), ' +
        'the same request again (amounts compared by value, defaults filled in, fields in any order) answers 200 with that line as it is now, ' +
        'and another request with the Key 409 IDEMPOTENCY_KEY_REUSED; concurrent duplicates create one line. Keys are per organization and ' +
        'kept for good. Without one, every request creates a line: a retry would offer the product twice.',
      tags: ['Credit lines'],
      headers: Type.Object({ ...OrganizationHeaders.properties, 'idempotency-key': IdempotencyKeyHeader }, { additionalProperties: true }),
      body: CreateBody,
      response: { 201: One, 200: Type.Object(One.properties, { description: 'the credit line this Idempotency-Key already created' }), ...failures(400, 401, 403, 409) },
    },
  }, async (request, reply) => {
    const organization = organizationOf(request)
    const body = request.body
    const key = request.headers['idempotency-key']
    const creditLineId = key === undefined ? newId() : keyedCreditLineId(organization.id, key)
    const configuration: CreditLineConfiguration = {
      name: body.name, description: body.description ?? '', principalMin: body.principalMin, principalMax: body.principalMax,
      principalDefault: body.principalDefault, timeMin: body.timeMin, timeMax: body.timeMax, timeDefault: body.timeDefault, rate: body.rate,
      rateType: body.rateType ?? 'FIXED', entityConfigID: body.entityConfigID ?? organization.defaultConfigId, currency: body.currency,
      jurisdictionCode: body.jurisdictionCode, jurisdiction: jurisdictionOf(body.jurisdictionCode, body.jurisdiction),
      gatewayMethods: body.gatewayMethods ?? [], disbursementMethods: body.disbursementMethods ?? [], availableDays: body.availableDays ?? 0,
      conditions: body.conditions ?? [], benefits: body.benefits ?? [], active: body.active ?? true, provider: body.provider ?? 'manual',
      requireDistinctApprover: body.requireDistinctApprover ?? false, onOrderWebhooks: body.onOrderWebhooks ?? [],
      onDeliveredWebhooks: body.onDeliveredWebhooks ?? [],
    }
    const result = await createCreditLine(commands, {
      creditLineId, organizationId: organization.id, configuration, now: services.clock.now().toISOString(), ...(key === undefined ? {} : { key }),
    }, commandContext(request))
    await services.settle(result.position)
    return reply.code(result.created ? 201 : 200).send({ status: 'success', data: { creditLine: creditLineView(await load(organization.id, creditLineId)) } })
  })

  app.get('/credit-lines', {
    config: { organization: 'header', permissions: ['ReadCreditLine'] },
    schema: {
      summary: 'The organization\'s credit lines with their full configuration',
      tags: ['Credit lines'],
      headers: OrganizationHeaders,
      querystring: Type.Object({
        ...PageQuery.properties,
        active: Type.Optional(Type.Boolean()),
        currency: Type.Optional(Type.String({ pattern: '^[A-Z]{3}$' })),
      }, { additionalProperties: false }),
      response: { 200: Type.Object({ status: Type.Literal('success'), data: Type.Array(CreditLine), pagination: Pagination }), ...failures(400, 401, 403) },
    },
  }, async (request) => {
    const { page, limit, active, currency } = request.query
    const { items, total } = await queries.creditLines.list({
      organizationId: organizationOf(request).id, offset: (page - 1) * limit, limit,
      ...(active === undefined ? {} : { active }), ...(currency === undefined ? {} : { currency }),
    })
    return { status: 'success' as const, data: items.map(creditLineView), pagination: pagination(page, limit, total) }
  })

  app.get('/credit-lines/:id', {
    config: { organization: 'header', permissions: ['ReadCreditLine'] },
    schema: {
      summary: 'One credit line with its full configuration (provider, webhook links included)',
      tags: ['Credit lines'],
      headers: OrganizationHeaders,
      params: Type.Object({ id: Uuid }),
      response: { 200: One, ...failures(401, 403, 404) },
    },
  }, async (request) => ({ status: 'success' as const, data: { creditLine: creditLineView(await load(organizationOf(request).id, request.params.id)) } }))

  app.patch('/credit-lines/:id', {
    config: { organization: 'header', permissions: ['WriteCreditLine'] },
    schema: {
      summary: 'Change any subset of a credit line\'s fields',
      description: 'The whole configuration must still satisfy the creation rules. Newly linked webhooks must exist in the organization and not be ' +
        'archived; a webhook archived after it was linked stays linked and simply does not fire.',
      tags: ['Credit lines'],
      headers: OrganizationHeaders,
      params: Type.Object({ id: Uuid }),
      body: PatchBody,
      response: { 200: One, ...failures(400, 401, 403, 404) },
    },
  }, async (request) => {
    const organizationId = organizationOf(request).id
    const { jurisdiction, ...rest } = request.body
    const changes: Partial<CreditLineConfiguration> = { ...rest }
    if (rest.jurisdictionCode !== undefined || jurisdiction !== undefined) {
      const current = await load(organizationId, request.params.id)
      const code = rest.jurisdictionCode ?? jurisdiction?.code ?? current.jurisdictionCode
      changes.jurisdiction = jurisdictionOf(code, jurisdiction)
    }
    if (Object.keys(changes).length === 0) throw new AppError('VALIDATION_ERROR', 'nothing to change', { errors: [{ field: 'body', message: 'names no field' }] })
    const result = await updateCreditLine(commands, {
      creditLineId: request.params.id, organizationId, changes, now: services.clock.now().toISOString(),
    }, commandContext(request))
    await services.settle(result.position)
    return { status: 'success' as const, data: { creditLine: creditLineView(await load(organizationId, request.params.id)) } }
  })
}

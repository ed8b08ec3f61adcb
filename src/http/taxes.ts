import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { createTaxOnce, keyedTaxId, taxAggregate, taxRequestHash } from '../commands/tax.js'
import { taxBases, taxTypes, type TaxFields } from '../events/tax.js'
import type { TaxDoc } from '../projections/taxes.js'
import type { Services } from '../services.js'
import { notFound } from '../shared/errors.js'
import { whenReady } from '../shared/maybe.js'
import { newId } from '../shared/ids.js'
import { money } from '../shared/money.js'
import { commandContext, organizationOf } from './context.js'
import { documentListResponses } from './responseCache.js'
import { failures, IdempotencyKeyHeader, MoneyNumberInput, NonBlankText, OrganizationHeaders, Timestamp, Uuid } from './schemas.js'

const TaxType = Type.Enum(taxTypes)
const AppliesTo = Type.Array(Type.Enum(taxBases), { minItems: 1, uniqueItems: true, description: 'a non-empty subset of CREDIT, FEE, PAYMENT' })
const Percentage = Type.Number({ minimum: 0, maximum: 100, description: 'between 0 and 100, up to 4 decimal places' })
const MinimumAmount = MoneyNumberInput('smallest base the tax applies to, below 10^15, up to 4 decimal places')

export const Tax = Type.Object({
  id: Uuid,
  name: Type.String(),
  description: Type.String(),
  percentage: Type.Number(),
  type: TaxType,
  is_active: Type.Boolean(),
  applies_to: Type.Array(Type.Enum(taxBases)),
  minimum_amount: Type.Number(),
  usage_count: Type.Integer({ description: 'times the tax was applied' }),
  created_at: Timestamp,
  updated_at: Timestamp,
})

const view = (doc: TaxDoc) => ({
  id: doc._id, name: doc.name, description: doc.description, percentage: Number(doc.percentage), type: doc.type, is_active: doc.isActive,
  applies_to: doc.appliesTo, minimum_amount: Number(doc.minimumAmount), usage_count: doc.usageCount, created_at: doc.createdAt, updated_at: doc.updatedAt,
})

/** Numbers on the wire, decimal strings inside: 0.1 stays exactly 0.1. */
const decimalOf = (value: number): string => money(value).toFixed()

const One = Type.Object({ status: Type.Literal('success'), data: Tax })
const IdParams = Type.Object({ id: Uuid })
const tags = ['Taxes']

/** Tax configurations of the organization named by `Organization-ID`. */
export const taxRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const { queries } = services
  // Every guarded list request reads the same few taxes: their serialized answer is kept until one of them changes.
  const respondWithList = documentListResponses<TaxDoc>()

  const load = async (organizationId: string, id: string) => {
    const doc = await queries.taxes.get(organizationId, id)
    if (doc === null) throw notFound('tax', id)
    return doc
  }

  app.get('/taxes', {
    config: { organization: 'header', permissions: ['ReadTax'] },
    schema: {
      summary: 'List the organization\'s taxes, active and inactive',
      tags,
      headers: OrganizationHeaders,
      querystring: Type.Object({ is_active: Type.Optional(Type.Boolean()), type: Type.Optional(TaxType) }, { additionalProperties: false }),
      response: { 200: Type.Object({ status: Type.Literal('success'), data: Type.Array(Tax) }), ...failures(400, 401, 403) },
    },
  }, (request, reply) => {
    const { is_active: isActive, type } = request.query
    const docs = queries.taxes.list({
      organizationId: organizationOf(request).id, ...(isActive === undefined ? {} : { isActive }), ...(type === undefined ? {} : { type }),
    })
    return whenReady(docs, (listed) => { respondWithList(reply, listed, (kept) => ({ status: 'success', data: kept.map(view) })) })
  })

  app.get('/taxes/:id', {
    config: { organization: 'header', permissions: ['ReadTax'] },
    schema: { summary: 'One tax', tags, headers: OrganizationHeaders, params: IdParams, response: { 200: One, ...failures(400, 401, 403, 404) } },
  }, async (request) => ({ status: 'success' as const, data: view(await load(organizationOf(request).id, request.params.id)) }))

  app.post('/taxes', {
    config: { organization: 'header', permissions: ['WriteTax'] },
    schema: {
      summary: 'Create a tax',
      description: 'With an `Idempotency-Key` header the request can be sent again safely (a retry after a timeout): the first creates the tax (201), ' +
        'the same request again (percentages and amounts compared by value, `applies_to` in any order, defaults filled in) answers 200 with that tax ' +
        'as it is now, and another request with the Key 409 IDEMPOTENCY_KEY_REUSED; concurrent duplicates create one tax. Keys are per organization ' +
        'and kept for good. Without one, every request creates a tax: a retry would charge the tax twice.',
      tags,
      headers: Type.Object({ ...OrganizationHeaders.properties, 'idempotency-key': IdempotencyKeyHeader }, { additionalProperties: true }),
      body: Type.Object({
        name: NonBlankText({ maxLength: 200 }),
        description: Type.Optional(Type.String({ maxLength: 1000 })),
        percentage: Percentage,
        type: TaxType,
        is_active: Type.Optional(Type.Boolean({ description: 'default true' })),
        applies_to: AppliesTo,
        minimum_amount: Type.Optional(MinimumAmount),
      }, { additionalProperties: false }),
      response: { 201: One, 200: Type.Object(One.properties, { description: 'the tax this Idempotency-Key already created' }), ...failures(400, 401, 403, 409) },
    },
  }, async (request, reply) => {
    const organizationId = organizationOf(request).id
    const key = request.headers['idempotency-key']
    const taxId = key === undefined ? newId() : keyedTaxId(organizationId, key)
    const { name, description = '', percentage, type, is_active: isActive = true, applies_to: appliesTo, minimum_amount: minimumAmount = 0 } = request.body
    const fields = { name, description, percentage: decimalOf(percentage), type, appliesTo, minimumAmount: decimalOf(minimumAmount) }
    const command = { type: 'CreateTax' as const, taxId, organizationId, isActive, now: services.clock.now().toISOString(), fields }
    let created = true
    if (key === undefined) {
      await services.execute(taxAggregate, taxId, command, commandContext(request))
    } else {
      const once = await createTaxOnce(services.commands, { ...command, idempotency: { key, requestHash: taxRequestHash(fields, isActive) } }, commandContext(request))
      await services.settle(once.position)
      created = once.created
    }
    return reply.code(created ? 201 : 200).send({ status: 'success', data: view(await load(organizationId, taxId)) })
  })

  app.patch('/taxes/:id', {
    config: { organization: 'header', permissions: ['WriteTax'] },
    schema: {
      summary: 'Update a tax (any subset of its fields)',
      tags,
      headers: OrganizationHeaders,
      params: IdParams,
      body: Type.Object({
        name: Type.Optional(NonBlankText({ maxLength: 200 })),
        description: Type.Optional(Type.String({ maxLength: 1000 })),
        percentage: Type.Optional(Percentage),
        type: Type.Optional(TaxType),
        is_active: Type.Optional(Type.Boolean()),
        applies_to: Type.Optional(AppliesTo),
        minimum_amount: Type.Optional(MinimumAmount),
      }, { additionalProperties: false, minProperties: 1 }),
      response: { 200: One, ...failures(400, 401, 403, 404) },
    },
  }, async (request) => {
    const organizationId = organizationOf(request).id
    await load(organizationId, request.params.id)
    const { name, description, percentage, type, is_active: isActive, applies_to: appliesTo, minimum_amount: minimumAmount } = request.body
    const changes: Partial<TaxFields> = {
      ...(name === undefined ? {} : { name }), ...(description === undefined ? {} : { description }),
      ...(percentage === undefined ? {} : { percentage: decimalOf(percentage) }), ...(type === undefined ? {} : { type }),
      ...(appliesTo === undefined ? {} : { appliesTo }), ...(minimumAmount === undefined ? {} : { minimumAmount: decimalOf(minimumAmount) }),
    }
    await services.execute(taxAggregate, request.params.id, {
      type: 'UpdateTax', changes, ...(isActive === undefined ? {} : { isActive }), now: services.clock.now().toISOString(),
    }, commandContext(request))
    return { status: 'success' as const, data: view(await load(organizationId, request.params.id)) }
  })

  for (const action of ['activate', 'deactivate'] as const) {
    app.post(`/taxes/:id/${action}`, {
      config: { organization: 'header', permissions: ['WriteTax'] },
      schema: {
        summary: action === 'activate' ? 'Activate a tax' : 'Deactivate a tax (it stops applying; its history stays)',
        tags,
        headers: OrganizationHeaders,
        params: IdParams,
        response: { 200: One, ...failures(400, 401, 403, 404) },
      },
    }, async (request) => {
      const organizationId = organizationOf(request).id
      await load(organizationId, request.params.id)
      await services.execute(taxAggregate, request.params.id, {
        type: action === 'activate' ? 'ActivateTax' : 'DeactivateTax', now: services.clock.now().toISOString(),
      }, commandContext(request))
      return { status: 'success' as const, data: view(await load(organizationId, request.params.id)) }
    })
  }
}

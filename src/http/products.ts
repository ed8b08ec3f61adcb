import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type, type Static } from 'typebox'
import type { CreditLineDoc } from '../projections/creditLines.js'
import type { Services } from '../services.js'
import { notFound } from '../shared/errors.js'
import { organizationOf } from './context.js'
import { Jurisdiction, PositiveDecimal } from './creditLines.js'
import { documentResponses } from './responseCache.js'
import { failures, OrganizationHeaders, PageQuery, Pagination, pagination, Timestamp, Uuid } from './schemas.js'

const Groups = Type.Array(Type.Array(Type.String()))
const months = (what: string) => Type.Integer({ description: `${what}, in months` })

/** Fields every shape shares. */
const common = {
  ID: Uuid,
  name: Type.String(),
  description: Type.String(),
  principalMin: PositiveDecimal,
  principalMax: PositiveDecimal,
  timeMin: months('shortest term'),
  timeMax: months('longest term'),
  rate: Type.String({ description: 'percentage per year (decimal string); see rateType' }),
  rateType: Type.String({ description: 'FIXED: effective annual rate; FIXED_NOMINAL: nominal annual rate paid monthly' }),
  currency: Type.String({ description: 'ISO 4217 code' }),
  jurisdictionCode: Type.String(),
}

/** The light public shape: enough to compare offers. */
const PublicProduct = Type.Object(common, { title: 'ProductPublic' })

/** The shape for authenticated callers: what an origination screen needs to quote and take a credit. */
const CustomProduct = Type.Object({
  ...common,
  principalDefault: PositiveDecimal,
  timeDefault: months('default term'),
  gatewayMethods: Groups,
  disbursementMethods: Groups,
  availableDays: Type.Integer(),
  active: Type.Boolean(),
  provider: Type.String({ description: 'default payment provider of orders' }),
}, { title: 'ProductCustom' })

/** ProductDTO, the most complete shape: adds configuration data, nested groups, jurisdiction and timestamps. */
export const ProductDTO = Type.Object({
  ...common,
  principalDefault: PositiveDecimal,
  timeDefault: months('default term'),
  entityConfigID: Uuid,
  jurisdiction: Jurisdiction,
  gatewayMethods: Groups,
  disbursementMethods: Groups,
  availableDays: Type.Integer({ description: 'days an approved credit stays disbursable; 0: no limit' }),
  active: Type.Boolean(),
  conditions: Groups,
  benefits: Groups,
  createdAt: Timestamp,
  updatedAt: Timestamp,
}, { title: 'ProductDTO' })

const publicView = (d: CreditLineDoc): Static<typeof PublicProduct> => ({
  ID: d._id, name: d.name, description: d.description, principalMin: d.principalMin, principalMax: d.principalMax, timeMin: d.timeMin,
  timeMax: d.timeMax, rate: d.rate, rateType: d.rateType, currency: d.currency, jurisdictionCode: d.jurisdictionCode,
})

// Object.assign onto the public view, not a spread followed by more keys: in Node 20 that form makes a hidden class per call (docs/benchmarks.md, "Stop 25").
const customView = (d: CreditLineDoc): Static<typeof CustomProduct> => Object.assign(publicView(d), {
  principalDefault: d.principalDefault, timeDefault: d.timeDefault, gatewayMethods: d.gatewayMethods,
  disbursementMethods: d.disbursementMethods, availableDays: d.availableDays, active: d.active, provider: d.provider,
})

const productView = (d: CreditLineDoc): Static<typeof ProductDTO> => Object.assign(publicView(d), {
  principalDefault: d.principalDefault, timeDefault: d.timeDefault, entityConfigID: d.entityConfigID, jurisdiction: d.jurisdiction,
  gatewayMethods: d.gatewayMethods, disbursementMethods: d.disbursementMethods, availableDays: d.availableDays, active: d.active,
  conditions: d.conditions, benefits: d.benefits, createdAt: d.createdAt, updatedAt: d.updatedAt,
})

const SHAPES = `Three shapes of a credit line (terms in months, money and rate as decimal strings):

| field | GET /products (public) | GET /custom-products (authenticated) | GET /products/{id} (ProductDTO) |
|---|---|---|---|
| ID, name, description | ✓ | ✓ | ✓ |
| principalMin, principalMax, timeMin, timeMax | ✓ | ✓ | ✓ |
| rate, rateType, currency, jurisdictionCode | ✓ | ✓ | ✓ |
| principalDefault, timeDefault | | ✓ | ✓ |
| gatewayMethods, disbursementMethods, availableDays, active | | ✓ | ✓ |
| provider | | ✓ | |
| entityConfigID, jurisdiction {code, name}, conditions, benefits | | | ✓ |
| createdAt, updatedAt | | | ✓ |`

const ListQuery = Type.Object({
  ...PageQuery.properties,
  currency: Type.Optional(Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217 code' })),
  jurisdiction: Type.Optional(Type.String({ minLength: 1, maxLength: 20, description: 'jurisdiction code' })),
}, { additionalProperties: false })

/** The marketplace: the three product shapes of credit lines. */
export const productRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const { queries } = services
  const productResponse = documentResponses<CreditLineDoc>()

  app.get('/products', {
    config: { auth: 'public' },
    schema: {
      summary: 'Active credit products of every active organization (light public shape; no token needed)',
      description: SHAPES,
      tags: ['Products'],
      querystring: ListQuery,
      response: { 200: Type.Object({ data: Type.Object({ products: Type.Array(PublicProduct) }), pagination: Pagination }), ...failures(400) },
    },
  }, async (request) => {
    const { page, limit, currency, jurisdiction } = request.query
    const { items, total } = await queries.creditLines.list({
      active: true, offset: (page - 1) * limit, limit,
      ...(currency === undefined ? {} : { currency }), ...(jurisdiction === undefined ? {} : { jurisdictionCode: jurisdiction }),
    })
    return { data: { products: items.map(publicView) }, pagination: pagination(page, limit, total) }
  })

  app.get('/custom-products', {
    config: { organization: 'header', permissions: ['ReadCreditLine'] },
    schema: {
      summary: 'The credit products the caller\'s organization may offer (shape for authenticated callers)',
      description: `${SHAPES}\n\nActive lines only unless \`active=false\` (inactive ones) is asked for.`,
      tags: ['Products'],
      headers: OrganizationHeaders,
      querystring: Type.Object({ ...ListQuery.properties, active: Type.Boolean({ default: true }) }, { additionalProperties: false }),
      response: { 200: Type.Object({ data: Type.Object({ products: Type.Array(CustomProduct) }), pagination: Pagination }), ...failures(400, 401, 403) },
    },
  }, async (request) => {
    const { page, limit, currency, jurisdiction, active } = request.query
    const { items, total } = await queries.creditLines.list({
      organizationId: organizationOf(request).id, active, offset: (page - 1) * limit, limit,
      ...(currency === undefined ? {} : { currency }), ...(jurisdiction === undefined ? {} : { jurisdictionCode: jurisdiction }),
    })
    return { data: { products: items.map(customView) }, pagination: pagination(page, limit, total) }
  })

  app.get('/products/:productid', {
    config: { auth: 'public' },
    schema: {
      summary: 'One credit product, complete (ProductDTO)',
      description: `${SHAPES}\n\nPublic, like the marketplace list: no token needed. Only active products are shown; an inactive ` +
        'line, or a line of a deactivated organization, answers 404 here; a line stays readable by its organization at GET /credit-lines/{id}.',
      tags: ['Products'],
      security: [],
      params: Type.Object({ productid: Uuid }),
      response: { 200: Type.Object({ data: Type.Object({ product: ProductDTO }) }), ...failures(404) },
    },
  }, async (request, reply) => {
    const doc = await queries.creditLines.get(request.params.productid)
    if (doc === null || !doc.active || !doc.organizationActive) throw notFound('product', request.params.productid)
    return productResponse(reply, doc, (line) => ({ data: { product: productView(line) } }))
  })
}

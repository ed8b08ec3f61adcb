import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { canonical } from '../commands/idempotency.js'
import { createWebhookOnce, keyedWebhookId, webhookAggregate } from '../commands/webhook.js'
import type { WebhookConfiguration } from '../events/webhook.js'
import type { Services } from '../services.js'
import { notFound } from '../shared/errors.js'
import { newId } from '../shared/ids.js'
import { configurationDefaults, resolveConfiguration } from '../webhooks/configuration.js'
import { commandContext, organizationOf } from './context.js'
import { failures, IdempotencyKeyHeader, OrganizationHeaders, Pagination, pagination, PageQuery, Uuid } from './schemas.js'
import { configurationFields, SendLog, sendLogView, Webhook, webhookView } from './webhookSchemas.js'

const { tag, url, ...optionalFields } = configurationFields
const scoresHidden = Type.Boolean({
  description: 'render `.Credit.Score` zero-valued in this webhook\'s sends (default: true when the caller lacks ReadAnalysis); ' +
    '`false` (scores sent) needs ReadAnalysis, and only a request that says so turns scores on',
})
const CreateBody = Type.Object({ tag, url, ...Type.Partial(Type.Object({ ...optionalFields, scoresHidden })).properties }, { additionalProperties: false })
const UpdateBody = Type.Partial(Type.Object({ ...configurationFields, scoresHidden }), { additionalProperties: false, minProperties: 1 })
const Params = Type.Object({ webhookid: Uuid })
const One = Type.Object({ status: Type.Literal('success'), data: Webhook })

/** Webhook configuration: create, list, read, update, archive; and each webhook's send log. */
export const webhookRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const { queries } = services

  const load = async (organizationId: string, id: string) => {
    const doc = await queries.webhooks.get(organizationId, id)
    if (doc === null) throw notFound('webhook', id)
    return doc
  }

  app.post('/webhook', {
    config: { organization: 'header', permissions: ['WriteWebhook'] },
    schema: {
      summary: 'Create a webhook (it fires only once a credit line links it)',
      description: 'With an `Idempotency-Key` header the request can be sent again safely (a retry after a timeout): the first creates the webhook (201), ' +
        'the same body again (in any key order) answers 200 with that webhook as it is now, another body with the Key 409 IDEMPOTENCY_KEY_REUSED; ' +
        'concurrent duplicates create one webhook. Keys are per organization and kept for good. Without one, every request creates a webhook: ' +
        'a retry would send every event twice once a line links both.',
      tags: ['Webhooks'],
      headers: Type.Object({ ...OrganizationHeaders.properties, 'idempotency-key': IdempotencyKeyHeader }, { additionalProperties: true }),
      body: CreateBody,
      response: { 201: One, 200: Type.Object(One.properties, { description: 'the webhook this Idempotency-Key already created' }), ...failures(400, 401, 403, 409) },
    },
  }, async (request, reply) => {
    const organization = organizationOf(request)
    const organizationId = organization.id
    const base: WebhookConfiguration = { ...configurationDefaults, tag: request.body.tag, url: request.body.url, signingSecret: null }
    const { scoresHidden: hidden, ...fields } = request.body
    const configuration = resolveConfiguration(base, fields, services.dataKey)
    const key = request.headers['idempotency-key']
    const id = key === undefined ? newId() : keyedWebhookId(organizationId, key)
    const command = {
      type: 'CreateWebhook' as const, webhookId: id, organizationId, configuration, mayReadScores: organization.permissions.has('ReadAnalysis'),
      now: services.clock.now().toISOString(), ...(hidden === undefined ? {} : { scoresHidden: hidden }),
    }
    let created = true
    if (key === undefined) {
      await services.execute(webhookAggregate, id, command, commandContext(request))
    } else {
      // Keyed (HMAC) rather than a plain hash: the body may carry a token endpoint's credentials or a signing secret.
      const requestHash = services.dataKey.digest(JSON.stringify(canonical(request.body)))
      const once = await createWebhookOnce(services.commands, { ...command, idempotency: { key, requestHash } }, commandContext(request))
      await services.settle(once.position)
      created = once.created
    }
    return reply.code(created ? 201 : 200).send({ status: 'success', data: webhookView(await load(organizationId, id)) })
  })

  app.get('/webhooks', {
    config: { organization: 'header', permissions: ['ReadWebhook'] },
    schema: {
      summary: 'List webhooks (archived ones only when asked)',
      tags: ['Webhooks'],
      headers: OrganizationHeaders,
      querystring: Type.Object({
        ...PageQuery.properties,
        includeArchived: Type.Boolean({ default: false, description: 'also list archived webhooks' }),
        tag: Type.Optional(Type.String({ maxLength: 100, description: 'only webhooks with this tag' })),
      }, { additionalProperties: false }),
      response: { 200: Type.Object({ status: Type.Literal('success'), data: Type.Array(Webhook), pagination: Pagination }), ...failures(400, 401, 403) },
    },
  }, async (request) => {
    const { page, limit, includeArchived, tag: byTag } = request.query
    const { items, total } = await queries.webhooks.list({
      organizationId: organizationOf(request).id, includeArchived, offset: (page - 1) * limit, limit, ...(byTag === undefined ? {} : { tag: byTag }),
    })
    return { status: 'success' as const, data: items.map(webhookView), pagination: pagination(page, limit, total) }
  })

  app.get('/webhook/:webhookid', {
    config: { organization: 'header', permissions: ['ReadWebhook'] },
    schema: { summary: 'One webhook', tags: ['Webhooks'], headers: OrganizationHeaders, params: Params, response: { 200: One, ...failures(401, 403, 404) } },
  }, async (request) => ({ status: 'success' as const, data: webhookView(await load(organizationOf(request).id, request.params.webhookid)) }))

  app.put('/webhook/:webhookid', {
    config: { organization: 'header', permissions: ['WriteWebhook'] },
    schema: {
      summary: 'Update a webhook (any subset of its configuration)',
      description: 'A webhook whose sends render credits\' scores (`scoresHidden: false`) is changed only by a caller holding ReadAnalysis ' +
        '(403 FORBIDDEN, `permission: ReadAnalysis`); `scoresHidden: false` turns scores on (ReadAnalysis needed), no other change does.',
      tags: ['Webhooks'],
      headers: OrganizationHeaders,
      params: Params,
      body: UpdateBody,
      response: { 200: One, ...failures(400, 401, 403, 404, 409) },
    },
  }, async (request) => {
    const organization = organizationOf(request)
    const organizationId = organization.id
    const current = await load(organizationId, request.params.webhookid)
    const { scoresHidden: hidden, ...fields } = request.body
    const configuration = resolveConfiguration(current.configuration, fields, services.dataKey)
    const changed = Object.keys(fields).filter((key): key is keyof WebhookConfiguration => key in configuration)
    await services.execute(webhookAggregate, request.params.webhookid, {
      type: 'UpdateWebhook', changes: Object.fromEntries(changed.map((key) => [key, configuration[key]])),
      mayReadScores: organization.permissions.has('ReadAnalysis'), now: services.clock.now().toISOString(), ...(hidden === undefined ? {} : { scoresHidden: hidden }),
    }, commandContext(request))
    return { status: 'success' as const, data: webhookView(await load(organizationId, request.params.webhookid)) }
  })

  app.delete('/webhook/:webhookid', {
    config: { organization: 'header', permissions: ['WriteWebhook'] },
    schema: {
      summary: 'Archive a webhook: it stays readable with its logs, and never fires again',
      tags: ['Webhooks'],
      headers: OrganizationHeaders,
      params: Params,
      response: { 200: One, ...failures(401, 403, 404) },
    },
  }, async (request) => {
    const organizationId = organizationOf(request).id
    await load(organizationId, request.params.webhookid)
    await services.execute(webhookAggregate, request.params.webhookid, { type: 'ArchiveWebhook', now: services.clock.now().toISOString() }, commandContext(request))
    return { status: 'success' as const, data: webhookView(await load(organizationId, request.params.webhookid)) }
  })

  // Send logs hold requests rendered from credits and their debtors, as GET /credits/{id}/webhook-logs does: ReadCredit as well.
  app.get('/webhook/:webhookid/logs', {
    config: { organization: 'header', permissions: ['ReadWebhook', 'ReadCredit'] },
    schema: {
      summary: 'Sends of a webhook (automatic, manual and test), newest first',
      description: 'Needs ReadWebhook and ReadCredit: the logged requests carry credit and debtor data.',
      tags: ['Webhooks'],
      headers: OrganizationHeaders,
      params: Params,
      querystring: Type.Object(PageQuery.properties, { additionalProperties: false }),
      response: { 200: Type.Object({ status: Type.Literal('success'), data: Type.Array(SendLog), pagination: Pagination }), ...failures(400, 401, 403, 404) },
    },
  }, async (request) => {
    const organizationId = organizationOf(request).id
    await load(organizationId, request.params.webhookid)
    const { page, limit } = request.query
    const { items, total } = await queries.webhookSends.byWebhook(request.params.webhookid, { organizationId, offset: (page - 1) * limit, limit })
    return { status: 'success' as const, data: items.map(sendLogView), pagination: pagination(page, limit, total) }
  })
}

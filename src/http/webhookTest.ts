import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { WebhookConfiguration } from '../events/webhook.js'
import type { Services } from '../services.js'
import { AppError, notFound } from '../shared/errors.js'
import { newId } from '../shared/ids.js'
import { emptyTemplateContext } from '../templates/context.js'
import { configurationDefaults, resolveConfiguration, unsealed } from '../webhooks/configuration.js'
import { RenderFailure } from '../webhooks/render.js'
import { runResponseQueries } from '../webhooks/responseQueries.js'
import { WebhookSender } from '../webhooks/sender.js'
import { commandContext, organizationOf } from './context.js'
import { failures, OrganizationHeaders, Pagination, pagination, PageQuery, Uuid } from './schemas.js'
import { configurationFields, PreviewResult, SendLog, sendLogView, SendResult } from './webhookSchemas.js'

const TestBody = Type.Object({
  ...Type.Partial(Type.Object(configurationFields)).properties,
  webhookID: Type.Optional(Uuid),
  fromWebhook: Type.Optional(Type.Record(Type.String(), Type.Record(Type.String(), Type.Unknown()), {
    description: 'values fromWebhook "tag" "query" returns in this test: tag → query name → value',
  })),
  sampleResponse: Type.Optional(Type.Object({
    status: Type.Optional(Type.Integer({ minimum: 100, maximum: 599 })),
    headers: Type.Optional(Type.Record(Type.String(), Type.String())),
    body: Type.Optional(Type.Unknown({ description: 'JSON value (or JSON text) the responseQueries run over when send=false' })),
  }, { additionalProperties: false })),
}, {
  additionalProperties: false,
  description: 'configuration fields to test (over the stored webhook webhookID when given), sample values for fromWebhook, and with send=false a sample response',
})

const sampleText = (body: unknown): string => (typeof body === 'string' ? body : JSON.stringify(body ?? null))

/** POST /webhook-test: render (and send) a configuration against the empty credit; and the log of such tests. */
export const webhookTestRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const sender = new WebhookSender(services)

  app.post('/webhook-test', {
    config: { organization: 'header', permissions: ['WriteWebhook'] },
    schema: {
      summary: 'Render and send a webhook now with the empty credit (send=false: only render)',
      description: 'No stored webhook or credit is needed. The send is logged like any other (under webhookID when given, else in GET /webhook-test/logs). '
        + 'Sending as an archived webhook answers 409 NOT_ACTIVE (rendering it with send=false is allowed).',
      tags: ['Webhooks'],
      headers: OrganizationHeaders,
      querystring: Type.Object({ send: Type.Boolean({ default: true, description: 'false: render only, and run responseQueries over sampleResponse' }) }, { additionalProperties: false }),
      body: TestBody,
      response: {
        200: Type.Object({ status: Type.Literal('success'), data: Type.Union([SendResult, PreviewResult]) }),
        ...failures(400, 401, 403, 404, 409),
      },
    },
  }, async (request) => {
    const organization = organizationOf(request)
    const { webhookID, fromWebhook = {}, sampleResponse, ...input } = request.body
    const stored = webhookID === undefined ? null : await services.queries.webhooks.get(organization.id, webhookID)
    if (webhookID !== undefined && stored === null) throw notFound('webhook', webhookID)
    if (stored?.archived === true && request.query.send) throw new AppError('NOT_ACTIVE', 'an archived webhook is not sent', { webhookId: webhookID })
    const base: WebhookConfiguration = stored?.configuration ?? { ...configurationDefaults, tag: 'test', url: '', signingSecret: null }
    const configuration = unsealed(resolveConfiguration(base, input, services.dataKey), services.dataKey)
    const sendId = newId()
    const context = emptyTemplateContext({
      Trigger: { Type: 'test', OriginalType: 'test', SendID: sendId, OccurredAt: services.clock.now().toISOString() },
      Organization: { ID: organization.id, Name: organization.name },
    })
    const lookup = (tag: string, query: string): unknown => {
      const values = Object.hasOwn(fromWebhook, tag) ? fromWebhook[tag] : undefined
      return values !== undefined && Object.hasOwn(values, query) ? values[query] : null
    }
    if (!request.query.send) {
      try {
        const previewed = sender.preview({ configuration, context, fromWebhook: lookup, sendId }, services.clock.now())
        const queried = sampleResponse?.body === undefined ? { results: {}, cut: [] } : runResponseQueries(configuration.responseQueries, sampleText(sampleResponse.body))
        return { status: 'success' as const, data: { ...previewed, error: null, responseQueryResults: queried.results, responseQueryResultsCut: queried.cut } }
      } catch (error) {
        if (!(error instanceof RenderFailure)) throw error
        return { status: 'success' as const, data: { request: null, auth: null, error: error.error, responseQueryResults: {}, responseQueryResultsCut: [] } }
      }
    }
    const report = await sender.send({
      sendId, organizationId: organization.id, webhookId: stored?._id ?? null, configuration, context, fromWebhook: lookup,
      trigger: { type: 'test', eventId: null, logId: null }, creditId: null, orderId: null, commandContext: commandContext(request),
    })
    if (report === null) throw new Error('a fresh test send id was already used')
    const { sendId: logID, ...detail } = report
    return { status: 'success' as const, data: { logID, ...detail } }
  })

  app.get('/webhook-test/logs', {
    config: { organization: 'header', permissions: ['ReadWebhook'] },
    schema: {
      summary: 'Test sends of configurations that were not stored, newest first',
      tags: ['Webhooks'],
      headers: OrganizationHeaders,
      querystring: Type.Object(PageQuery.properties, { additionalProperties: false }),
      response: { 200: Type.Object({ status: Type.Literal('success'), data: Type.Array(SendLog), pagination: Pagination }), ...failures(400, 401, 403) },
    },
  }, async (request) => {
    const { page, limit } = request.query
    const { items, total } = await services.queries.webhookSends.tests({ organizationId: organizationOf(request).id, offset: (page - 1) * limit, limit })
    return { status: 'success' as const, data: items.map(sendLogView), pagination: pagination(page, limit, total) }
  })
}

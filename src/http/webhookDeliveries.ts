import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { SendTriggerType } from '../events/webhookSend.js'
import type { WebhookSendDoc } from '../projections/webhookSends.js'
import type { Services } from '../services.js'
import { AppError, notFound } from '../shared/errors.js'
import { newId } from '../shared/ids.js'
import { unsealed } from '../webhooks/configuration.js'
import { contextFor, templateContextOf } from '../webhooks/context.js'
import { WebhookSender } from '../webhooks/sender.js'
import { fromWebhookLookup, loadSource } from '../webhooks/source.js'
import { commandContext, organizationOf } from './context.js'
import { failures, OrganizationHeaders, Pagination, pagination, PageQuery, Uuid } from './schemas.js'
import { SendLog, sendLogView, SendResult } from './webhookSchemas.js'

/** A manual send recorded before chains kept their origin is followed back this many re-sends at most. */
const MAX_CHAIN = 20

/** The send a chain of manual re-sends started from: its id (the Standard Webhooks message id) and its trigger type. */
interface ChainOrigin {
  sendId: string
  type: SendTriggerType
}

const originOf = async (services: Services, organizationId: string, log: WebhookSendDoc): Promise<ChainOrigin> => {
  let current = log
  for (let hops = 0; ; hops++) {
    const { type, logId, originalSendId, originalType } = current.trigger
    if (type !== 'manual') return { sendId: current._id, type }
    if (originalSendId !== undefined && originalType !== undefined) return { sendId: originalSendId, type: originalType }
    const previous = hops < MAX_CHAIN && logId !== null ? await services.queries.webhookSends.get(organizationId, logId) : null
    if (previous === null) return { sendId: current._id, type }
    current = previous
  }
}

/** Manual re-send of a logged send for a credit, and a credit's send log. */
export const webhookDeliveryRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const { queries } = services
  const sender = new WebhookSender(services)

  // The answer carries the request rendered from the credit and its debtor: reading that is ReadCredit's.
  app.post('/webhook/:webhookid/request', {
    config: { organization: 'header', permissions: ['WriteWebhook', 'ReadCredit'] },
    schema: {
      summary: 'Send a logged send again for its credit, rendered afresh against the credit as it is now',
      description: 'The log must be a send of this webhook for this credit (else 404). The new send is logged as a manual send ' +
        '(trigger.logID names the log it repeats) and answered like POST /webhook-test: a failed send is still a 200 with outcome failed. ' +
        'An archived webhook answers 409 NOT_ACTIVE. Needs WriteWebhook and ReadCredit.',
      tags: ['Webhooks'],
      headers: OrganizationHeaders,
      params: Type.Object({ webhookid: Uuid }),
      body: Type.Object({ creditID: Uuid, logID: Uuid }, { additionalProperties: false }),
      response: { 200: Type.Object({ status: Type.Literal('success'), data: SendResult }), ...failures(400, 401, 403, 404, 409) },
    },
  }, async (request) => {
    const organizationId = organizationOf(request).id
    const { webhookid } = request.params
    const { creditID, logID } = request.body
    const [webhook, log] = await Promise.all([queries.webhooks.get(organizationId, webhookid), queries.webhookSends.get(organizationId, logID)])
    if (webhook === null) throw notFound('webhook', webhookid)
    if (log === null || log.webhookId !== webhookid || log.creditId !== creditID) throw notFound('webhook log', logID)
    const origin = await originOf(services, organizationId, log)
    const sendId = newId()
    const source = await loadSource(services, {
      organizationId, creditId: creditID, orderId: log.orderId, approval: null,
      trigger: { Type: 'manual', OriginalType: origin.type, EventID: '', LogID: logID, OccurredAt: services.clock.now().toISOString() },
    })
    if (source === null) throw notFound('credit', creditID)
    if (webhook.archived) throw new AppError('NOT_ACTIVE', 'an archived webhook is not sent', { webhookId: webhookid })
    const report = await sender.send({
      sendId, organizationId, webhookId: webhookid, configuration: unsealed(webhook.configuration, services.dataKey),
      context: contextFor(templateContextOf({ ...source, trigger: { ...source.trigger, SendID: sendId } }), webhook), fromWebhook: fromWebhookLookup(source.values),
      trigger: { type: 'manual', eventId: null, logId: logID, originalSendId: origin.sendId, originalType: origin.type },
      creditId: creditID, orderId: log.orderId, messageId: origin.sendId,
      commandContext: commandContext(request),
    })
    if (report === null) throw new Error('a fresh manual send id was already used')
    const { sendId: newLogId, ...detail } = report
    return { status: 'success' as const, data: { logID: newLogId, ...detail } }
  })

  app.get('/credits/:creditid/webhook-logs', {
    config: { organization: 'header', permissions: ['ReadCredit'] },
    schema: {
      summary: 'Webhook sends for a credit (automatic and manual), newest first',
      tags: ['Credits'],
      headers: OrganizationHeaders,
      params: Type.Object({ creditid: Uuid }),
      querystring: Type.Object(PageQuery.properties, { additionalProperties: false }),
      response: { 200: Type.Object({ status: Type.Literal('success'), data: Type.Array(SendLog), pagination: Pagination }), ...failures(400, 401, 403, 404) },
    },
  }, async (request) => {
    const organizationId = organizationOf(request).id
    const { creditid } = request.params
    if (await queries.credits.get(organizationId, creditid) === null) throw notFound('credit', creditid)
    const { page, limit } = request.query
    const { items, total } = await queries.webhookSends.byCredit(creditid, { organizationId, offset: (page - 1) * limit, limit })
    return { status: 'success' as const, data: items.map(sendLogView), pagination: pagination(page, limit, total) }
  })
}

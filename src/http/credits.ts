import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { creditAggregate, type CreditCommand } from '../commands/credit.js'
import { creditRequestHash, disburseCredit, keyedCreditId, loadCreditIn, requestCredit, requestCreditOnce } from '../commands/lending.js'
import { profileAggregate } from '../commands/profile.js'
import { debtorOfProfile } from '../projections/credits.js'
import type { Services } from '../services.js'
import { dayOf } from '../shared/amortization.js'
import { notFound } from '../shared/errors.js'
import { newId } from '../shared/ids.js'
import { creditStates, rejectionReasonWithoutScore } from '../shared/lending.js'
import { commandContext, organizationOf, principalOf } from './context.js'
import { Credit, CreditSummary, creditSummaryView, creditView, Installment, installmentView } from './creditViews.js'
import { failures, IdempotencyKeyHeader, MoneyInput, OrganizationHeaders, PageQuery, Pagination, pagination, ProseText, Timestamp, Uuid } from './schemas.js'

const CreditParams = Type.Object({ creditid: Uuid })
const One = Type.Object({ status: Type.Literal('success'), data: Type.Object({ credit: Credit }) })
const Reason = Type.Object({ reason: ProseText({ maxLength: 500 }) }, { additionalProperties: false })

const RecordedEvent = Type.Object({
  id: Uuid,
  type: Type.String(),
  revision: Type.Integer({ description: '0-based number of the event in the credit\'s stream' }),
  position: Type.Integer({ description: 'position in the global log' }),
  data: Type.Object({}, { additionalProperties: true }),
  metadata: Type.Object({
    organizationId: Type.Union([Type.String(), Type.Null()]),
    actorId: Type.Union([Type.String(), Type.Null()]),
    correlationId: Type.String(),
    causationId: Type.Union([Type.String(), Type.Null()]),
    occurredAt: Timestamp,
    schemaVersion: Type.Integer(),
  }),
  recordedAt: Timestamp,
})

/** Credits: request, the state machine's commands, reads, and the auditor's views (events, asOf). */
export const creditRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const { queries, commands, clock } = services
  const today = () => dayOf(clock.now())

  const load = async (organizationId: string, creditId: string) => {
    const doc = await queries.credits.get(organizationId, creditId)
    if (doc === null) throw notFound('credit', creditId)
    return doc
  }
  /** The automatic score is an analysis: shown only to a caller holding ReadAnalysis (null otherwise). */
  const scoresVisible = (request: FastifyRequest) => organizationOf(request).permissions.has('ReadAnalysis')
  const respond = async (request: FastifyRequest, creditId: string) => {
    const doc = await load(organizationOf(request).id, creditId)
    return { status: 'success' as const, data: { credit: creditView(doc, doc.debtor, today(), scoresVisible(request)) } }
  }

  app.post('/credits', {
    config: { organization: 'header', permissions: ['WriteCredit'] },
    schema: {
      summary: 'Request a credit (state Solicitado) with its French amortization schedule',
      description: 'The debtor is an active profile of the organization; the line must be active. `principal` and `term` (months) default to ' +
        'the line\'s and must fall inside its bounds; the rate comes from the line. Without `firstDueDate` the first installment falls due ' +
        'one month after disbursement (due dates are set again at disbursement).\n\n' +
        'With an `Idempotency-Key` header the request can be sent again safely (a retry after a timeout): the first creates the credit (201), ' +
        'the same request again answers 200 with that credit as it is now, and another request with the Key 409 IDEMPOTENCY_KEY_REUSED; ' +
        'concurrent duplicates create one credit. Keys are per organization and kept for good.',
      tags: ['Credits'],
      headers: Type.Object({
        ...OrganizationHeaders.properties,
        'idempotency-key': IdempotencyKeyHeader,
      }, { additionalProperties: true }),
      body: Type.Object({
        creditLineId: Uuid,
        debtorId: Uuid,
        principal: Type.Optional(MoneyInput('decimal string; default: the line\'s principalDefault')),
        term: Type.Optional(Type.Integer({ minimum: 1, description: 'months; default: the line\'s timeDefault' })),
        firstDueDate: Type.Optional(Type.String({ format: 'date', description: 'YYYY-MM-DD, after today and at most 12 months after it (the first installment carries the whole period\'s interest); the last installment must fall by 9999-12-31' })),
      }, { additionalProperties: false }),
      response: { 201: One, 200: Type.Object(One.properties, { description: 'the credit this Idempotency-Key already created' }), ...failures(400, 401, 403, 409) },
    },
  }, async (request, reply) => {
    const organizationId = organizationOf(request).id
    const key = request.headers['idempotency-key']
    const { creditLineId, debtorId, principal, term, firstDueDate } = request.body
    const input = {
      creditId: key === undefined ? newId() : keyedCreditId(organizationId, key), organizationId, creditLineId, debtorId, now: clock.now().toISOString(),
      ...(principal === undefined ? {} : { principal }), ...(term === undefined ? {} : { term }), ...(firstDueDate === undefined ? {} : { firstDueDate }),
    }
    const { created, position } = key === undefined
      ? { created: true, position: (await requestCredit(commands, input, commandContext(request))).position }
      : await requestCreditOnce(commands, { ...input, idempotency: { key, requestHash: creditRequestHash(input) } }, commandContext(request))
    await services.settle(position)
    return reply.code(created ? 201 : 200).send(await respond(request, input.creditId))
  })

  app.get('/credits', {
    config: { organization: 'header', permissions: ['ReadCredit'] },
    schema: {
      summary: 'Credits of the organization, newest first (without installments)',
      tags: ['Credits'],
      headers: OrganizationHeaders,
      querystring: Type.Object({
        ...PageQuery.properties,
        state: Type.Optional(Type.Enum(creditStates)),
        debtorId: Type.Optional(Uuid),
        creditLineId: Type.Optional(Uuid),
      }, { additionalProperties: false }),
      response: { 200: Type.Object({ status: Type.Literal('success'), data: Type.Array(CreditSummary), pagination: Pagination }), ...failures(400, 401, 403) },
    },
  }, async (request) => {
    const { page, limit, state, debtorId, creditLineId } = request.query
    const { items, total } = await queries.credits.list({
      organizationId: organizationOf(request).id, offset: (page - 1) * limit, limit,
      ...(state === undefined ? {} : { state }), ...(debtorId === undefined ? {} : { debtorId }), ...(creditLineId === undefined ? {} : { creditLineId }),
    })
    const day = today()
    const withScores = scoresVisible(request)
    const views = items.map((doc) => creditSummaryView(doc, doc.debtor, day, withScores))
    return { status: 'success' as const, data: views, pagination: pagination(page, limit, total) }
  })

  app.get('/credits/:creditid', {
    config: { organization: 'header', permissions: ['ReadCredit'] },
    schema: {
      summary: 'One credit with debtor summary, installments and balances',
      description: 'With `asOf` the credit is rebuilt from its events up to that moment (for auditors): its state, installments and balances ' +
        'then, and the debtor\'s profile as it stood then; arrears are counted as of that day (a moment after now reads as now).',
      tags: ['Credits'],
      headers: OrganizationHeaders,
      params: CreditParams,
      querystring: Type.Object({ asOf: Type.Optional(Timestamp) }, { additionalProperties: false }),
      response: { 200: One, ...failures(400, 401, 403, 404) },
    },
  }, async (request) => {
    const organizationId = organizationOf(request).id
    const { asOf } = request.query
    if (asOf === undefined) return respond(request, request.params.creditid)
    const moment = new Date(asOf)
    const { state } = await commands.load(creditAggregate, request.params.creditid, { asOf: moment })
    if (state.status === 'none' || state.organizationId !== organizationId) throw notFound('credit', request.params.creditid)
    const { state: profile } = await commands.load(profileAggregate, state.debtorId, { asOf: moment })
    const debtor = profile.exists
      ? debtorOfProfile({ profileId: profile.profileId, organizationId: profile.organizationId, type: profile.profileType, natural: profile.natural, legal: profile.legal, files: { ...profile.files } })
      : null
    // Nothing has happened after now: a later moment reads as now, not as a forecast of arrears.
    const arrearsDay = dayOf(moment < clock.now() ? moment : clock.now())
    return { status: 'success' as const, data: { credit: creditView(state, debtor, arrearsDay, scoresVisible(request)) } }
  })

  app.get('/credits/:creditid/installments', {
    config: { organization: 'header', permissions: ['ReadCredit'] },
    schema: {
      summary: 'The credit\'s installment schedule with what is paid and owed',
      tags: ['Credits'],
      headers: OrganizationHeaders,
      params: CreditParams,
      response: { 200: Type.Object({ status: Type.Literal('success'), data: Type.Object({ installments: Type.Array(Installment) }) }), ...failures(401, 403, 404) },
    },
  }, async (request) => {
    const doc = await load(organizationOf(request).id, request.params.creditid)
    const day = today()
    return { status: 'success' as const, data: { installments: doc.installments.map((i) => installmentView(doc, i, day)) } }
  })

  app.get('/credits/:creditid/events', {
    config: { organization: 'header', permissions: ['ReadCredit'] },
    schema: {
      summary: 'The credit\'s event stream in order, with metadata (for auditors)',
      description: 'The data of a CreditScored event (the automatic score) is empty unless the caller holds ReadAnalysis.',
      tags: ['Credits'],
      headers: OrganizationHeaders,
      params: CreditParams,
      querystring: Type.Object({
        from: Type.Integer({ minimum: 0, default: 0, description: 'first revision' }),
        limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }),
      }, { additionalProperties: false }),
      response: {
        200: Type.Object({
          status: Type.Literal('success'),
          data: Type.Object({ events: Type.Array(RecordedEvent) }),
          pagination: Type.Object({ from: Type.Integer(), limit: Type.Integer(), next: Type.Union([Type.Integer(), Type.Null()]) }),
        }),
        ...failures(400, 401, 403, 404),
      },
    },
  }, async (request) => {
    const organizationId = organizationOf(request).id
    await loadCreditIn(commands, organizationId, request.params.creditid)
    const { from, limit } = request.query
    const events = []
    for await (const event of services.history(`${creditAggregate.streamType}-${request.params.creditid}`, { from, limit: limit + 1 })) events.push(event)
    // A CreditScored event stays in place (revisions stay contiguous), its analysis only for a caller holding ReadAnalysis.
    const withScores = scoresVisible(request)
    const page = events.slice(0, limit).map((event) => {
      if (withScores) return event
      if (event.type === 'CreditScored') return { ...event, data: {} }
      // An automatic rejection recorded before stop 39 names the score in its reason.
      return event.type === 'CreditRejected' ? { ...event, data: { ...event.data, reason: rejectionReasonWithoutScore(event.data.reason) } } : event
    })
    return {
      status: 'success' as const,
      data: { events: page },
      pagination: { from, limit, next: events.length > limit ? from + limit : null },
    }
  })

  const transition = (summary: string) => ({
    config: { organization: 'header' as const, permissions: ['WriteCredit' as const] },
    schema: {
      summary,
      description: 'A move the state machine does not allow answers 409 INVALID_TRANSITION with `from`, `to` and `allowed`, and changes nothing.',
      tags: ['Credits'],
      headers: OrganizationHeaders,
      params: CreditParams,
      response: { 200: One, ...failures(400, 401, 403, 404, 409) },
    },
  })
  const withBody = <B extends object>(options: ReturnType<typeof transition>, body: B) => ({ ...options, schema: { ...options.schema, body } })
  /** Runs a state-machine command on a credit of the caller's organization and answers with the credit after it. */
  const run = async (request: FastifyRequest, creditId: string, command: CreditCommand) => {
    const organizationId = organizationOf(request).id
    await loadCreditIn(commands, organizationId, creditId)
    await services.execute(creditAggregate, creditId, command, commandContext(request))
    return respond(request, creditId)
  }
  const actor = (request: FastifyRequest) => principalOf(request).id

  app.post('/credits/:creditid/approve', transition('Approve a requested credit (Solicitado → Aprobado; no body)'), async (request) =>
    run(request, request.params.creditid, { type: 'ApproveCredit', by: actor(request), now: clock.now().toISOString() }))

  app.post('/credits/:creditid/reject', withBody(transition('Reject a requested credit (Solicitado → Rechazado)'), Reason), async (request) =>
    run(request, request.params.creditid, { type: 'RejectCredit', reason: request.body.reason, by: actor(request), now: clock.now().toISOString() }))

  app.post('/credits/:creditid/cancel', withBody(transition('Cancel a credit before disbursement (Solicitado or Aprobado → Anulado)'), Reason), async (request) =>
    run(request, request.params.creditid, { type: 'CancelCredit', reason: request.body.reason, by: actor(request), now: clock.now().toISOString() }))

  const Disbursement = Type.Object({
    method: Type.String({ minLength: 1, maxLength: 100, description: 'one of the line\'s disbursementMethods (any when the line names none)' }),
    reference: Type.Optional(Type.String({ maxLength: 200, description: 'e.g. the bank transfer reference' })),
  }, { additionalProperties: false })
  const disbursement = transition('Disburse an approved credit (Aprobado → Desembolsado); appends CreditDisbursed, which fires onDeliveredWebhooks')

  app.post('/credits/:creditid/disburse', withBody(disbursement, Disbursement), async (request) => {
    const organizationId = organizationOf(request).id
    const result = await disburseCredit(commands, {
      creditId: request.params.creditid, organizationId, method: request.body.method, reference: request.body.reference ?? '',
      taxes: await queries.taxes.ratesFor(organizationId, ['CREDIT']), by: actor(request), now: clock.now().toISOString(), log: request.log,
    }, commandContext(request))
    await services.settle(result.position)
    return respond(request, request.params.creditid)
  })
}

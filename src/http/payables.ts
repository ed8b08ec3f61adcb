import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type, type Static } from 'typebox'
import { paymentOrderAggregate } from '../commands/paymentOrder.js'
import { approvePaymentOrder, createPaymentOrder, loadOrderIn } from '../commands/payments.js'
import type { PaymentOrderState } from '../events/paymentOrderState.js'
import type { OrderApplication } from '../projections/paymentOrders.js'
import type { Services } from '../services.js'
import { AppError, notFound } from '../shared/errors.js'
import { isOrderTarget } from '../shared/installments.js'
import { orderStatuses, paymentProviderNames, ZERO_INSTALLMENT } from '../shared/lending.js'
import { money } from '../shared/money.js'
import { commandContext, organizationOf, principalOf } from './context.js'
import { failures, MoneyInput, MoneyString, OrganizationHeaders, PageQuery, Pagination, pagination, ProseText, Timestamp, Uuid } from './schemas.js'

const InstallmentRef = Type.String({
  pattern: `^(${ZERO_INSTALLMENT}|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})$`,
  description: 'an installment id, or `zero`: a full-flow payment that pays the credit off (the payoff on the day weighed, see GET /v1/payables/{creditid}/payoff; InstallmentNumber 0)',
})
const InstallmentParams = Type.Object({ creditid: Uuid, installmentid: InstallmentRef })
const OrderParams = Type.Object({ creditid: Uuid, installmentid: InstallmentRef, orderid: Uuid })

const STATUSES = 'Statuses: `pending` (created; a `manual` order waits here for approval) → `processing` (a gateway provider took it) → ' +
  '`completed` (approved through the API or by the provider; the payment is then applied to the credit) or `failed` (rejected through the API, ' +
  'or declined by the provider, with ErrorMessage). `completed` and `failed` are final: approving or rejecting them again answers 409 INVALID_TRANSITION.'

const OrderCreated = Type.Object({
  ID: Uuid,
  CreditID: Uuid,
  InstallmentID: Type.String(),
  InstallmentNumber: Type.Integer({ description: '0 for a `zero` order' }),
  Amount: MoneyString,
  Type: Type.String({ description: 'payment' }),
  Provider: Type.String({ description: paymentProviderNames.join(' | ') }),
  Status: Type.Enum(orderStatuses),
  CreatedAt: Timestamp,
  CreatorID: Type.String(),
  CollectionCosts: MoneyString,
})

const Allocation = Type.Object({
  installmentId: Type.String(), number: Type.Integer(), principal: MoneyString, interest: MoneyString, amount: MoneyString, paidInFull: Type.Boolean(),
})

export const PaymentOrder = Type.Object({
  ...OrderCreated.properties,
  Method: Type.String(),
  UpdatedAt: Timestamp,
  CompletedAt: Type.Union([Timestamp, Type.Null()], { description: 'set when completed' }),
  ApproverID: Type.String({ description: 'the approving user or client; empty until approved, and when the provider completed it' }),
  TransactionReference: Type.String(),
  PaymentReference: Type.String(),
  ErrorMessage: Type.String({ description: 'empty when no error' }),
  RetryCount: Type.Integer({ description: 'resubmissions to the provider (the built-in providers never resubmit)' }),
  GatewayOption: Type.String(),
  OverrideMethod: Type.String(),
  Key: Type.String({ description: 'the idempotency key of the creation request' }),
  PaymentDate: Timestamp,
  Metadata: Type.Object({
    originalAmount: MoneyString,
    exchangeRate: Type.String({ description: 'decimal string; orders are in the credit\'s currency, so 1' }),
    currency: Type.String(),
    processingTime: Type.Integer({ description: 'milliseconds from creation to completion or failure; 0 while undecided' }),
  }),
  Application: Type.Union([Type.Null(), Type.Object({
    appliedAmount: MoneyString, unappliedAmount: MoneyString, appliedAt: Timestamp, allocations: Type.Array(Allocation),
    payoff: Type.Optional(Type.Object({
      day: Type.String({ format: 'date', description: 'the day the payoff was weighed on: the order\'s PaymentDate, or a later due date on or before the order\'s creation (docs/credits.md)' }),
      waivers: Type.Array(Type.Object({ installmentId: Type.String(), number: Type.Integer(), interest: MoneyString }), {
        description: 'interest of periods not accrued by that day, forgiven per installment',
      }),
    }, { description: 'present when a `zero` order covered the payoff (docs/credits.md, "Paying a credit off")' })),
  })], { description: 'how the completed payment was applied to the credit (null until the payment applier has run)' }),
  Taxes: Type.Array(Type.Object({
    TaxID: Uuid,
    Name: Type.String(),
    Type: Type.String({ description: 'VAT | INCOME | RETENTION | OTHER' }),
    AppliesTo: Type.String({ description: 'PAYMENT or FEE: what the tax names; its base is the collection costs either way' }),
    Base: MoneyString,
    Percentage: Type.String({ description: 'decimal string' }),
    Amount: MoneyString,
    Currency: Type.String(),
  }), { description: 'taxes applied to the collection costs when the order was created (docs/taxes.md); empty without collection costs' }),
})

type CreatedOrder = NonNullable<PaymentOrderState['order']>

const createdOrder = (state: PaymentOrderState): CreatedOrder => {
  if (state.order === null) throw new AppError('INTERNAL', 'payment order has no creation data')
  return state.order
}

const createdView = (order: CreatedOrder, status: PaymentOrderState['status']): Static<typeof OrderCreated> => ({
  ID: order.orderId, CreditID: order.creditId, InstallmentID: order.installmentId, InstallmentNumber: order.installmentNumber, Amount: order.amount,
  Type: order.type, Provider: order.provider, Status: status === 'none' ? 'pending' : status, CreatedAt: order.createdAt, CreatorID: order.creatorId,
  CollectionCosts: order.collectionCosts,
})

/**
 * Every approval answers one of these. Not `{ ...createdView(…), Method, … }`:
 * in V8 (Node 20) each key a spread literal adds beyond the spread object's
 * costs about a microsecond (the copy's hidden class is made anew each
 * time); that form took 25 µs per view, this one well under one.
 */
export const orderView = (state: PaymentOrderState, application: OrderApplication | null): Static<typeof PaymentOrder> => {
  const order = createdOrder(state)
  return Object.assign(createdView(order, state.status), {
    Method: order.method, UpdatedAt: state.updatedAt, CompletedAt: state.status === 'completed' ? state.completedAt : null,
    ApproverID: state.approverId, TransactionReference: state.transactionReference, PaymentReference: state.paymentReference,
    ErrorMessage: state.errorMessage, RetryCount: 0, GatewayOption: order.gatewayOption, OverrideMethod: order.overrideMethod, Key: order.key,
    PaymentDate: order.paymentDate,
    Metadata: { originalAmount: order.amount, exchangeRate: '1', currency: order.currency, processingTime: state.processingTime },
    Application: application,
    Taxes: state.taxes.map((tax) => ({
      TaxID: tax.taxId, Name: tax.name, Type: tax.type, AppliesTo: tax.appliesTo, Base: tax.base, Percentage: tax.percentage, Amount: tax.amount,
      Currency: tax.currency,
    })),
  })
}

/** Payment orders against installments of a credit (the interface's /payables routes). */
export const payableRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const { queries, commands, clock } = services

  const loadView = async (scope: { organizationId: string; creditId: string; installmentId: string; orderId: string }) => {
    const doc = await queries.paymentOrders.getIn(scope)
    if (doc === null) throw notFound('payment order', scope.orderId)
    return orderView(doc, doc.application)
  }

  app.post('/payables/:creditid/installments/:installmentid/orders', {
    config: { organization: 'header', permissions: ['WriteOrder'] },
    schema: {
      summary: 'Create a payment order for an installment (or `zero`: the payoff) and start its provider\'s flow',
      description: 'The credit must be Desembolsado and the installment unpaid. `Amount` defaults to what the installment owes and may not ' +
        'exceed it; for `zero` it is the payoff on the day weighed (the value date `Date`, or a later due date the order is made after; ' +
        'GET /v1/payables/{creditid}/payoff quotes it), and anything ' +
        'else is refused (0 when the payoff is 0 or less: the order settles the credit and what it was worth beyond the debt is unapplied, owed back). It is applied to the debt, `CollectionCosts` are charged on top. `Provider` defaults to the line\'s. ' +
        '`Key` is an idempotency key per credit: the same Key with the same body answers 200 with the order it created, with another body ' +
        '409 IDEMPOTENCY_KEY_REUSED; concurrent duplicates create one order.\n\n' + STATUSES,
      tags: ['Payment orders'],
      headers: OrganizationHeaders,
      params: InstallmentParams,
      body: Type.Object({
        Amount: Type.Optional(MoneyInput('positive decimal string within the currency\'s minor unit')),
        Provider: Type.Optional(Type.Enum(paymentProviderNames)),
        Date: Type.Optional(Type.String({ format: 'date-time', description: 'value date of the payment, its UTC day from the disbursement day to today; default: now' })),
        OverrideMethod: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'one of the line\'s gatewayMethods' })),
        Key: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'idempotency key, unique per credit' })),
        GatewayOption: Type.Optional(Type.String({ maxLength: 100 })),
        CollectionCosts: Type.Optional(MoneyInput('collection costs charged on top of Amount; default 0')),
      }, { additionalProperties: false }),
      response: {
        201: Type.Object({ order: OrderCreated }, { description: 'created' }),
        200: Type.Object({ order: OrderCreated }, { description: 'the order this Key already created' }),
        ...failures(400, 401, 403, 404, 409),
      },
    },
  }, async (request, reply) => {
    const { creditid: creditId, installmentid: installmentId } = request.params
    const organizationId = organizationOf(request).id
    const costs = request.body.CollectionCosts
    // Only collection costs are taxed: an order without them reads no taxes.
    const taxes = costs !== undefined && money(costs).gt(0) ? await queries.taxes.ratesFor(organizationId, ['PAYMENT', 'FEE']) : []
    const created = await createPaymentOrder(commands, {
      organizationId, creditId, installmentId, body: request.body, taxes, creatorId: principalOf(request).id, now: clock.now().toISOString(),
    }, commandContext(request))
    await services.settle(created.position)
    return reply.code(created.created ? 201 : 200).send({ order: createdView(createdOrder(created.order), created.order.status) })
  })

  app.get('/payables/:creditid/installments/:installmentid/orders', {
    config: { organization: 'header', permissions: ['ReadOrder'] },
    schema: {
      summary: 'The payment orders of an installment (or of `zero`), oldest first',
      description: STATUSES,
      tags: ['Payment orders'],
      headers: OrganizationHeaders,
      params: InstallmentParams,
      querystring: Type.Object({ ...PageQuery.properties, status: Type.Optional(Type.Enum(orderStatuses)) }, { additionalProperties: false }),
      response: { 200: Type.Object({ status: Type.Literal('success'), data: Type.Array(PaymentOrder), pagination: Pagination }), ...failures(400, 401, 403, 404) },
    },
  }, async (request) => {
    const organizationId = organizationOf(request).id
    const { creditid: creditId, installmentid: installmentId } = request.params
    const credit = await queries.credits.get(organizationId, creditId)
    if (credit === null) throw notFound('credit', creditId)
    if (!isOrderTarget(credit.installments, installmentId)) throw notFound('installment', installmentId)
    const { page, limit, status } = request.query
    const { items, total } = await queries.paymentOrders.listForInstallment({
      organizationId, creditId, installmentId, offset: (page - 1) * limit, limit, ...(status === undefined ? {} : { status }),
    })
    return { status: 'success' as const, data: items.map((doc) => orderView(doc, doc.application)), pagination: pagination(page, limit, total) }
  })

  app.get('/payables/:creditid/installments/:installmentid/orders/:orderid', {
    config: { organization: 'header', permissions: ['ReadOrder'] },
    schema: {
      summary: 'One payment order (the order object itself, not wrapped)',
      description: STATUSES,
      tags: ['Payment orders'],
      headers: OrganizationHeaders,
      params: OrderParams,
      response: { 200: PaymentOrder, ...failures(401, 403, 404) },
    },
  }, async (request) => {
    const { creditid: creditId, installmentid: installmentId, orderid: orderId } = request.params
    return loadView({ organizationId: organizationOf(request).id, creditId, installmentId, orderId })
  })

  const decision = (summary: string) => ({
    config: { organization: 'header' as const, permissions: ['ApproveOrder' as const] },
    schema: {
      summary,
      description: STATUSES,
      tags: ['Payment orders'],
      headers: OrganizationHeaders,
      params: OrderParams,
      response: { 200: Type.Object({ order: PaymentOrder }), ...failures(400, 401, 403, 404, 409) },
    },
  })
  const rejection = decision('Reject a payment order: Status failed with the reason as ErrorMessage')

  app.post('/payables/:creditid/installments/:installmentid/orders/:orderid/approve', decision(
    'Approve a payment order (no body): Status completed, ApproverID and CompletedAt set; fires onOrderWebhooks and is applied to the credit',
  ), async (request) => {
    const scope = { organizationId: organizationOf(request).id, creditId: request.params.creditid, installmentId: request.params.installmentid, orderId: request.params.orderid }
    const approved = await approvePaymentOrder(commands, scope, { approverId: principalOf(request).id, now: clock.now().toISOString() }, commandContext(request))
    await services.settle(approved.position)
    return { order: await loadView(scope) }
  })

  app.post('/payables/:creditid/installments/:installmentid/orders/:orderid/reject', {
    ...rejection,
    schema: { ...rejection.schema, body: Type.Object({ reason: ProseText({ maxLength: 500 }) }, { additionalProperties: false }) },
  }, async (request) => {
    const scope = { organizationId: organizationOf(request).id, creditId: request.params.creditid, installmentId: request.params.installmentid, orderId: request.params.orderid }
    await loadOrderIn(commands, scope)
    await services.execute(paymentOrderAggregate, scope.orderId, {
      type: 'RejectPaymentOrder', reason: request.body.reason, actorId: principalOf(request).id, now: clock.now().toISOString(),
    }, commandContext(request))
    return { order: await loadView(scope) }
  })
}

import t from 'tap'
import { paymentOrderAggregate, type PaymentOrderCommand } from '../../src/commands/paymentOrder.js'
import type { PaymentOrderCreated } from '../../src/events/paymentOrder.js'
import type { PaymentOrderStreamEvent as PaymentOrderEvent } from '../../src/events/paymentOrderState.js'
import { orderStatuses, orderTransitions, type OrderStatus } from '../../src/shared/lending.js'
import { scenario } from '../helpers/deciders.js'
import { refusedAsInvalidTransition } from '../helpers/transitions.js'

const now = '2026-03-01T10:00:00.000Z'
const later = '2026-03-01T10:00:01.500Z'
const order = scenario(paymentOrderAggregate)
const fields: PaymentOrderCreated['data'] = {
  orderId: 'ord1', organizationId: 'o1', creditId: 'c1', creditLineId: 'l1', installmentId: 'i1', installmentNumber: 1, amount: '88848.79',
  currency: 'COP', collectionCosts: '0.00', type: 'payment', provider: 'sandbox', method: 'pse', gatewayOption: '', overrideMethod: '', key: 'k1',
  requestHash: 'h1', paymentDate: now, creatorId: 'u1', requireDistinctApprover: false, createdAt: now,
}
const created: PaymentOrderEvent = { type: 'PaymentOrderCreated', data: fields }
const submitted: PaymentOrderEvent = { type: 'PaymentOrderSubmitted', data: {
  orderId: 'ord1', organizationId: 'o1', provider: 'sandbox', transactionReference: 'TX', paymentReference: 'PAY', pollAfter: later, submittedAt: now,
} }
const decided = (history: PaymentOrderEvent[], command: PaymentOrderCommand) => [...history, ...paymentOrderAggregate.decide(command, order.given(...history).state)]
const historyOf: Record<OrderStatus, PaymentOrderEvent[]> = {
  pending: [created],
  processing: [created, submitted],
  completed: decided([created], { type: 'ApprovePaymentOrder', approverId: 'u2', lineRequiresDistinctApprover: false, now }),
  failed: decided([created], { type: 'RejectPaymentOrder', reason: 'no funds', actorId: 'u2', now }),
}

t.test('the same Key and body is answered with the existing order; another body is refused', async (t) => {
  order.given().when({ type: 'CreatePaymentOrder', order: fields, taxes: [] }).then(t, [created])
  order.given(created).when({ type: 'CreatePaymentOrder', order: fields, taxes: [] }).thenNothing(t)
  order.given(created).when({ type: 'CreatePaymentOrder', order: { ...fields, requestHash: 'h2', amount: '1.00' }, taxes: [] }).thenRefused(t, 'IDEMPOTENCY_KEY_REUSED')
})

t.test('approval and rejection follow the status moves; final statuses refuse with INVALID_TRANSITION', async (t) => {
  const commands: Array<[OrderStatus, PaymentOrderCommand]> = [
    ['completed', { type: 'ApprovePaymentOrder', approverId: 'u2', lineRequiresDistinctApprover: false, now: later }],
    ['failed', { type: 'RejectPaymentOrder', reason: 'duplicate', actorId: 'u2', now: later }],
  ]
  for (const from of orderStatuses) {
    for (const [to, command] of commands) {
      const state = order.given(...historyOf[from]).state
      t.equal(state.status, from)
      if (orderTransitions[from].includes(to)) {
        const events = paymentOrderAggregate.decide(command, state)
        t.equal(events.reduce(paymentOrderAggregate.evolve, state).status, to, `${from} → ${to}`)
      } else {
        refusedAsInvalidTransition(t, () => paymentOrderAggregate.decide(command, state), { from, to, allowed: orderTransitions[from] })
      }
    }
  }
})

t.test('approval records approver, completion time and processing time', async (t) => {
  const [event] = paymentOrderAggregate.decide({ type: 'ApprovePaymentOrder', approverId: 'u2', lineRequiresDistinctApprover: false, now: later }, order.given(created).state)
  t.match(event?.data, { approverId: 'u2', approvedBy: 'principal', completedAt: later, processingTime: 1500, amount: '88848.79', creditId: 'c1' })
})

t.test('a line that demands it refuses approval by the order\'s creator', async (t) => {
  const strict: PaymentOrderEvent = { type: 'PaymentOrderCreated', data: { ...fields, requireDistinctApprover: true } }
  order.given(strict).when({ type: 'ApprovePaymentOrder', approverId: 'u1', lineRequiresDistinctApprover: false, now }).thenRefused(t, 'APPROVER_IS_CREATOR')
  t.equal(paymentOrderAggregate.decide({ type: 'ApprovePaymentOrder', approverId: 'u2', lineRequiresDistinctApprover: false, now }, order.given(strict).state).length, 1)
  t.equal(paymentOrderAggregate.decide({ type: 'ApprovePaymentOrder', approverId: 'u1', lineRequiresDistinctApprover: false, now }, order.given(created).state).length, 1,
    'without the demand the creator may approve')
  order.given(created).when({ type: 'ApprovePaymentOrder', approverId: 'u1', lineRequiresDistinctApprover: true, now }).thenRefused(t, 'APPROVER_IS_CREATOR')
  t.equal(paymentOrderAggregate.decide({ type: 'ApprovePaymentOrder', approverId: 'u2', lineRequiresDistinctApprover: true, now }, order.given(created).state).length, 1,
    'a demand the line took on after the order was created holds too')
})

t.test('a provider submits pending orders once and its outcome settles only undecided ones', async (t) => {
  const submit: PaymentOrderCommand = { type: 'SubmitPaymentOrder', transactionReference: 'TX', paymentReference: 'PAY', pollAfter: later, now }
  order.given(created).when(submit).then(t, [submitted])
  order.given(created, submitted).when(submit).thenNothing(t, 'a repeated submission changes nothing')
  const settle: PaymentOrderCommand = { type: 'SettlePaymentOrder', outcome: 'completed', errorMessage: '', paymentReference: 'PAY', now: later }
  const [approved] = paymentOrderAggregate.decide(settle, order.given(created, submitted).state)
  t.match(approved, { type: 'PaymentOrderApproved', data: { approverId: '', approvedBy: 'provider', paymentReference: 'PAY' } })
  order.given(...historyOf.completed).when(settle).thenNothing(t, 'an outcome after an API decision changes nothing')
  const [declined] = paymentOrderAggregate.decide({ ...settle, outcome: 'failed', errorMessage: 'declined' }, order.given(created, submitted).state)
  t.match(declined, { type: 'PaymentOrderFailed', data: { errorMessage: 'declined', failedBy: 'provider' } })
  order.given().when(submit).thenRefused(t, 'NOT_FOUND')
})

t.test('taxes on the collection costs are recorded with the order, once each, and not again for a repeated Key', async (t) => {
  const rate = (taxId: string, percentage: string, appliesTo: Array<'CREDIT' | 'FEE' | 'PAYMENT'>) =>
    ({ taxId, organizationId: 'o1', name: taxId.toUpperCase(), type: 'VAT' as const, isActive: true, percentage, appliesTo, minimumAmount: '0' })
  const taxes = [rate('iva', '19', ['FEE', 'PAYMENT']), rate('ica', '0.414', ['PAYMENT']), rate('fee', '4', ['FEE']), rate('stamp', '1', ['CREDIT'])]
  const withCosts = { ...fields, collectionCosts: '12345.67' }
  const events = paymentOrderAggregate.decide({ type: 'CreatePaymentOrder', order: withCosts, taxes }, paymentOrderAggregate.initialState())
  // 12 345.67 × 19 % = 2 345.68 (IVA names FEE and PAYMENT: once); × 0.414 % = 51.11; the FEE-only tax × 4 % = 493.83; CREDIT is not an order's
  t.same(events.map((e) => (e.type === 'TaxApplied' ? [e.data.taxId, e.data.appliesTo, e.data.base, e.data.amount] : e.type)), [
    'PaymentOrderCreated', ['iva', 'PAYMENT', '12345.67', '2345.68'], ['ica', 'PAYMENT', '12345.67', '51.11'], ['fee', 'FEE', '12345.67', '493.83'],
  ])
  const state = order.given(...events).state
  t.same(state.taxes.map((tax) => [tax.taxId, tax.subjectId, tax.appliedAt]), [['iva', 'ord1', now], ['ica', 'ord1', now], ['fee', 'ord1', now]])
  order.given(...events).when({ type: 'CreatePaymentOrder', order: withCosts, taxes }).thenNothing(t)
  order.given().when({ type: 'CreatePaymentOrder', order: fields, taxes }).then(t, [created], 'no collection costs, no taxes')
})

t.test('the service withdraws only an order no provider has taken: pending fails, by the service; any other status decides nothing', async (t) => {
  order.given(...historyOf.pending).when({ type: 'WithdrawPaymentOrder', reason: 'nothing is owed on this installment', now: later }).then(t, [{
    type: 'PaymentOrderFailed', data: {
      orderId: fields.orderId, organizationId: fields.organizationId, creditId: fields.creditId, errorMessage: 'nothing is owed on this installment',
      failedBy: 'service', actorId: '', processingTime: 1500, failedAt: later,
    },
  }])
  for (const status of ['processing', 'completed', 'failed'] as const) {
    order.given(...historyOf[status]).when({ type: 'WithdrawPaymentOrder', reason: 'x', now: later }).thenNothing(t, `${status}: nothing withdrawn`)
  }
  order.given().when({ type: 'WithdrawPaymentOrder', reason: 'x', now: later }).thenRefused(t, 'NOT_FOUND')
})

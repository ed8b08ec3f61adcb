import t from 'tap'
import { creditAggregate, type CreditCommand } from '../../src/commands/credit.js'
import type { CreditStreamEvent as CreditEvent } from '../../src/events/creditState.js'
import { AppError } from '../../src/shared/errors.js'
import { creditStates, creditTransitions, type CreditStateName } from '../../src/shared/lending.js'
import { scenario } from '../helpers/deciders.js'
import { refusedAsInvalidTransition } from '../helpers/transitions.js'

const now = '2026-03-01T10:00:00.000Z'
const later = '2026-03-05T10:00:00.000Z'
/** A value date after the last installment fell due: a `zero` order then owes the whole schedule. */
const afterMaturity = '2026-07-01T10:00:00.000Z'
const credit = scenario(creditAggregate)

const request: CreditCommand = {
  type: 'RequestCredit', creditId: 'c1', organizationId: 'o1', creditLineId: 'l1', creditLineName: 'Consumo', debtorId: 'p1', principal: '1000000',
  term: 3, rate: '12', rateType: 'FIXED_NOMINAL', currency: 'COP', availableDays: 0, requestedFirstDueDate: null,
  bounds: { principalMin: '500000', principalMax: '2000000', timeMin: 3, timeMax: 12 }, now,
}
const decide = (events: CreditEvent[], command: CreditCommand) => creditAggregate.decide(command, credit.given(...events).state)
const requested = decide([], request)
const approved = [...requested, ...decide(requested, { type: 'ApproveCredit', by: 'u1', now })]
const disbursed = [...approved, ...decide(approved, { type: 'DisburseCredit', method: 'bank_transfer', reference: 'T1', allowedMethods: [], taxes: [], by: 'u1', now: later })]
const paidOff = [...disbursed, ...decide(disbursed, {
  type: 'ApplyPayment', orderId: 'o-zero', installmentId: 'zero', installmentNumber: 0, amount: '1020066.34', collectionCosts: '0', valueDate: afterMaturity, orderedAt: afterMaturity, now: later,
})]
const historyOf: Record<CreditStateName, CreditEvent[]> = {
  Solicitado: requested,
  Aprobado: approved,
  Rechazado: [...requested, ...decide(requested, { type: 'RejectCredit', reason: 'r', by: 'u1', now })],
  Anulado: [...requested, ...decide(requested, { type: 'CancelCredit', reason: 'r', by: 'u1', now })],
  Desembolsado: disbursed,
  Pagado: paidOff,
}

const commandTo: Partial<Record<CreditStateName, CreditCommand>> = {
  Aprobado: { type: 'ApproveCredit', by: 'u2', now: later },
  Rechazado: { type: 'RejectCredit', reason: 'income', by: 'u2', now: later },
  Anulado: { type: 'CancelCredit', reason: 'duplicate', by: 'u2', now: later },
  Desembolsado: { type: 'DisburseCredit', method: 'bank_transfer', reference: '', allowedMethods: [], taxes: [], by: 'u2', now: later },
}

t.test('a request under a Key records it; the Key\'s request again decides nothing, a request without one is refused', async (t) => {
  const keyed: CreditCommand = { ...request, idempotency: { key: 'k1', requestHash: 'h1' } }
  const [event] = decide([], keyed)
  t.match(event?.data, { creditId: 'c1', idempotency: { key: 'k1', requestHash: 'h1' } })
  t.same(credit.given(...decide([], keyed)).state.idempotency, { key: 'k1', requestHash: 'h1' })
  t.notOk(requested[0] !== undefined && 'idempotency' in requested[0].data, 'without a Key nothing is recorded')
  credit.given(...requested).when(keyed).thenNothing(t, 'the caller compares it with the credit there')
  credit.given(...requested).when(request).thenRefused(t, 'ALREADY_EXISTS')
})

t.test('a request records the line\'s terms and the schedule, in state Solicitado', async (t) => {
  t.equal(requested.length, 1)
  const event = requested[0]
  if (event?.type !== 'CreditRequested') throw new Error('expected CreditRequested')
  t.match(event.data, { principal: '1000000.00', term: 3, rate: '12', monthlyRate: '1.0000000000', installmentAmount: '340022.11' })
  t.same(event.data.installments.map((i) => [i.number, i.principal, i.interest, i.dueDate]), [
    [1, '330022.11', '10000.00', '2026-04-01'], [2, '333322.33', '6699.78', '2026-05-01'], [3, '336655.56', '3366.56', '2026-06-01'],
  ])
  t.equal(credit.given(...requested).state.status, 'Solicitado')
})

t.test('every allowed move happens, every other one is INVALID_TRANSITION with from, to and allowed, and appends nothing', async (t) => {
  for (const from of creditStates) {
    for (const [to, command] of Object.entries(commandTo)) {
      const state = credit.given(...historyOf[from]).state
      t.equal(state.status, from)
      if (creditTransitions[from].some((allowed) => allowed === to)) {
        const events = creditAggregate.decide(command, state)
        t.equal(events.length, 1, `${from} → ${to} is allowed`)
        t.equal(events.reduce(creditAggregate.evolve, state).status, to)
      } else {
        refusedAsInvalidTransition(t, () => creditAggregate.decide(command, state), { from, to, allowed: creditTransitions[from] })
      }
    }
  }
})

t.test('Desembolsado reaches Pagado only when a payment leaves nothing owed', async (t) => {
  t.same(paidOff.slice(disbursed.length).map((e) => e.type), ['CreditPaymentApplied', 'CreditPaid'])
  t.match(paidOff[disbursed.length]?.data, { appliedAmount: '1020066.34', unappliedAmount: '0.00', outstanding: { total: '0.00' } })
  t.equal(credit.given(...paidOff).state.status, 'Pagado')
  const partial = decide(disbursed, { type: 'ApplyPayment', orderId: 'o1', installmentId: 'zero', installmentNumber: 0, amount: '100', collectionCosts: '0', valueDate: afterMaturity, orderedAt: afterMaturity, now: later })
  t.same(partial.map((e) => e.type), ['CreditPaymentApplied'])
})

t.test('a payment goes to interest first, then principal; an order applied twice changes nothing', async (t) => {
  const state = credit.given(...disbursed).state
  const first = state.installments[0]
  if (first === undefined) throw new Error('no installment')
  const command: CreditCommand = { type: 'ApplyPayment', orderId: 'o1', installmentId: first.installmentId, installmentNumber: 1, amount: '15000.00', collectionCosts: '0.00', valueDate: afterMaturity, orderedAt: afterMaturity, now: later }
  const events = creditAggregate.decide(command, state)
  t.match(events[0]?.data, { appliedAmount: '15000.00', unappliedAmount: '0.00', allocations: [{ number: 1, interest: '10000.00', principal: '5000.00', paidInFull: false }] })
  credit.given(...disbursed, ...events).when(command).thenNothing(t, 'the same order again is a no-op')
})

t.test('money beyond its installment pays the next unpaid installments oldest first, not unapplied while they fall overdue', async (t) => {
  const [first, second, third] = credit.given(...disbursed).state.installments
  if (first === undefined || second === undefined || third === undefined) throw new Error('three installments')
  const pay = (orderId: string, installmentId: string, installmentNumber: number, amount: string): CreditCommand =>
    ({ type: 'ApplyPayment', orderId, installmentId, installmentNumber, amount, collectionCosts: '0.00', valueDate: afterMaturity, orderedAt: afterMaturity, now: later })
  const once = [...disbursed, ...decide(disbursed, pay('o1', first.installmentId, 1, '340022.11'))]
  const twice = decide(once, pay('o2', first.installmentId, 1, '340022.11'))
  t.match(twice[0]?.data, {
    installmentId: first.installmentId, appliedAmount: '340022.11', unappliedAmount: '0.00',
    allocations: [{ number: 2, interest: '6699.78', principal: '333322.33', amount: '340022.11', paidInFull: true }],
  }, 'a second order for the paid first installment pays the second')
  const state = credit.given(...once, ...twice).state
  t.same(state.installments.map((i) => i.paidAt !== null), [true, true, false])
  t.equal(state.unapplied, '0.00')

  const [third1] = decide(disbursed, pay('o3', third.installmentId, 3, '400000.00'))
  if (third1?.type !== 'CreditPaymentApplied') throw new Error('expected CreditPaymentApplied')
  t.same(third1.data.allocations.map((a) => [a.number, a.amount, a.paidInFull]), [[3, '340022.12', true], [1, '59977.88', false]],
    'the ordered installment first, then the oldest unpaid (interest before principal)')
  t.match(third1.data.allocations[1], { interest: '10000.00', principal: '49977.88' })
  const all = decide(disbursed, pay('o4', second.installmentId, 2, '1100000.00'))
  t.match(all[0]?.data, { appliedAmount: '1020066.34', unappliedAmount: '79933.66' }, 'only what exceeds the whole debt is unapplied')
  t.same(all.map((e) => e.type), ['CreditPaymentApplied', 'CreditPaid'])
})

t.test('money beyond what is owed is recorded as unapplied, never lost', async (t) => {
  const events = decide(paidOff, { type: 'ApplyPayment', orderId: 'late', installmentId: 'zero', installmentNumber: 0, amount: '500.00', collectionCosts: '0', valueDate: afterMaturity, orderedAt: afterMaturity, now: later })
  t.match(events[0]?.data, { appliedAmount: '0.00', unappliedAmount: '500.00', allocations: [] })
  t.equal(events.length, 1, 'a paid credit stays Pagado')
})

t.test('payments are refused before disbursement and for unknown installments', async (t) => {
  credit.given(...approved).when({ type: 'ApplyPayment', orderId: 'o', installmentId: 'zero', installmentNumber: 0, amount: '1', collectionCosts: '0', valueDate: afterMaturity, orderedAt: afterMaturity, now })
    .thenRefused(t, 'CREDIT_NOT_PAYABLE')
  credit.given(...disbursed).when({ type: 'ApplyPayment', orderId: 'o', installmentId: 'nope', installmentNumber: 9, amount: '1', collectionCosts: '0', valueDate: afterMaturity, orderedAt: afterMaturity, now })
    .thenRefused(t, 'NOT_FOUND')
})

t.test('request bounds: principal and term inside the line\'s, within the minor unit, a first due date after today', async (t) => {
  credit.given().when({ ...request, principal: '499999.99' }).thenRefused(t, 'VALIDATION_ERROR')
  credit.given().when({ ...request, principal: '2000000.01' }).thenRefused(t, 'VALIDATION_ERROR')
  credit.given().when({ ...request, principal: '1000000.001' }).thenRefused(t, 'VALIDATION_ERROR')
  credit.given().when({ ...request, term: 13 }).thenRefused(t, 'VALIDATION_ERROR')
  credit.given().when({ ...request, requestedFirstDueDate: '2026-03-01' }).thenRefused(t, 'VALIDATION_ERROR')
  credit.given(...requested).when(request).thenRefused(t, 'ALREADY_EXISTS')
  credit.given().when({ type: 'ApproveCredit', by: 'u', now }).thenRefused(t, 'NOT_FOUND')
})

t.test('disbursement re-dates the schedule from the disbursement day, checks the method and the approval\'s availability', async (t) => {
  const event = disbursed[disbursed.length - 1]
  if (event?.type !== 'CreditDisbursed') throw new Error('expected CreditDisbursed')
  t.same(event.data.installments.map((i) => i.dueDate), ['2026-04-05', '2026-05-05', '2026-06-05'])
  t.equal(event.data.maturityDate, '2026-06-05')
  const disburse: CreditCommand = { type: 'DisburseCredit', method: 'cash', reference: '', allowedMethods: ['bank_transfer'], taxes: [], by: 'u', now: later }
  credit.given(...approved).when(disburse).thenRefused(t, 'VALIDATION_ERROR')
  const expiring = decide([], { ...request, availableDays: 2 })
  const expiringApproved = [...expiring, ...decide(expiring, { type: 'ApproveCredit', by: 'u', now })]
  credit.given(...expiringApproved).when({ ...disburse, method: 'bank_transfer', now: later }).thenRefused(t, 'APPROVAL_EXPIRED')
  credit.given(...expiringApproved).when({ ...disburse, method: 'bank_transfer', now: '2026-03-02T10:00:00.000Z' }).then(t, decide(expiringApproved, {
    ...disburse, method: 'bank_transfer', now: '2026-03-02T10:00:00.000Z',
  }))
})

t.test('due dates keep the day of the month they start from: clamped in short months, never drifting to the 28th', async (t) => {
  const dueDatesOf = (events: CreditEvent[]) => events.flatMap((event) =>
    event.type === 'CreditDisbursed' || event.type === 'CreditRequested' ? [event.data.installments.map((i) => i.dueDate)] : [])
  const longer = { ...request, term: 5, now: '2026-01-31T10:00:00.000Z' }
  const monthEnd = decide([], longer)
  t.same(dueDatesOf(monthEnd), [['2026-02-28', '2026-03-31', '2026-04-30', '2026-05-31', '2026-06-30']], 'requested on Jan 31: the provisional schedule')
  const approvedAtMonthEnd = [...monthEnd, ...decide(monthEnd, { type: 'ApproveCredit', by: 'u1', now: longer.now })]
  const disburseAt = (at: string) => decide(approvedAtMonthEnd, { type: 'DisburseCredit', method: 'bank_transfer', reference: '', allowedMethods: [], taxes: [], by: 'u1', now: at })
  t.same(dueDatesOf(disburseAt('2026-03-31T09:00:00.000Z')), [['2026-04-30', '2026-05-31', '2026-06-30', '2026-07-31', '2026-08-31']], 'disbursed on Mar 31')
  t.same(dueDatesOf(disburseAt('2026-04-29T09:00:00.000Z')), [['2026-05-29', '2026-06-29', '2026-07-29', '2026-08-29', '2026-09-29']], 'disbursed on Apr 29')
  const chosen = decide([], { ...longer, requestedFirstDueDate: '2026-03-31' })
  t.same(dueDatesOf(chosen), [['2026-03-31', '2026-04-30', '2026-05-31', '2026-06-30', '2026-07-31']], 'a requested first due date keeps its own day')
})

t.test('an automatic score decides a requested credit in the same append: approve approves, reject rejects, review leaves it', async (t) => {
  const score = (decision: 'approve' | 'review' | 'reject'): CreditCommand => ({
    type: 'RecordCreditScore', scoringModelId: 'm1', version: '1.0', versionNumber: 1, score: '71.5', decision, reasons: ['income'], now,
  })
  const scored = (decision: 'approve' | 'review' | 'reject'): CreditEvent => ({ type: 'CreditScored', data: {
    creditId: 'c1', organizationId: 'o1', scoringModelId: 'm1', version: '1.0', versionNumber: 1, score: '71.5', decision, reasons: ['income'], scoredAt: now,
  } })
  credit.given(...requested).when(score('approve')).then(t, [scored('approve'), { type: 'CreditApproved', data: {
    creditId: 'c1', organizationId: 'o1', approvedBy: 'scoring-model:m1', approvedAt: now,
  } }])
  credit.given(...requested).when(score('reject')).then(t, [scored('reject'), { type: 'CreditRejected', data: {
    creditId: 'c1', organizationId: 'o1', reason: 'automatic scoring: model version 1.0 decides reject', rejectedBy: 'scoring-model:m1', rejectedAt: now,
  } }])
  credit.given(...requested).when(score('review')).then(t, [scored('review')])
  const reviewed = credit.given(...requested, scored('review')).state
  t.match(reviewed, { status: 'Solicitado', score: { scoringModelId: 'm1', version: '1.0', decision: 'review', score: '71.5' } })
  credit.given(...requested, scored('review')).when(score('approve')).thenNothing(t, 'a credit is scored once (a redelivery changes nothing)')
  credit.given(...approved).when(score('reject')).thenNothing(t, 'a credit a person already approved keeps that decision')
  credit.given(...historyOf.Rechazado).when(score('approve')).thenNothing(t, 'a credit a person already rejected keeps that decision')
})

t.test('taxes on CREDIT apply to the principal at disbursement, recorded with it', async (t) => {
  const taxes = [
    { taxId: 'stamp', organizationId: 'o1', name: 'Timbre', type: 'OTHER' as const, isActive: true, percentage: '0.5', appliesTo: ['CREDIT' as const], minimumAmount: '0' },
    { taxId: 'vat', organizationId: 'o1', name: 'IVA', type: 'VAT' as const, isActive: true, percentage: '19', appliesTo: ['PAYMENT' as const, 'FEE' as const], minimumAmount: '0' },
  ]
  const events = decide(approved, { type: 'DisburseCredit', method: 'bank_transfer', reference: 'T1', allowedMethods: [], taxes, by: 'u1', now: later })
  t.same(events.map((e) => e.type), ['CreditDisbursed', 'TaxApplied'])
  t.match(events[1]?.data, { taxId: 'stamp', name: 'Timbre', type: 'OTHER', appliesTo: 'CREDIT', subjectId: 'c1', base: '1000000.00', amount: '5000.00', appliedAt: later })
  const state = credit.given(...approved, ...events).state
  t.same([state.status, state.taxes.map((tax) => tax.amount)], ['Desembolsado', ['5000.00']])
})

/** The fields a refused request names, and their messages. */
const refusedFields = (command: CreditCommand, events: CreditEvent[] = []): Array<{ field: string; message: string }> => {
  try {
    creditAggregate.decide(command, credit.given(...events).state)
  } catch (error) {
    if (error instanceof AppError && error.code === 'VALIDATION_ERROR') return error.details['errors'] as Array<{ field: string; message: string }>
    throw error
  }
  throw new Error('the request was not refused')
}

t.test('a first due date whose last installment would fall after 9999-12-31 is refused on body.firstDueDate', async (t) => {
  const far = { ...request, term: 12, bounds: { ...request.bounds, timeMax: 480 }, now: '9998-12-01T10:00:00.000Z' }
  const refused = refusedFields({ ...far, requestedFirstDueDate: '9999-06-30' })
  t.same(refused.map((e) => e.field), ['body.firstDueDate'])
  t.match(refused[0]?.message, /on or before 9999-12-31/)
  t.match(refusedFields({ ...far, term: 480, now: '9979-06-01T10:00:00.000Z', requestedFirstDueDate: '9980-01-31' }),
    [{ field: 'body.firstDueDate', message: /on or before 9999-12-31/ }], '480 months from 9980 pass 9999')
  const last = decide([], { ...far, requestedFirstDueDate: '9999-01-31' })[0]
  if (last?.type !== 'CreditRequested') throw new Error('expected CreditRequested')
  t.equal(last.data.installments.at(-1)?.dueDate, '9999-12-31', 'a schedule ending on 9999-12-31 is taken')
  t.same(refusedFields({ ...far, term: 13, bounds: request.bounds, requestedFirstDueDate: '9999-06-30' }).map((e) => e.field), ['body.term'],
    'a term outside the line\'s bounds is the error, not the date')
})

t.test('a credit requested before far first due dates were refused cannot be disbursed past 9999-12-31: 409, nothing appended', async (t) => {
  const requestedThen = decide([], { ...request, term: 12, now: '9998-12-01T10:00:00.000Z', requestedFirstDueDate: '9999-01-31' })[0]
  if (requestedThen?.type !== 'CreditRequested') throw new Error('expected CreditRequested')
  // As an earlier release recorded it: no first period, no bound on the first due date.
  const { firstPeriod: _period, ...data } = requestedThen.data
  const first = { ...requestedThen, data }
  const approval = decide([first], { type: 'ApproveCredit', by: 'u1', now })
  const requestedFor = (requestedFirstDueDate: string): CreditEvent[] => [{ ...first, data: { ...first.data, requestedFirstDueDate } }, ...approval]
  const disburse: CreditCommand = { type: 'DisburseCredit', method: 'bank_transfer', reference: '', allowedMethods: [], taxes: [], by: 'u1', now: later }
  credit.given(...requestedFor('9999-06-30')).when(disburse).thenRefused(t, 'CONFLICT')
  t.match(decide(requestedFor('9999-01-31'), disburse)[0]?.data, { firstDueDate: '9999-01-31', maturityDate: '9999-12-31' }, 'twelve months from 9999-01-31 still fit')
})

t.test('the first installment carries its period\'s interest: provisional from the request day, final from the disbursement day', async (t) => {
  const shortFirst = decide([], { ...request, requestedFirstDueDate: '2026-03-20' })
  const requestedEvent = shortFirst[0]
  if (requestedEvent?.type !== 'CreditRequested') throw new Error('expected CreditRequested')
  t.same(requestedEvent.data.firstPeriod, { months: 0, days: 19 })
  t.match(requestedEvent.data.installments[0], { principal: '330022.11', interest: '6333.33', amount: '336355.44' }, '1 % × 19/30 of 1,000,000')
  const approvedShort = [...shortFirst, ...decide(shortFirst, { type: 'ApproveCredit', by: 'u1', now })]
  const disbursedEvents = decide(approvedShort, { type: 'DisburseCredit', method: 'bank_transfer', reference: 'T1', allowedMethods: [], taxes: [], by: 'u1', now: later })
  t.match(disbursedEvents[0]?.data, { firstDueDate: '2026-03-20', firstPeriod: { months: 0, days: 15, interest: '5000.00', amount: '335022.11' } }, 'disbursed on 03-05: 15 days')
  const state = credit.given(...approvedShort, ...disbursedEvents).state
  t.match(state.installments[0], { interest: '5000.00', amount: '335022.11', dueDate: '2026-03-20' })
  t.same(state.installments.slice(1).map((i) => i.interest), ['6699.78', '3366.56'], 'the other installments as scheduled')
  t.same([state.totalInterest, state.totalAmount, state.firstPeriod], ['15066.34', '1015066.34', { months: 0, days: 15 }])

  // As an earlier release recorded the request: no first period, so the schedule shown then is kept.
  const { firstPeriod: _period, ...data } = requestedEvent.data
  const earlier = [{ ...requestedEvent, data }, ...approvedShort.slice(1)]
  const kept = decide(earlier, { type: 'DisburseCredit', method: 'bank_transfer', reference: 'T1', allowedMethods: [], taxes: [], by: 'u1', now: later })
  t.notOk('firstPeriod' in (kept[0]?.data ?? {}), 'no first period recorded')
  t.match(credit.given(...earlier, ...kept).state.installments[0], { interest: '6333.33' }, 'the interest it was requested with')
})

t.test('a disbursement whose first period leaves the first installment owing nothing is refused: 409, nothing appended', async (t) => {
  const tiny: CreditCommand = {
    ...request, principal: '1', currency: 'JPY', rate: '11988', term: 2, now: '2026-01-25T10:00:00.000Z', requestedFirstDueDate: '2026-02-05',
    bounds: { principalMin: '1', principalMax: '100', timeMin: 1, timeMax: 12 },
  }
  const requestedTiny = decide([], tiny)
  t.match(requestedTiny[0]?.data, { installments: [{ principal: '0', interest: '4' }, {}] }, 'eleven days of interest: the first installment owes 4')
  const approvedTiny = [...requestedTiny, ...decide(requestedTiny, { type: 'ApproveCredit', by: 'u1', now: '2026-01-25T11:00:00.000Z' })]
  const disburse = (day: string): CreditCommand => ({ type: 'DisburseCredit', method: 'bank_transfer', reference: '', allowedMethods: [], taxes: [], by: 'u1', now: `${day}T10:00:00.000Z` })
  credit.given(...approvedTiny).when(disburse('2026-02-04')).thenRefused(t, 'CONFLICT')
  t.match(decide(approvedTiny, disburse('2026-02-01'))[0]?.data, { firstPeriod: { days: 4 } }, 'four days owe something')
})

t.test('a schedule with installments of 0 is refused on body.principal and body.term', async (t) => {
  const yen = { ...request, currency: 'JPY', rate: '0', rateType: 'FIXED' as const, bounds: { principalMin: '1', principalMax: '1000000', timeMin: 1, timeMax: 480 } }
  const roundsToZero = refusedFields({ ...yen, principal: '100', term: 480 })
  t.same(roundsToZero.map((e) => e.field), ['body.principal', 'body.term'], '100 JPY over 480 months: the level payment rounds to 0')
  t.match(roundsToZero[0]?.message, /100 JPY over 480 months leaves 479 installments of 0 JPY \(level payment 0\)/)
  t.same(refusedFields({ ...yen, principal: '300', term: 480 }).map((e) => e.field), ['body.principal', 'body.term'],
    '300 JPY over 480 months: a payment rounded up to 1 pays the principal off in 300 months, leaving 180 installments of 0')
  const smallest = decide([], { ...yen, principal: '480', term: 480 })[0]
  if (smallest?.type !== 'CreditRequested') throw new Error('expected CreditRequested')
  t.ok(smallest.data.installments.every((i) => i.amount === '1'), '480 JPY over 480 months is 480 installments of 1')
})

t.test('a tiny positive rate is the zero-rate schedule, not an Infinity payment', async (t) => {
  const events = decide([], { ...request, rate: '0.0000000000000000000000000000000000000000001', principal: '1000000', term: 3 })
  if (events[0]?.type !== 'CreditRequested') throw new Error('expected CreditRequested')
  t.match(events[0].data, { installmentAmount: '333333.33', totalInterest: '0.00', totalAmount: '1000000.00' })
  t.same(events[0].data.installments.map((i) => i.amount), ['333333.33', '333333.33', '333333.34'])
})

t.test('a principal above the money bound is refused even when a line recorded before the bound allows it', async (t) => {
  const huge = { ...request, principal: '1000000000000000.00', bounds: { ...request.bounds, principalMax: '1' + '0'.repeat(60) } }
  const refused = refusedFields(huge)
  t.same(refused.map((e) => e.field), ['body.principal'])
  t.match(refused[0]?.message, /below 1000000000000000/)
  t.equal(decide([], { ...huge, principal: '999999999999999.99' })[0]?.type, 'CreditRequested', 'just below it is taken')
})

t.test('a zero order covering the payoff at its value date pays the accrued interest and principal, forgives the rest and settles the credit', async (t) => {
  const state = credit.given(...disbursed).state
  const interest = state.installments.map((i) => i.interest)
  t.same(interest, ['10000.00', '6699.78', '3366.56'])
  const payoff = (amount: string, orderId = 'o-payoff'): CreditCommand => ({
    type: 'ApplyPayment', orderId, installmentId: 'zero', installmentNumber: 0, amount, collectionCosts: '0.00',
    valueDate: '2026-03-20T08:00:00.000Z', orderedAt: '2026-03-20T09:00:00.000Z', now: '2026-03-22T10:00:00.000Z',
  })
  // Disbursed 2026-03-05, first due 2026-04-05: 15 of 31 days accrued, 10,000 × 15/31 = 4,838.71.
  const events = decide(disbursed, payoff('1004838.71'))
  t.same(events.map((e) => e.type), ['CreditPaymentApplied', 'CreditPaid'])
  t.match(events[0]?.data, {
    appliedAmount: '1004838.71', unappliedAmount: '0.00', outstanding: { principal: '0.00', interest: '0.00', total: '0.00' },
    payoff: { day: '2026-03-20', waivers: [{ number: 1, interest: '5161.29' }, { number: 2, interest: '6699.78' }, { number: 3, interest: '3366.56' }] },
  })
  const settled = credit.given(...disbursed, ...events).state
  t.equal(settled.status, 'Pagado')
  t.same(settled.installments.map((i) => [i.paidInterest, i.waivedInterest, i.paidAt]), [
    ['4838.71', '5161.29', '2026-03-22T10:00:00.000Z'], ['0.00', '6699.78', '2026-03-22T10:00:00.000Z'], ['0.00', '3366.56', '2026-03-22T10:00:00.000Z'],
  ])
  credit.given(...disbursed, ...events).when(payoff('1004838.71')).thenNothing(t, 'the same order again changes nothing')

  const over = decide(disbursed, payoff('1020066.34', 'o-scheduled'))
  t.match(over[0]?.data, { appliedAmount: '1004838.71', unappliedAmount: '15227.63' }, 'an order for the whole schedule: what the payoff forgave is unapplied, to refund')

  const short = decide(disbursed, payoff('1004838.70', 'o-short'))
  t.same(short.map((e) => e.type), ['CreditPaymentApplied'], 'a cent short of the payoff (an order made before orders had to ask it): no waiver, still Desembolsado')
  t.notOk('payoff' in (short[0]?.data ?? {}), 'no payoff recorded')
  const shortPaid = short[0]?.type === 'CreditPaymentApplied' ? short[0].data.allocations : []
  t.same(shortPaid.map((a) => [a.number, a.interest, a.principal]), [[1, '4838.71', '330022.11'], [2, '0.00', '333322.33'], [3, '0.00', '336655.55']],
    'accrued interest and principal only: no interest not accrued is charged')
})

t.test('a payoff after an installment was paid ahead credits the interest not accrued to principal: the debtor pays what a payoff alone would', async (t) => {
  const [first] = credit.given(...disbursed).state.installments
  t.match(first, { installmentId: String, principal: '330022.11', interest: '10000.00', amount: '340022.11' })
  const early: CreditCommand = {
    type: 'ApplyPayment', orderId: 'o-early', installmentId: first?.installmentId ?? '', installmentNumber: 1,
    amount: '340022.11', collectionCosts: '0.00', valueDate: '2026-03-10T08:00:00.000Z', orderedAt: '2026-03-10T08:00:00.000Z', now: '2026-03-10T09:00:00.000Z',
  }
  const paidAhead = [...disbursed, ...decide(disbursed, early)]
  const payoff: CreditCommand = {
    type: 'ApplyPayment', orderId: 'o-payoff', installmentId: 'zero', installmentNumber: 0, amount: '664816.60', collectionCosts: '0.00',
    valueDate: '2026-03-20T08:00:00.000Z', orderedAt: '2026-03-20T09:00:00.000Z', now: '2026-03-22T10:00:00.000Z',
  }
  // 10,000 of the first period's interest paid on 03-10; 4,838.71 accrued by 03-20: 5,161.29 credited. 340,022.11 + 664,816.60 = 1,004,838.71.
  const events = decide(paidAhead, payoff)
  t.same(events.map((e) => e.type), ['CreditPaymentApplied', 'CreditPaid'])
  const applied = events[0]?.type === 'CreditPaymentApplied' ? events[0].data : undefined
  t.match(applied, { appliedAmount: '664816.60', unappliedAmount: '0.00', payoff: { day: '2026-03-20', waivers: [{ number: 1, interest: '5161.29' }, { number: 2 }, { number: 3 }] } })
  t.same(applied?.allocations.map((a) => [a.number, a.principal, a.interest, a.amount]), [
    [1, '0.00', '-5161.29', '-5161.29'], [2, '333322.33', '0.00', '333322.33'], [3, '336655.56', '0.00', '336655.56'],
  ], 'the credit is the first installment\'s negative interest; the allocations add up to the money received')
  const settled = credit.given(...paidAhead, ...events).state
  t.same(settled.installments.map((i) => [i.paidPrincipal, i.paidInterest, i.waivedInterest, i.paidAt]), [
    ['330022.11', '4838.71', '5161.29', '2026-03-10T09:00:00.000Z'], ['333322.33', '0.00', '6699.78', '2026-03-22T10:00:00.000Z'],
    ['336655.56', '0.00', '3366.56', '2026-03-22T10:00:00.000Z'],
  ], 'the same interest paid as after a payoff alone; the first installment keeps the time it was paid')

  const short = decide(paidAhead, { ...payoff, orderId: 'o-short', amount: '664816.59' })
  t.notOk(short.some((e) => e.type === 'CreditPaid'), 'a cent short of it settles nothing')
})

t.test('a zero order of 0 settles a credit whose interest paid ahead is worth more than what is owed, and owes the rest back', async (t) => {
  const [first] = credit.given(...disbursed).state.installments
  // 1,019,066.34 paid on installment 1 the day after disbursement: it and the rest of the schedule paid but for 1,000.00 of the last principal.
  const early: CreditCommand = {
    type: 'ApplyPayment', orderId: 'o-almost', installmentId: first?.installmentId ?? '', installmentNumber: 1,
    amount: '1019066.34', collectionCosts: '0.00', valueDate: '2026-03-06T08:00:00.000Z', orderedAt: '2026-03-06T08:00:00.000Z', now: '2026-03-06T09:00:00.000Z',
  }
  const almost = [...disbursed, ...decide(disbursed, early)]
  const events = decide(almost, {
    type: 'ApplyPayment', orderId: 'o-zero', installmentId: 'zero', installmentNumber: 0, amount: '0.00', collectionCosts: '0.00',
    valueDate: '2026-03-20T08:00:00.000Z', orderedAt: '2026-03-20T09:00:00.000Z', now: '2026-03-20T10:00:00.000Z',
  })
  t.same(events.map((e) => e.type), ['CreditPaymentApplied', 'CreditPaid'])
  // Interest paid: 20,066.34; accrued by 03-20: 4,838.71; principal owed 1,000.00. Applied 1,000.00 − 15,227.63.
  t.match(events[0]?.data, { amount: '0.00', appliedAmount: '-14227.63', unappliedAmount: '14227.63' }, 'what the credit is worth beyond the debt is owed back')
  t.same(credit.given(...almost, ...events).state.installments.map((i) => i.paidInterest), ['4838.71', '0.00', '0.00'])
})

t.test('a zero order made after an installment fell due owes that installment\'s whole interest, however early its value date', async (t) => {
  const backDated: CreditCommand = {
    type: 'ApplyPayment', orderId: 'o-back', installmentId: 'zero', installmentNumber: 0, amount: '1010000.00', collectionCosts: '0.00',
    valueDate: later, orderedAt: '2026-04-20T09:00:00.000Z', now: '2026-04-20T10:00:00.000Z',
  }
  const events = decide(disbursed, backDated)
  t.match(events[0]?.data, {
    appliedAmount: '1010000.00', unappliedAmount: '0.00',
    payoff: { day: '2026-04-05', waivers: [{ number: 2, interest: '6699.78' }, { number: 3, interest: '3366.56' }] },
  }, 'weighed on the first due date: 10,000 of interest owed, the second period not begun')
  t.same(events.map((e) => e.type), ['CreditPaymentApplied', 'CreditPaid'])
})

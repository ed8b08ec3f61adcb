import t from 'tap'
import { creditLimitAggregate, creditLimitIdOf, isCalendarDate, utcDate } from '../../src/commands/creditLimit.js'
import type { CreditLimitCreated } from '../../src/events/creditLimit.js'
import { scenario } from '../helpers/deciders.js'

const now = '2026-03-01T10:00:00.000Z'
const today = '2026-03-01'
const limit = scenario(creditLimitAggregate)
const ids = { creditLimitId: 'l1', organizationId: 'o1' }
const create = { type: 'CreateCreditLimit' as const, ...ids, debtorId: 'p1', currency: 'COP', maxAmount: '5000000.00', expirationDate: '2026-12-31', today, now }
const created: CreditLimitCreated = { type: 'CreditLimitCreated', data: {
  ...ids, debtorId: 'p1', currency: 'COP', maxAmount: '5000000', expirationDate: '2026-12-31', createdAt: now,
} }
const expired = { type: 'CreditLimitExpired' as const, data: { ...ids, expirationDate: '2026-12-31', at: now } }
const change = (fields: { maxAmount?: string; expirationDate?: string; status?: 'active' | 'inactive' }, on = today) =>
  ({ type: 'ChangeCreditLimit' as const, ...fields, today: on, now })

t.test('a limit is created once per creditor, debtor and currency; a request with bad fields is a 400 whether it exists or not', async (t) => {
  limit.given().when(create).then(t, [created])
  limit.given(created).when(create).thenRefused(t, 'ALREADY_EXISTS')
  limit.given(created).when({ ...create, maxAmount: '0' }).thenRefused(t, 'VALIDATION_ERROR', 'a bad amount is the request\'s fault before the limit exists')
  limit.given(created).when({ ...create, expirationDate: '2000-01-01' }).thenRefused(t, 'VALIDATION_ERROR', 'so is a past date')
  t.equal(creditLimitIdOf('o1', 'p1', 'COP'), creditLimitIdOf('o1', 'p1', 'COP'))
  t.not(creditLimitIdOf('o1', 'p1', 'COP'), creditLimitIdOf('o1', 'p1', 'USD'))
})

t.test('creation checks amount, currency and date', async (t) => {
  for (const maxAmount of ['0', '0.00', '10.001']) limit.given().when({ ...create, maxAmount }).thenRefused(t, 'VALIDATION_ERROR', `amount ${maxAmount}`)
  limit.given().when({ ...create, currency: 'XYZ' }).thenRefused(t, 'VALIDATION_ERROR')
  limit.given().when({ ...create, currency: 'JPY', maxAmount: '10.5' }).thenRefused(t, 'VALIDATION_ERROR', 'JPY has no minor unit')
  limit.given().when({ ...create, expirationDate: '2026-02-28' }).thenRefused(t, 'VALIDATION_ERROR', 'yesterday')
  limit.given().when({ ...create, expirationDate: '2026-02-30' }).thenRefused(t, 'VALIDATION_ERROR', 'no such day')
  t.equal(creditLimitAggregate.decide({ ...create, expirationDate: today }, creditLimitAggregate.initialState()).length, 1, 'today is allowed')
})

t.test('changes: amount, expiration and status, each an event, only when different', async (t) => {
  limit.given(created).when(change({ maxAmount: '5000000.00' })).thenNothing(t)
  limit.given(created).when(change({ maxAmount: '7000000', status: 'inactive' })).then(t, [
    { type: 'CreditLimitAmountChanged', data: { ...ids, maxAmount: '7000000', previousMaxAmount: '5000000', at: now } },
    { type: 'CreditLimitDeactivated', data: { ...ids, at: now } },
  ])
  limit.given(created).when(change({ expirationDate: '2027-06-30' })).then(t, [
    { type: 'CreditLimitExpirationChanged', data: { ...ids, expirationDate: '2027-06-30', previousExpirationDate: '2026-12-31', at: now } },
  ])
  limit.given(created).when(change({ status: 'active' })).thenNothing(t)
  limit.given(created).when(change({ maxAmount: '-1' })).thenRefused(t, 'VALIDATION_ERROR')
  limit.given().when(change({ status: 'active' })).thenRefused(t, 'NOT_FOUND')
})

t.test('an expired limit is renewed only by a new expiration date', async (t) => {
  const later = '2027-01-05'
  limit.given(created, expired).when(change({ status: 'active' }, later)).thenRefused(t, 'INVALID_TRANSITION')
  limit.given(created, expired).when(change({ status: 'inactive' }, later)).thenRefused(t, 'INVALID_TRANSITION')
  limit.given(created, expired).when(change({ maxAmount: '1000' }, later))
    .then(t, [{ type: 'CreditLimitAmountChanged', data: { ...ids, maxAmount: '1000', previousMaxAmount: '5000000', at: now } }], 'the amount may change; it stays expired')
  const renewal = { type: 'CreditLimitExpirationChanged' as const, data: { ...ids, expirationDate: '2027-12-31', previousExpirationDate: '2026-12-31', at: now } }
  limit.given(created, expired).when(change({ expirationDate: '2027-12-31' }, later)).then(t, [renewal, { type: 'CreditLimitActivated', data: { ...ids, at: now } }])
  limit.given(created, expired).when(change({ expirationDate: '2027-12-31', status: 'inactive' }, later))
    .then(t, [renewal, { type: 'CreditLimitDeactivated', data: { ...ids, at: now } }])
  const deactivated = { type: 'CreditLimitDeactivated' as const, data: { ...ids, at: now } }
  limit.given(created, deactivated).when(change({ status: 'active' }, later)).thenRefused(t, 'INVALID_TRANSITION', 'a lapsed inactive limit cannot come back without a new date')
  limit.given(created).when(change({ status: 'inactive' }, later)).then(t, [deactivated], 'a lapsed limit may still be switched off')
})

t.test('expiry happens the day after the expiration date, once', async (t) => {
  limit.given(created).when({ type: 'ExpireCreditLimit', today: '2026-12-31', now }).thenNothing(t, 'valid through its expiration date')
  limit.given(created).when({ type: 'ExpireCreditLimit', today: '2027-01-01', now }).then(t, [expired])
  limit.given(created, expired).when({ type: 'ExpireCreditLimit', today: '2027-01-02', now }).thenNothing(t)
  const deactivated = { type: 'CreditLimitDeactivated' as const, data: { ...ids, at: now } }
  limit.given(created, deactivated).when({ type: 'ExpireCreditLimit', today: '2027-01-01', now }).then(t, [expired], 'inactive limits expire too')
})

t.test('dates are calendar dates in UTC', async (t) => {
  t.ok(isCalendarDate('2028-02-29'))
  t.notOk(isCalendarDate('2027-02-29'))
  t.notOk(isCalendarDate('2027-2-1'))
  t.equal(utcDate(new Date('2026-03-01T23:30:00-05:00')), '2026-03-02')
})

const reserve = (creditId: string, amount: string, check = true, on = today) => ({
  type: 'ReserveCreditLimit' as const, ...ids, debtorId: 'p1', currency: 'COP', creditId, amount, check, today: on, now,
})
const reserved = (creditId: string, amount: string, usedAmount: string, checked = true) => ({ type: 'CreditLimitReserved' as const, data: {
  ...ids, debtorId: 'p1', currency: 'COP', creditId, amount, checked, usedAmount, at: now,
} })

t.test('a reservation counts a credit once, within what an active limit has available', async (t) => {
  limit.given(created).when(reserve('c1', '3000000.00')).then(t, [reserved('c1', '3000000.00', '3000000')])
  const withOne = [created, reserved('c1', '3000000.00', '3000000')]
  limit.given(...withOne).when(reserve('c1', '3000000.00')).thenNothing(t, 'the same credit again changes nothing')
  limit.given(...withOne).when(reserve('c2', '2000000.00')).then(t, [reserved('c2', '2000000.00', '5000000')], 'exactly what is available fits')
  limit.given(...withOne).when(reserve('c2', '2000000.01')).thenRefused(t, 'CREDIT_LIMIT_EXCEEDED')
  try {
    creditLimitAggregate.decide(reserve('c2', '2500000'), limit.given(...withOne).state)
  } catch (error) {
    t.match(error, { details: {
      creditLimitId: 'l1', currency: 'COP', maxAmount: '5000000.00', usedAmount: '3000000.00', availableAmount: '2000000.00', requestedAmount: '2500000.00',
    } }, 'the refusal says what is available')
  }
  limit.given(...withOne).when(reserve('c2', '9000000', false)).then(t, [reserved('c2', '9000000', '12000000', false)], 'an unchecked exposure is recorded as it is')
})

t.test('only an active limit within its date restricts; every limit keeps counting', async (t) => {
  const deactivated = { type: 'CreditLimitDeactivated' as const, data: { ...ids, at: now } }
  limit.given(created, deactivated).when(reserve('c1', '9000000')).then(t, [reserved('c1', '9000000', '9000000', false)])
  limit.given(created, expired).when(reserve('c1', '9000000')).then(t, [reserved('c1', '9000000', '9000000', false)])
  limit.given(created).when(reserve('c1', '9000000', true, '2027-01-01')).then(t, [reserved('c1', '9000000', '9000000', false)], 'past its date before the job ran')
  limit.given().when(reserve('c1', '9000000')).then(t, [reserved('c1', '9000000', '9000000', false)], 'no limit yet: the exposure waits for one')
  const state = limit.given(reserved('c1', '4000000', '4000000', false), { ...created, data: { ...created.data, maxAmount: '5000000' } }).state
  t.same([state.status, state.exposures], ['active', { c1: '4000000' }], 'a limit set later starts with the exposure already there')
  limit.given(reserved('c1', '4000000', '4000000', false), created).when(reserve('c2', '1000000.01')).thenRefused(t, 'CREDIT_LIMIT_EXCEEDED')
})

t.test('a release lowers what a credit counts to what it still owes, never raises it, and stays released', async (t) => {
  const withOne = [created, reserved('c1', '3000000.00', '3000000')]
  const release = (remaining: string, reason: 'payment' | 'paid' | 'cancelled' | 'rejected' = 'payment') =>
    ({ type: 'ReleaseCreditLimit' as const, creditId: 'c1', remaining, reason, now })
  const released = { type: 'CreditLimitReleased' as const, data: {
    ...ids, creditId: 'c1', amount: '750000', remaining: '2250000', reason: 'payment' as const, usedAmount: '2250000', at: now,
  } }
  limit.given(...withOne).when(release('2250000.00')).then(t, [released])
  limit.given(...withOne, released).when(release('2250000.00')).thenNothing(t, 'a redelivered payment changes nothing')
  limit.given(...withOne, released).when(release('3000000.00')).thenNothing(t, 'never raised')
  limit.given(...withOne).when(release('0', 'paid')).then(t, [{ type: 'CreditLimitReleased', data: {
    ...ids, creditId: 'c1', amount: '3000000', remaining: '0', reason: 'paid', usedAmount: '0', at: now,
  } }])
  limit.given(created).when(release('0', 'cancelled')).thenNothing(t, 'a credit never counted has nothing to release')
  const closed = [...withOne, { type: 'CreditLimitReleased' as const, data: { ...released.data, amount: '3000000', remaining: '0', reason: 'paid' as const, usedAmount: '0' } }]
  limit.given(...closed).when(reserve('c1', '3000000.00', false)).thenNothing(t, 'a released credit is not counted again by a redelivered disbursement')
})

t.test('a credit that ended without disbursement is closed: what it counted is released, and a reservation arriving later counts nothing', async (t) => {
  const close = (reason: 'cancelled' | 'rejected' = 'cancelled') =>
    ({ type: 'CloseCreditExposure' as const, ...ids, debtorId: 'p1', currency: 'COP', creditId: 'c1', reason, now })
  const closed = { type: 'CreditLimitExposureClosed' as const, data: { ...ids, debtorId: 'p1', currency: 'COP', creditId: 'c1', reason: 'cancelled' as const, at: now } }
  limit.given(created).when(close()).then(t, [closed], 'nothing counted yet: closed')
  limit.given().when(close('rejected')).then(t, [{ ...closed, data: { ...closed.data, reason: 'rejected' } }], 'also on a stream with no limit yet')
  limit.given(created, closed).when(reserve('c1', '3000000.00')).thenNothing(t, 'the reservation of a disbursement checked before the end counts nothing')
  limit.given(created, closed).when(reserve('c1', '3000000.00', false)).thenNothing(t, 'nor an unchecked one')
  limit.given(created, closed).when(close()).thenNothing(t, 'a redelivered end changes nothing')
  const state = limit.given(closed).state
  t.same([state.creditLimitId, state.organizationId, state.debtorId, state.currency, state.exposures], ['l1', 'o1', 'p1', 'COP', { c1: '0' }], 'the stream knows its limit from it')
  limit.given(closed, created).when(reserve('c2', '5000000.00')).then(t, [reserved('c2', '5000000.00', '5000000')], 'a closed credit uses none of the limit')

  const withOne = [created, reserved('c1', '3000000.00', '3000000')]
  const releasedAll = { type: 'CreditLimitReleased' as const, data: {
    ...ids, creditId: 'c1', amount: '3000000', remaining: '0', reason: 'cancelled' as const, usedAmount: '0', at: now,
  } }
  limit.given(...withOne).when(close()).then(t, [releasedAll], 'reserved before the end: released to 0')
  limit.given(...withOne, releasedAll).when(close()).thenNothing(t, 'once released, closing again changes nothing')
  limit.given(...withOne, releasedAll).when(reserve('c1', '3000000.00')).thenNothing(t, 'and it is not reserved again')
})

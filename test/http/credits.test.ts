import { Decimal } from 'decimal.js'
import t from 'tap'
import { creditAggregate } from '../../src/commands/credit.js'
import { creditLineAggregate } from '../../src/commands/creditLine.js'
import { profileAggregate } from '../../src/commands/profile.js'
import { addMonths } from '../../src/shared/amortization.js'
import { ManualClock } from '../../src/shared/clock.js'
import { newId } from '../../src/shared/ids.js'
import { createTestApp } from '../helpers/app.js'
import { createDebtor, createOrganization, lending, memberToken } from '../helpers/lending.js'

const DAY = 86_400_000

t.test('a credit request answers the credit with its schedule, readable at once, with the line\'s defaults', async (t) => {
  const svc = await createTestApp(t)
  const l = await lending(svc)
  const creditLineId = await l.createLine()
  const debtorId = await createDebtor(svc.runtime, svc.organizationId)
  const response = await l.call('POST', '/v1/credits', { creditLineId, debtorId })
  t.equal(response.statusCode, 201)
  const credit = response.json().data.credit
  t.match(credit, {
    state: 'Solicitado', principal: '1000000.00', term: 12, rate: '12', rateType: 'FIXED_NOMINAL', currency: 'COP', installmentAmount: '88848.79',
    creditLineName: 'Crédito de consumo', debtor: { ID: debtorId, type: 'natural', name: 'Ana Gómez' },
    totalAmount: '1066185.45', balances: { outstandingPrincipal: '0.00', outstandingTotal: '0.00', paidTotal: '0.00' }, installmentsCount: 12, daysPastDue: 0,
    nextDueDate: null,
  })
  t.equal(credit.installments.length, 12)
  const read = await l.call('GET', `/v1/credits/${credit.ID}`)
  t.same(read.json().data.credit, credit, 'read-your-writes')
  const installments = await l.call('GET', `/v1/credits/${credit.ID}/installments`)
  t.same(installments.json().data.installments, credit.installments)
})

t.test('request refusals: bounds, unknown or foreign line and debtor, inactive line or debtor', async (t) => {
  const svc = await createTestApp(t)
  const l = await lending(svc)
  const other = await createOrganization(svc, 'Otra')
  const creditLineId = await l.createLine()
  const debtorId = await createDebtor(svc.runtime, svc.organizationId)
  const fields = async (body: Record<string, unknown>) => {
    const response = await l.call('POST', '/v1/credits', { creditLineId, debtorId, ...body })
    t.equal(response.statusCode, 400, JSON.stringify(body))
    return response.json().data.errors.map((e: { field: string }) => e.field)
  }
  t.same(await fields({ principal: '499999.99', term: 37 }), ['body.principal', 'body.term'])
  t.same(await fields({ principal: 1000000 }), ['body.principal'], 'a JSON number is not money')
  t.same(await fields({ creditLineId: (await lending(svc, other)).organizationId }), ['body.creditLineId'])
  t.same(await fields({ creditLineId: await (await lending(svc, other)).createLine() }), ['body.creditLineId'], 'another organization\'s line')
  t.same(await fields({ debtorId: await createDebtor(svc.runtime, other) }), ['body.debtorId'], 'another organization\'s profile')
  t.same(await fields({ firstDueDate: '2020-01-01' }), ['body.firstDueDate'])
  const paused = await l.createLine({ active: false })
  const inactiveLine = await l.call('POST', '/v1/credits', { creditLineId: paused, debtorId })
  t.equal(inactiveLine.statusCode, 409)
  t.equal(inactiveLine.json().data.code, 'NOT_ACTIVE')
  await svc.runtime.commands.execute(profileAggregate, debtorId, { type: 'DeactivateProfile', reason: 'fraud', now: new Date().toISOString() },
    { organizationId: svc.organizationId, actorId: 'test', correlationId: 'c' })
  const inactiveDebtor = await l.call('POST', '/v1/credits', { creditLineId, debtorId })
  t.equal(inactiveDebtor.statusCode, 409)
  t.equal(inactiveDebtor.json().data.code, 'NOT_ACTIVE')
})

t.test('a credit owes nothing and has nothing due until it is disbursed, and never when it ends without disbursement', async (t) => {
  const svc = await createTestApp(t)
  const l = await lending(svc)
  const creditLineId = await l.createLine()
  const debtorId = await createDebtor(svc.runtime, svc.organizationId)
  const nothingOwed = { outstandingPrincipal: '0.00', outstandingInterest: '0.00', outstandingTotal: '0.00', paidTotal: '0.00', unapplied: '0.00' }
  const ids: Record<string, string> = {}
  for (const [state, moves] of [['Solicitado', []], ['Aprobado', ['approve']], ['Rechazado', ['reject']], ['Anulado', ['approve', 'cancel']], ['Desembolsado', ['approve', 'disburse']]] as const) {
    const credit = await l.requestCredit({ creditLineId, debtorId })
    for (const move of moves) {
      const body = move === 'disburse' ? { method: 'bank_transfer' } : move === 'approve' ? undefined : { reason: 'r' }
      t.equal((await l.call('POST', `/v1/credits/${credit.ID}/${move}`, body)).statusCode, 200, `${state}: ${move}`)
    }
    ids[state] = credit.ID
  }
  const list = (await l.call('GET', '/v1/credits?limit=100')).json().data
  for (const [state, id] of Object.entries(ids)) {
    const read = (await l.call('GET', `/v1/credits/${id}`)).json().data.credit
    const listed = list.find((each: { ID: string }) => each.ID === id)
    if (state === 'Desembolsado') {
      t.match(read, { state, balances: { outstandingTotal: '1066185.45', outstandingPrincipal: '1000000.00' }, nextDueDate: read.installments[0].dueDate })
      t.not(read.nextDueDate, null)
    } else {
      t.match(read, { state, balances: nothingOwed, nextDueDate: null, installmentsPaid: 0, totalAmount: '1066185.45' }, `${state}: the schedule is shown, nothing owed`)
    }
    t.same(listed.balances, read.balances, `${state}: the list says the same`)
    t.equal(listed.nextDueDate, read.nextDueDate)
  }
})

t.test('the state machine through the API: allowed moves, and 409 INVALID_TRANSITION that appends nothing', async (t) => {
  const svc = await createTestApp(t)
  const l = await lending(svc)
  const creditLineId = await l.createLine()
  const debtorId = await createDebtor(svc.runtime, svc.organizationId)
  const credit = await l.requestCredit({ creditLineId, debtorId })
  const path = `/v1/credits/${credit.ID}`
  t.equal((await l.call('POST', `${path}/reject`, {})).statusCode, 400, 'a rejection needs a reason')
  const approved = await l.call('POST', `${path}/approve`)
  t.equal(approved.statusCode, 200)
  t.match(approved.json().data.credit, { state: 'Aprobado', approvedBy: 'test-admin' })
  const eventsBefore = (await l.call('GET', `${path}/events`)).json().data.events.length
  const twice = await l.call('POST', `${path}/approve`)
  t.equal(twice.statusCode, 409)
  t.same(twice.json(), { status: 'fail', data: {
    code: 'INVALID_TRANSITION', message: 'cannot move from Aprobado to Aprobado', from: 'Aprobado', to: 'Aprobado', allowed: ['Desembolsado', 'Anulado'],
  } })
  const reject = await l.call('POST', `${path}/reject`, { reason: 'late' })
  t.match(reject.json().data, { code: 'INVALID_TRANSITION', from: 'Aprobado', to: 'Rechazado' })
  t.equal((await l.call('GET', `${path}/events`)).json().data.events.length, eventsBefore, 'refused moves append nothing')
  const wrongMethod = await l.call('POST', `${path}/disburse`, { method: 'cash' })
  t.equal(wrongMethod.statusCode, 400)
  const disbursed = await l.call('POST', `${path}/disburse`, { method: 'bank_transfer', reference: 'TRF-77' })
  t.match(disbursed.json().data.credit, { state: 'Desembolsado', disbursementMethod: 'bank_transfer', disbursementReference: 'TRF-77' })
  const cancel = await l.call('POST', `${path}/cancel`, { reason: 'too late' })
  t.match(cancel.json().data, { code: 'INVALID_TRANSITION', from: 'Desembolsado', to: 'Anulado', allowed: ['Pagado'] })
  const other = await l.requestCredit({ creditLineId, debtorId })
  const cancelled = await l.call('POST', `/v1/credits/${other.ID}/cancel`, { reason: 'duplicate' })
  t.match(cancelled.json().data.credit, { state: 'Anulado', cancellationReason: 'duplicate' })
  const third = await l.requestCredit({ creditLineId, debtorId })
  const rejected = await l.call('POST', `/v1/credits/${third.ID}/reject`, { reason: 'income' })
  t.match(rejected.json().data.credit, { state: 'Rechazado', rejectionReason: 'income' })
  t.equal((await l.call('POST', `/v1/credits/${third.ID}/disburse`, { method: 'bank_transfer' })).statusCode, 409)
})

t.test('auditors: the event stream in order with metadata, and the credit as of a past moment', async (t) => {
  const clock = new ManualClock('2026-01-10T09:00:00.000Z')
  const svc = await createTestApp(t, { clock, config: { accessTokenTtl: 10 * 365 * 86_400 } })
  const l = await lending(svc)
  const creditLineId = await l.createLine()
  const debtorId = await createDebtor(svc.runtime, svc.organizationId)
  const credit = await l.requestCredit({ creditLineId, debtorId })
  clock.advance(DAY)
  const afterRequest = clock.now().toISOString()
  clock.advance(DAY)
  await l.call('POST', `/v1/credits/${credit.ID}/approve`)
  clock.advance(DAY)
  await l.call('POST', `/v1/credits/${credit.ID}/disburse`, { method: 'bank_transfer' })
  await svc.runtime.commands.execute(profileAggregate, debtorId, { type: 'UpdateProfile', natural: { firstName: 'Anabel' }, now: clock.now().toISOString() },
    { organizationId: svc.organizationId, actorId: 'test', correlationId: 'c' })

  const events = await l.call('GET', `/v1/credits/${credit.ID}/events`)
  t.equal(events.statusCode, 200)
  const list = events.json().data.events
  t.same(list.map((e: { type: string }) => e.type), ['CreditRequested', 'CreditApproved', 'CreditDisbursed'])
  t.same(list.map((e: { revision: number }) => e.revision), [0, 1, 2])
  t.match(list[0].data, { creditId: credit.ID, principal: '1000000.00', installments: { length: 12 } }, 'the event data in full')
  t.match(list[1].metadata, { organizationId: svc.organizationId, actorId: 'test-admin', occurredAt: '2026-01-12T09:00:00.000Z', schemaVersion: 1 })
  const page = await l.call('GET', `/v1/credits/${credit.ID}/events?from=1&limit=1`)
  t.same(page.json().data.events.map((e: { type: string }) => e.type), ['CreditApproved'])
  t.same(page.json().pagination, { from: 1, limit: 1, next: 2 })

  const then = await l.call('GET', `/v1/credits/${credit.ID}?asOf=${afterRequest}`)
  t.equal(then.statusCode, 200)
  t.match(then.json().data.credit, { state: 'Solicitado', approvedAt: null, debtor: { name: 'Ana Gómez' }, installments: { length: 12 } })
  const now = await l.call('GET', `/v1/credits/${credit.ID}`)
  t.match(now.json().data.credit, { state: 'Desembolsado', debtor: { name: 'Anabel Gómez' } }, 'the read model follows the debtor\'s profile')
  const before = await l.call('GET', `/v1/credits/${credit.ID}?asOf=2026-01-01T00:00:00.000Z`)
  t.equal(before.statusCode, 404, 'before its request the credit did not exist')
  const asOfNow = await l.call('GET', `/v1/credits/${credit.ID}?asOf=${clock.now().toISOString()}`)
  t.same(asOfNow.json().data.credit, now.json().data.credit, 'rebuilt from events, the credit equals the read model')
  const later = await l.call('GET', `/v1/credits/${credit.ID}?asOf=2099-12-31T00:00:00Z`)
  t.same(later.json().data.credit, now.json().data.credit, 'a moment after now reads as now: no arrears forecast')
})

t.test('arrears are derived: days past due grow with time, the state does not change', async (t) => {
  const clock = new ManualClock('2026-01-10T09:00:00.000Z')
  const svc = await createTestApp(t, { clock, config: { accessTokenTtl: 10 * 365 * 86_400 } })
  const l = await lending(svc)
  const credit = await l.disbursedCredit()
  t.equal(credit.installments[0]?.outstanding, '88848.79')
  clock.advance(45 * DAY)
  const late = (await l.call('GET', `/v1/credits/${credit.ID}`)).json().data.credit
  t.match(late, { state: 'Desembolsado', daysPastDue: 14, nextDueDate: '2026-02-10' })
  t.same(late.installments.slice(0, 2).map((i: { daysPastDue: number }) => i.daysPastDue), [14, 0])
})

t.test('lists filter by state, debtor and line, newest first, paginated', async (t) => {
  const clock = new ManualClock('2026-01-10T09:00:00.000Z')
  const svc = await createTestApp(t, { clock, config: { accessTokenTtl: 10 * 365 * 86_400 } })
  const l = await lending(svc)
  const lineA = await l.createLine()
  const lineB = await l.createLine({ name: 'B' })
  const ana = await createDebtor(svc.runtime, svc.organizationId)
  const bruno = await createDebtor(svc.runtime, svc.organizationId, 'Bruno')
  const ids: string[] = []
  for (const [creditLineId, debtorId] of [[lineA, ana], [lineB, ana], [lineA, bruno]] as const) {
    clock.advance(60_000)
    ids.push((await l.requestCredit({ creditLineId, debtorId })).ID)
  }
  await l.call('POST', `/v1/credits/${ids[0]}/approve`)
  const list = async (query: string) => (await l.call('GET', `/v1/credits${query}`)).json()
  t.same((await list('')).data.map((c: { ID: string }) => c.ID), [...ids].reverse())
  t.same((await list('?state=Aprobado')).data.map((c: { ID: string }) => c.ID), [ids[0]])
  t.same((await list(`?debtorId=${ana}`)).data.map((c: { ID: string }) => c.ID), [ids[1], ids[0]])
  t.same((await list(`?creditLineId=${lineA}&debtorId=${bruno}`)).data.map((c: { ID: string }) => c.ID), [ids[2]])
  const paged = await list('?limit=2&page=2')
  t.same(paged.pagination, { current_page: 2, total_pages: 2, total_items: 3, items_per_page: 2 })
  t.notOk('installments' in paged.data[0], 'lists leave the schedule out')
  t.equal((await l.call('GET', '/v1/credits?state=Perdido')).statusCode, 400)
  const sameMinute: string[] = []
  for (let i = 0; i < 3; i++) sameMinute.push((await l.requestCredit({ creditLineId: lineB, debtorId: bruno })).ID)
  t.same((await list(`?creditLineId=${lineB}&debtorId=${bruno}`)).data.map((c: { ID: string }) => c.ID), [...sameMinute].reverse(),
    'credits requested at one instant are newest first too')
})

t.test('another organization\'s credit is not found, whatever the route; readers cannot write', async (t) => {
  const svc = await createTestApp(t)
  const l = await lending(svc)
  const credit = await l.disbursedCredit()
  const other = await createOrganization(svc, 'Otra')
  const outsider = await memberToken(svc, other)
  const as = (method: 'GET' | 'POST', url: string, payload?: object) =>
    svc.call({ method, url, token: outsider, organizationId: other, ...(payload === undefined ? {} : { payload }) })
  for (const [method, url, payload] of [
    ['GET', `/v1/credits/${credit.ID}`], ['GET', `/v1/credits/${credit.ID}?asOf=2030-01-01T00:00:00Z`], ['GET', `/v1/credits/${credit.ID}/events`],
    ['GET', `/v1/credits/${credit.ID}/installments`], ['POST', `/v1/credits/${credit.ID}/cancel`, { reason: 'x' }],
  ] as const) {
    t.equal((await as(method, url, payload)).statusCode, 404, `${method} ${url}`)
  }
  t.same((await as('GET', '/v1/credits')).json().data, [])
  const analyst = await memberToken(svc, svc.organizationId, 'analyst')
  t.equal((await l.call('GET', `/v1/credits/${credit.ID}`, undefined, analyst)).statusCode, 200)
  t.equal((await l.call('POST', `/v1/credits/${credit.ID}/cancel`, { reason: 'x' }, analyst)).statusCode, 403)
})

t.test('a first due date more than 12 months after the request, or whose schedule would end after 9999-12-31, is refused with 400 on body.firstDueDate', async (t) => {
  const svc = await createTestApp(t, { config: { processesEnabled: false } })
  const l = await lending(svc)
  const creditLineId = await l.createLine()
  const debtorId = await createDebtor(svc.runtime, svc.organizationId)
  const today = svc.runtime.clock.now().toISOString().slice(0, 10)
  const tooFar = await l.call('POST', '/v1/credits', { creditLineId, debtorId, firstDueDate: addMonths(today, 13), term: 12 })
  t.equal(tooFar.statusCode, 400)
  t.match(tooFar.json().data, { code: 'VALIDATION_ERROR', errors: [{ field: 'body.firstDueDate', message: `must be within 12 months of the request date (${addMonths(today, 12)})` }] })
  t.equal((await l.call('POST', '/v1/credits', { creditLineId, debtorId, firstDueDate: addMonths(today, 12), term: 12 })).statusCode, 201, 'twelve months is taken')

  const late = await createTestApp(t, { clock: new ManualClock('9998-12-01T09:00:00.000Z'), config: { processesEnabled: false, accessTokenTtl: 86_400 } })
  const m = await lending(late)
  const line = await m.createLine()
  const debtor = await createDebtor(late.runtime, late.organizationId)
  const far = await m.call('POST', '/v1/credits', { creditLineId: line, debtorId: debtor, firstDueDate: '9999-06-30', term: 12 })
  t.equal(far.statusCode, 400)
  t.match(far.json().data, { code: 'VALIDATION_ERROR', errors: [{ field: 'body.firstDueDate', message: /on or before 9999-12-31/ }] })
  const last = await m.disbursedCredit({ creditLineId: line, firstDueDate: '9999-01-31', term: 12 })
  t.equal((last as unknown as { maturityDate: string }).maturityDate, '9999-12-31')
  t.equal((await m.call('GET', '/v1/credits')).statusCode, 200)
})

t.test('a first due date eleven days after disbursement charges eleven days of interest on the first installment, everywhere the credit shows', async (t) => {
  const svc = await createTestApp(t, { clock: new ManualClock('2026-01-25T09:00:00.000Z'), config: { processesEnabled: false } })
  const l = await lending(svc)
  const credit = await l.disbursedCredit({ creditLineId: await l.createLine(), firstDueDate: '2026-02-05' })
  t.match(credit.installments[0], { dueDate: '2026-02-05', principal: '78848.79', interest: '3666.67', amount: '82515.46' }, '12 % N.M.V. × 11/360 of 1,000,000.00')
  t.same(credit.installments.slice(1).map((i) => i.amount), Array.from({ length: 10 }, () => '88848.79').concat(['88848.76']), 'the others as the level schedule')
  const shown = (await l.call('GET', `/v1/credits/${credit.ID}`)).json().data.credit
  t.match(shown, { totalInterest: '59852.12', totalAmount: '1059852.12', installmentAmount: '88848.79', balances: { outstandingInterest: '59852.12' } })
  t.same(shown.firstPeriod, { months: 0, days: 11 }, 'the view says which period it is')
  const onDueDate = (await l.call('GET', `/v1/payables/${credit.ID}/payoff?date=2026-02-05`)).json().data.payoff
  t.match(onDueDate, { principal: '1000000.00', interest: '3666.67' }, 'the payoff on the first due date owes that interest whole')
})

t.test('a credit an earlier release disbursed with due dates past year 9999 still reads, never past due', async (t) => {
  const svc = await createTestApp(t, { config: { processesEnabled: false } })
  const l = await lending(svc)
  const creditLineId = await l.createLine()
  const debtorId = await createDebtor(svc.runtime, svc.organizationId)
  const requested = await l.requestCredit({ creditLineId, debtorId, term: 12 })
  t.equal((await l.call('POST', `/v1/credits/${requested.ID}/approve`)).statusCode, 200)
  // What disbursement recorded before such dates were refused: due dates from a first due date of 9999-06-30, five-digit years after 9999-12.
  const dates = Array.from({ length: 12 }, (_, k) => addMonths('9999-06-30', k))
  t.equal(dates.at(-1), '10000-05-30')
  const { revision } = await svc.runtime.commands.load(creditAggregate, requested.ID)
  const disbursedAt = svc.runtime.clock.now().toISOString()
  const result = await svc.runtime.commands.appendRaw(`credit-${requested.ID}`, [{ type: 'CreditDisbursed', data: {
    creditId: requested.ID, organizationId: svc.organizationId, creditLineId, debtorId, principal: '1000000.00', currency: 'COP', method: 'bank_transfer',
    reference: '', firstDueDate: '9999-06-30', maturityDate: '10000-05-30', disbursedBy: 'test', disbursedAt,
    installments: requested.installments.map((i) => ({ installmentId: i.ID, number: i.number, dueDate: dates[i.number - 1] ?? '' })),
  } }], revision, { organizationId: svc.organizationId, actorId: 'test', correlationId: newId() })
  await svc.runtime.settle(result.position)
  for (const url of [`/v1/credits/${requested.ID}`, `/v1/credits/${requested.ID}?asOf=${new Date(Date.now() + DAY).toISOString()}`]) {
    const read = await l.call('GET', url)
    t.equal(read.statusCode, 200, url)
    const credit = read.json().data.credit
    t.match(credit, { state: 'Desembolsado', daysPastDue: 0, maturityDate: '10000-05-30' }, url)
    t.same(credit.installments.map((i: { dueDate: string; daysPastDue: number }) => [i.dueDate, i.daysPastDue]).slice(-2),
      [['10000-04-30', 0], ['10000-05-30', 0]], 'the dates as recorded, not yet due')
  }
  t.equal((await l.call('GET', `/v1/credits/${requested.ID}/installments`)).statusCode, 200)
  const list = await l.call('GET', '/v1/credits')
  t.equal(list.statusCode, 200, 'the organization\'s list still answers')
  t.equal(list.json().data[0].daysPastDue, 0)
})

t.test('a line rate recorded before rates were bounded, too small for 40 digits, gives the zero-rate schedule, not Infinity', async (t) => {
  const svc = await createTestApp(t, { config: { processesEnabled: false } })
  const l = await lending(svc)
  const creditLineId = await l.createLine({ rateType: 'FIXED_NOMINAL' })
  const refused = await l.call('PATCH', `/v1/credit-lines/${creditLineId}`, { rate: '0.0000000000000000000000000000000000000000001' })
  t.equal(refused.statusCode, 400, 'new rates carry at most 10 decimals')
  t.match(refused.json().data.errors, [{ field: 'body.rate' }])
  const result = await svc.runtime.commands.execute(creditLineAggregate, creditLineId, {
    type: 'UpdateCreditLine', changes: { rate: '0.0000000000000000000000000000000000000000001' }, now: svc.runtime.clock.now().toISOString(),
  }, { organizationId: svc.organizationId, actorId: 'test', correlationId: newId() })
  await svc.runtime.settle(result.position)
  const credit = await l.requestCredit({ creditLineId, debtorId: await createDebtor(svc.runtime, svc.organizationId) })
  t.match(credit, { installmentAmount: '83333.33', totalInterest: '0.00', totalAmount: '1000000.00' })
  t.same((credit.installments as Array<{ amount: string }>).map((i) => i.amount).slice(0, 2), ['83333.33', '83333.33'])
  t.equal((await l.call('GET', '/v1/credits')).json().data[0].installmentAmount, '83333.33')
})

t.test('a credit whose installments would round to 0 is refused with 400 on body.principal and body.term', async (t) => {
  const svc = await createTestApp(t, { config: { processesEnabled: false } })
  const l = await lending(svc)
  const creditLineId = await l.createLine({ currency: 'JPY', rate: '0', principalMin: '1', principalDefault: '100', principalMax: '1000', timeMin: 1, timeMax: 480 })
  const debtorId = await createDebtor(svc.runtime, svc.organizationId)
  const tiny = await l.call('POST', '/v1/credits', { creditLineId, debtorId, principal: '100', term: 480 })
  t.equal(tiny.statusCode, 400)
  t.match(tiny.json().data, { code: 'VALIDATION_ERROR', errors: [
    { field: 'body.principal', message: /100 JPY over 480 months leaves 479 installments of 0 JPY/ }, { field: 'body.term' },
  ] })
  t.equal((await l.call('GET', '/v1/credits')).json().data.length, 0, 'nothing recorded')
  const fits = await l.requestCredit({ creditLineId, debtorId, principal: '480', term: 480 })
  t.equal(fits.installmentAmount, '1')
})

t.test('a principal beyond the money bound is refused with 400, whether given or the default of a line recorded before the bound', async (t) => {
  const svc = await createTestApp(t, { config: { processesEnabled: false } })
  const l = await lending(svc)
  const creditLineId = await l.createLine()
  const result = await svc.runtime.commands.execute(creditLineAggregate, creditLineId, {
    type: 'UpdateCreditLine', changes: { principalMax: `1${'0'.repeat(60)}`, principalDefault: `1${'0'.repeat(50)}` }, now: svc.runtime.clock.now().toISOString(),
  }, { organizationId: svc.organizationId, actorId: 'test', correlationId: newId() })
  await svc.runtime.settle(result.position)
  const debtorId = await createDebtor(svc.runtime, svc.organizationId)
  for (const body of [{ principal: '123456789012345678901234567890123456789012345678.37' }, {}]) {
    const response = await l.call('POST', '/v1/credits', { creditLineId, debtorId, ...body })
    t.equal(response.statusCode, 400, JSON.stringify(body))
    t.match(response.json().data, { code: 'VALIDATION_ERROR', errors: [{ field: 'body.principal' }] })
  }
  const largest = await l.requestCredit({ creditLineId, debtorId, principal: '999999999999999.99' })
  const installments: Array<{ principal: string }> = (await l.call('GET', `/v1/credits/${largest.ID}/installments`)).json().data.installments
  const principals = installments.reduce((sum, i) => sum.plus(i.principal), new Decimal(0))
  t.equal(principals.toFixed(2), '999999999999999.99', 'the installments add up to the principal')
})

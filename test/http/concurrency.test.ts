/**
 * Concurrency regression tests: requests fired together (Promise.all over
 * app.inject) against one aggregate, repeated a few rounds to give races a
 * chance. Each test checks that no write is lost or applied twice, that no
 * limit is exceeded, that nothing answers 5xx, and that the read models agree
 * with the event log once they have caught up.
 */
import { Decimal } from 'decimal.js'
import type { LightMyRequestResponse } from 'fastify'
import t, { type Test } from 'tap'
import { creditLimitAggregate } from '../../src/commands/creditLimit.js'
import { builtInRoleTemplateId } from '../../src/commands/identity.js'
import type { RecordedEvent } from '../../src/events/catalogue.js'
import { ManualClock } from '../../src/shared/clock.js'
import { createTestApp, requestToken, type TestApp } from '../helpers/app.js'
import { blockingDataSet, creditsSource } from '../helpers/exports.js'
import { firing, until } from '../helpers/firing.js'
import { createDebtor, lending, nextEvent, type Lending } from '../helpers/lending.js'
import { createOrganization } from '../helpers/members.js'
import { startSink } from '../helpers/sink.js'

type Response = LightMyRequestResponse

const ROUNDS = 3

interface WireEvent {
  id: string
  type: string
  revision: number
  data: Record<string, unknown>
}

interface Allocation { installmentId: string; number: number; principal: string; interest: string; amount: string; paidInFull: boolean }

interface CreditView {
  ID: string
  state: string
  totalAmount: string
  principal: string
  installmentsPaid: number
  balances: { outstandingPrincipal: string; outstandingInterest: string; outstandingTotal: string; paidTotal: string; waivedInterest: string; unapplied: string }
  installments: Array<{ ID: string; number: number; amount: string; paidAmount: string; outstanding: string; status: string }>
}

const ordersOf = (creditId: string, installment: string) => `/v1/payables/${creditId}/installments/${installment}/orders`

/** A fresh service with one credit line of the test organization, through its API. */
const withCreditLine = async (t: Test) => {
  const svc = await createTestApp(t)
  const l = await lending(svc)
  return { svc, l, creditLineId: await l.createLine() }
}

const codeOf = (response: Response): string | null => {
  try {
    const body: { data?: { code?: unknown } } = response.json()
    return typeof body.data?.code === 'string' ? body.data.code : null
  } catch {
    return null
  }
}

const show = (response: Response) => `${response.statusCode} ${response.body.slice(0, 240)}`

/** Every answer is below 500 (and a comment tallies the answers, to see which races occurred). */
const noServerErrors = (t: Test, responses: readonly Response[], what: string) => {
  const tally = new Map<string, number>()
  for (const r of responses) {
    const key = `${r.statusCode}${codeOf(r) === null ? '' : ` ${codeOf(r)}`}`
    tally.set(key, (tally.get(key) ?? 0) + 1)
  }
  t.comment(`${what}: ${[...tally].map(([key, n]) => `${n}× ${key}`).join(', ')}`)
  t.same(responses.filter((r) => r.statusCode >= 500).map(show), [], `${what}: no 5xx`)
}

/** Every answer is a 2xx or a 409 with one of the codes named. */
const onlyConflicts = (t: Test, responses: readonly Response[], codes: readonly string[], what: string) =>
  t.same(responses.filter((r) => !(r.statusCode < 300 || (r.statusCode === 409 && codes.includes(codeOf(r) ?? '')))).map(show), [],
    `${what}: every answer is a 2xx or 409 ${codes.join('/')}`)

const sum = (values: readonly string[]): Decimal => values.reduce((total, value) => total.plus(value), new Decimal(0))

/** The credit's whole event stream, through its auditor's route. */
const creditEvents = async (l: Lending, creditId: string): Promise<WireEvent[]> => {
  const events: WireEvent[] = []
  let from: number | null = 0
  while (from !== null) {
    const response = await l.call('GET', `/v1/credits/${creditId}/events?from=${from}&limit=1000`)
    if (response.statusCode !== 200) throw new Error(`events: ${show(response)}`)
    const body: { data: { events: WireEvent[] }; pagination: { next: number | null } } = response.json()
    events.push(...body.data.events)
    from = body.pagination.next
  }
  return events
}

const streamOf = async (svc: TestApp, streamId: string): Promise<RecordedEvent[]> => {
  const events: RecordedEvent[] = []
  for await (const event of svc.runtime.history(streamId)) events.push(event)
  return events
}

const creditOf = async (l: Lending, creditId: string, asOf?: string): Promise<CreditView> => {
  const response = await l.call('GET', `/v1/credits/${creditId}${asOf === undefined ? '' : `?asOf=${encodeURIComponent(asOf)}`}`)
  if (response.statusCode !== 200) throw new Error(`credit: ${show(response)}`)
  return response.json().data.credit
}

/** Waits (event-driven, bounded) until the credit read model has applied every order named. */
const appliedInReadModel = async (svc: TestApp, creditId: string, orderIds: readonly string[]) => {
  await until(svc.runtime, async () => {
    const doc = await svc.runtime.queries.credits.get(svc.organizationId, creditId)
    return doc !== null && orderIds.every((id) => doc.appliedOrders.includes(id))
  })
}

/**
 * Checks a credit's read models against its event log: the balances and
 * installments the API shows (credit read model), the installment documents,
 * and the credit rebuilt from its events (`asOf`) all follow from the
 * CreditPaymentApplied events, each order applied once.
 */
const readModelsAgreeWithLog = async (t: Test, svc: TestApp, l: Lending, creditId: string, approvedOrders: readonly string[]) => {
  const events = await creditEvents(l, creditId)
  const applied = events.filter((e) => e.type === 'CreditPaymentApplied')
  const appliedOrders = applied.map((e) => String(e.data['orderId']))
  t.same([...appliedOrders].sort(), [...approvedOrders].sort(), 'each approved order is applied exactly once, and nothing else is')
  const requested = events.find((e) => e.type === 'CreditRequested')
  const totalAmount = String(requested?.data['totalAmount'])
  const appliedSum = sum(applied.map((e) => String(e.data['appliedAmount'])))
  const unappliedSum = sum(applied.map((e) => String(e.data['unappliedAmount'])))
  for (const event of applied) {
    const { amount, appliedAmount, unappliedAmount } = event.data as { amount: string; appliedAmount: string; unappliedAmount: string }
    t.ok(new Decimal(appliedAmount).plus(unappliedAmount).equals(amount), `order ${String(event.data['orderId']).slice(0, 8)}: applied + unapplied = its amount`)
  }
  // A zero order that paid the credit off forgave the interest of later periods (docs/credits.md, "Paying a credit off").
  const waivers = applied.flatMap((e) => (e.data['payoff'] as { waivers: Array<{ interest: string }> } | undefined)?.waivers ?? [])
  const waivedSum = sum(waivers.map((w) => w.interest))
  const outstanding = new Decimal(totalAmount).minus(appliedSum).minus(waivedSum)
  t.ok(outstanding.gte(0), 'never more applied than the schedule owes')
  const last = applied.at(-1)?.data['outstanding'] as { total: string } | undefined
  if (last !== undefined) t.equal(new Decimal(last.total).toFixed(2), outstanding.toFixed(2), 'the last application\'s outstanding = schedule total − Σ applied − Σ forgiven')

  const view = await creditOf(l, creditId)
  t.equal(view.balances.outstandingTotal, outstanding.toFixed(2), 'read model: outstanding = schedule total − Σ applied − Σ forgiven')
  t.equal(view.balances.waivedInterest, waivedSum.toFixed(2), 'read model: waivedInterest = Σ forgiven')
  t.equal(view.balances.paidTotal, appliedSum.toFixed(2), 'read model: paidTotal = Σ applied')
  t.equal(new Decimal(view.balances.unapplied).toFixed(2), unappliedSum.toFixed(2), 'read model: unapplied = Σ unapplied')
  const paidByInstallment = new Map<string, Decimal>()
  for (const event of applied) {
    for (const allocation of event.data['allocations'] as Allocation[]) {
      paidByInstallment.set(allocation.installmentId, (paidByInstallment.get(allocation.installmentId) ?? new Decimal(0)).plus(allocation.amount))
    }
  }
  t.same(
    view.installments.map((i) => [i.number, i.paidAmount]),
    view.installments.map((i) => [i.number, (paidByInstallment.get(i.ID) ?? new Decimal(0)).toFixed(2)]),
    'read model: each installment shows the sum of its allocations',
  )
  const paidInFull = view.installments.filter((i) => new Decimal(i.outstanding).isZero()).length
  t.equal(view.installmentsPaid, paidInFull, 'read model: installmentsPaid counts the installments that owe nothing')
  const creditPaid = events.filter((e) => e.type === 'CreditPaid').length
  t.equal(creditPaid, outstanding.isZero() ? 1 : 0, 'CreditPaid is recorded once, exactly when nothing is owed')
  t.equal(view.state, outstanding.isZero() ? 'Pagado' : 'Desembolsado')

  const rebuilt = await creditOf(l, creditId, new Date(Date.now() + 60_000).toISOString())
  t.same({ balances: rebuilt.balances, installmentsPaid: rebuilt.installmentsPaid, state: rebuilt.state, installments: rebuilt.installments.map((i) => i.paidAmount) },
    { balances: view.balances, installmentsPaid: view.installmentsPaid, state: view.state, installments: view.installments.map((i) => i.paidAmount) },
    'the credit rebuilt from its events (asOf) equals the read model')
  const installmentDocs = await svc.runtime.queries.credits.installmentsOf(creditId)
  t.same(installmentDocs.map((d) => [d.number, d.paidAmount, d.outstanding, d.status, d.creditState]),
    view.installments.map((i) => [i.number, i.paidAmount, i.outstanding, i.status, view.state]),
    'the installment documents agree with the credit read model')
  return { outstanding, appliedSum, unappliedSum, waivedSum, view }
}

t.test('one payment order approved by ten concurrent requests completes once and is applied to the credit once', async (t) => {
  const { svc, l, creditLineId } = await withCreditLine(t)
  for (let round = 0; round < ROUNDS; round++) {
    const credit = await l.disbursedCredit({ creditLineId, term: 6 })
    const installment = credit.installments[round % credit.installments.length]!
    const created = await l.call('POST', ordersOf(credit.ID, installment.ID), {})
    t.equal(created.statusCode, 201, show(created))
    const order: { ID: string; Amount: string } = created.json().order
    const approvals = await Promise.all(Array.from({ length: 10 }, () => l.call('POST', `${ordersOf(credit.ID, installment.ID)}/${order.ID}/approve`)))
    noServerErrors(t, approvals, `round ${round}`)
    t.equal(approvals.filter((r) => r.statusCode === 200).length, 1, `round ${round}: exactly one approval succeeds`)
    t.match(approvals.find((r) => r.statusCode === 200)?.json().order, { ID: order.ID, Status: 'completed', ApproverID: 'test-admin' }, 'it answers the completed order')
    onlyConflicts(t, approvals, ['INVALID_TRANSITION'], `round ${round}`)
    t.ok(approvals.filter((r) => r.statusCode === 409).every((r) => r.json().data.from === 'completed'),
      'the others are told the order is already completed')

    await appliedInReadModel(svc, credit.ID, [order.ID])
    const orderEvents = await streamOf(svc, `order-${order.ID}`)
    t.equal(orderEvents.filter((e) => e.type === 'PaymentOrderApproved').length, 1, 'one PaymentOrderApproved on the order stream')
    const { view } = await readModelsAgreeWithLog(t, svc, l, credit.ID, [order.ID])
    t.match(view, { installmentsPaid: 1, balances: { paidTotal: order.Amount } }, 'the installment is paid once')
    t.match(view.installments.find((i) => i.ID === installment.ID), { status: 'paid', paidAmount: installment.amount, outstanding: '0.00' })
    const read = await l.call('GET', `${ordersOf(credit.ID, installment.ID)}/${order.ID}`)
    t.match(read.json(), { Status: 'completed', Application: { appliedAmount: order.Amount, unappliedAmount: '0.00' } })
  }
})

t.test('concurrent orders on every installment racing a zero order: each approved payment is applied once and the balances add up', async (t) => {
  const { svc, l, creditLineId } = await withCreditLine(t)
  for (let round = 0; round < ROUNDS; round++) {
    const credit = await l.disbursedCredit({ creditLineId, term: 6 })
    // Each pipeline creates an order, then approves it; all pipelines run at once. Installments 1–3 get two partial orders each.
    const targets: Array<{ installment: string; body: Record<string, string> }> = [
      ...credit.installments.map((i) => ({ installment: i.ID, body: {} })),
      ...credit.installments.slice(0, 3).map((i) => ({ installment: i.ID, body: { Amount: '10000.00' } })),
      { installment: 'zero', body: {} },
      { installment: 'zero', body: {} },
    ]
    const pipeline = async ({ installment, body }: { installment: string; body: Record<string, string> }) => {
      const created = await l.call('POST', ordersOf(credit.ID, installment), body)
      if (created.statusCode !== 201) return { created, approved: null, orderId: null }
      const orderId: string = created.json().order.ID
      const approved = await l.call('POST', `${ordersOf(credit.ID, installment)}/${orderId}/approve`)
      return { created, approved, orderId }
    }
    const first = Promise.all(targets.map(pipeline))
    // More orders start once the first wave (zero orders included) is approved: they race the application of those payments.
    const late = first.then(() => Promise.all(credit.installments.slice(3).map((i) => pipeline({ installment: i.ID, body: { Amount: '5000.00' } }))))
    const results = [...await first, ...await late]
    const responses = results.flatMap((r) => (r.approved === null ? [r.created] : [r.created, r.approved]))
    noServerErrors(t, responses, `round ${round}`)
    // A creation may find the installment (or the credit) already paid by an order applied meanwhile.
    onlyConflicts(t, responses, ['INSTALLMENT_ALREADY_PAID', 'CREDIT_NOT_PAYABLE'], `round ${round}`)
    t.ok(results.every((r) => r.approved === null || r.approved.statusCode === 200), `round ${round}: every created order is approved`)
    const approved = results.filter((r) => r.approved?.statusCode === 200).map((r) => r.orderId ?? '')
    t.ok(approved.length >= 1, `round ${round}: ${approved.length} orders approved`)

    await appliedInReadModel(svc, credit.ID, approved)
    const orderAmounts = await Promise.all(approved.map(async (id) => (await svc.runtime.queries.paymentOrders.get(id))?.order?.amount ?? 'missing'))
    const { appliedSum, unappliedSum, waivedSum, outstanding } = await readModelsAgreeWithLog(t, svc, l, credit.ID, approved)
    t.equal(sum(orderAmounts).toFixed(2), appliedSum.plus(unappliedSum).toFixed(2), 'Σ approved order amounts = Σ applied + Σ unapplied (no money lost or invented)')
    t.comment(`round ${round}: ${approved.length} orders applied, ${appliedSum.toFixed(2)} applied, ${unappliedSum.toFixed(2)} unapplied, ${outstanding.toFixed(2)} outstanding`)
    t.equal(outstanding.toFixed(2), new Decimal(credit.installments.reduce((s, i) => s.plus(i.amount), new Decimal(0))).minus(appliedSum).minus(waivedSum).toFixed(2),
      'outstanding = schedule total − Σ applied − Σ forgiven (from the disbursed schedule)')
  }
})

t.test('concurrent disbursements against one credit limit never reserve beyond it; usedAmount is the sum of what was disbursed', async (t) => {
  const { svc, l, creditLineId } = await withCreditLine(t)
  const principal = '1000000.00'
  for (let round = 0; round < ROUNDS + 1; round++) {
    const debtorId = await createDebtor(svc.runtime, svc.organizationId, `Deudor${round}`)
    const limitResponse = await l.call('POST', '/v1/creditor/credit-limits', { debtorId, maxAmount: '5000000.00', currency: 'COP', expirationDate: '2099-12-31' })
    t.equal(limitResponse.statusCode, 201, show(limitResponse))
    const limitId: string = limitResponse.json().creditLimit.creditLimitId
    // Requests reserve nothing (docs/credit-limits.md): eight that each fit today all pass.
    const requests = await Promise.all(Array.from({ length: 8 }, () => l.call('POST', '/v1/credits', { creditLineId, debtorId, principal })))
    noServerErrors(t, requests, `round ${round} requests`)
    t.equal(requests.filter((r) => r.statusCode === 201).length, 8, 'each request is weighed against what is available now')
    const ids: string[] = requests.map((r) => r.json().data.credit.ID)
    const approvals = await Promise.all(ids.map((id) => l.call('POST', `/v1/credits/${id}/approve`, {})))
    t.ok(approvals.every((r) => r.statusCode === 200), 'all approved')

    // Every disbursement at once, with more requests, and in the odd rounds a change of the limit's amount racing them.
    const newMax = round % 2 === 1 ? '3000000.00' : null
    const [disbursements, lateRequests, patch] = await Promise.all([
      Promise.all(ids.map((id) => l.call('POST', `/v1/credits/${id}/disburse`, { method: 'bank_transfer' }))),
      Promise.all(Array.from({ length: 3 }, () => l.call('POST', '/v1/credits', { creditLineId, debtorId, principal }))),
      newMax === null ? Promise.resolve(null) : l.call('PATCH', `/v1/creditor/credit-limits/${limitId}`, { maxAmount: newMax }),
    ])
    const all = [...disbursements, ...lateRequests, ...(patch === null ? [] : [patch])]
    noServerErrors(t, all, `round ${round}`)
    // Commands on the limit's stream take turns in the instance: none is told to retry.
    onlyConflicts(t, all, ['CREDIT_LIMIT_EXCEEDED'], `round ${round}`)

    const states = await Promise.all(ids.map(async (id) => (await creditOf(l, id)).state))
    const disbursed = ids.filter((_, i) => states[i] === 'Desembolsado')
    t.same(states.filter((s) => s !== 'Desembolsado' && s !== 'Aprobado'), [], 'every credit is disbursed or still approved')
    if (newMax === null) t.equal(disbursed.length, 5, 'exactly five of 1 000 000 fit in 5 000 000')
    else t.ok(disbursed.length >= 3 && disbursed.length <= 5, `between three and five fit (${disbursed.length}), as the limit was lowered meanwhile`)

    // The limit's own stream: every checked reservation fit in the limit as it stood then; its exposures are the disbursed credits.
    let max = new Decimal(0)
    const exposures = new Map<string, Decimal>()
    for (const event of await streamOf(svc, `creditLimit-${limitId}`)) {
      if (event.type === 'CreditLimitCreated' || event.type === 'CreditLimitAmountChanged') max = new Decimal(event.data.maxAmount)
      if (event.type === 'CreditLimitReserved') {
        t.notOk(exposures.has(event.data.creditId), 'a credit is reserved once')
        exposures.set(event.data.creditId, new Decimal(event.data.amount))
        const used = sum([...exposures.values()].map((d) => d.toFixed()))
        t.equal(new Decimal(event.data.usedAmount).toFixed(2), used.toFixed(2), 'the event\'s usedAmount is the sum of exposures')
        if (event.data.checked) t.ok(used.lte(max), `reservation ${event.data.creditId.slice(0, 8)}: ${used.toFixed(2)} used ≤ ${max.toFixed(2)} limit`)
      }
      if (event.type === 'CreditLimitReleased') exposures.set(event.data.creditId, new Decimal(event.data.remaining))
    }
    t.same([...exposures.keys()].sort(), [...disbursed].sort(), 'reservations are held for exactly the disbursed credits')
    const expectedUsed = new Decimal(principal).times(disbursed.length)
    const limit = (await l.call('GET', `/v1/creditor/credit-limits/${limitId}`)).json().creditLimit
    t.equal(limit.usedAmount, expectedUsed.toFixed(2), 'the limit read model\'s usedAmount = Σ disbursed principal')
    t.equal(limit.availableAmount, new Decimal(limit.maxAmount).minus(expectedUsed).toFixed(2))
    if (newMax === null) t.ok(expectedUsed.lte(limit.maxAmount), 'within the limit')
    const undisbursed = ids.filter((id) => !disbursed.includes(id))
    for (const id of undisbursed.slice(0, 1)) {
      const refused = await l.call('POST', `/v1/credits/${id}/disburse`, { method: 'bank_transfer' })
      t.equal(codeOf(refused), 'CREDIT_LIMIT_EXCEEDED', 'an approved credit that did not fit is still refused')
    }
  }
})

t.test('concurrent PATCHes of different fields of one profile: each takes its turn and keeps its field', async (t) => {
  const svc = await createTestApp(t)
  const headers = { 'config-organization-id': svc.organizationId, 'organization-id': svc.organizationId }
  const call = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) =>
    svc.call({ method, url, token: svc.adminToken, headers, ...(payload === undefined ? {} : { payload }) })
  const original = {
    firstName: 'Ana', middleName: 'María', lastName: 'Gómez', secondLastName: 'Restrepo', documentType: 'CC', documentNumber: '1020304050',
    email: 'ana@example.co', phone: '+573001234567', address: 'Calle 1 # 2-3', monthlyIncome: '4500000.00', employerName: 'Café del Valle',
    occupation: 'Contadora', gender: 'female', birthDate: '1990-04-12',
  }
  for (let round = 0; round < ROUNDS; round++) {
    const created = await call('POST', '/v1/profiles', { type: 'natural', natural: original })
    t.equal(created.statusCode, 201, show(created))
    const id: string = created.json().data.ID
    const changes: Array<[string, string]> = [
      ['firstName', `Ana${round}`], ['middleName', `Lucía${round}`], ['lastName', `Pérez${round}`], ['secondLastName', `Mejía${round}`],
      ['email', `ana${round}@example.org`], ['phone', `+57300765432${round}`], ['address', `Carrera ${round} # 4-5`],
      ['monthlyIncome', `${round + 1}000000.00`], ['employerName', `Empresa ${round}`], ['occupation', `Auditora ${round}`],
    ]
    const answers = await Promise.all(changes.map(([field, value]) => call('PATCH', `/v1/profiles/${id}`, { natural: { [field]: value } })))
    noServerErrors(t, answers, `round ${round}`)
    onlyConflicts(t, answers, [], `round ${round}`)
    for (const [index, answer] of answers.entries()) {
      const [field, value] = changes[index]!
      if (answer.statusCode === 200) t.equal(answer.json().data.natural[field], value, `the answer to the ${field} change shows it`)
    }
    const profile = (await call('GET', `/v1/profiles/${id}`)).json().data.natural
    const expected = Object.fromEntries(changes.map(([field, value], index) =>
      [field, answers[index]!.statusCode === 200 ? value : (original as Record<string, string>)[field]]))
    t.match(profile, expected, `round ${round}: every field holds its value`)
    const updates = (await streamOf(svc, `profile-${id}`)).filter((e) => e.type === 'ProfileUpdated')
    t.equal(updates.length, answers.filter((a) => a.statusCode === 200).length, 'one ProfileUpdated per 200')
  }
})

t.test('concurrent POSTs of one Key with different bodies create one order; the others get it back (same body) or 409 IDEMPOTENCY_KEY_REUSED', async (t) => {
  const { svc, l, creditLineId } = await withCreditLine(t)
  for (let round = 0; round < ROUNDS; round++) {
    const credit = await l.disbursedCredit({ creditLineId, term: 6 })
    const [first, second] = credit.installments
    // Five different bodies (amounts, installments, collection costs), each sent twice, all at once.
    const bodies = [
      { installment: first!.ID, body: { Key: 'dup', Amount: '1000.00' } },
      { installment: first!.ID, body: { Key: 'dup', Amount: '2000.00' } },
      { installment: second!.ID, body: { Key: 'dup', Amount: '1000.00' } },
      { installment: first!.ID, body: { Key: 'dup', Amount: '1000.00', CollectionCosts: '500.00' } },
      { installment: 'zero', body: { Key: 'dup' } },
    ]
    const sent = [...bodies, ...bodies].map((b, index) => ({ ...b, index: index % bodies.length }))
    const answers = await Promise.all(sent.map(({ installment, body }) => l.call('POST', ordersOf(credit.ID, installment), body)))
    noServerErrors(t, answers, `round ${round}`)
    const winners = answers.filter((r) => r.statusCode === 201)
    t.equal(winners.length, 1, `round ${round}: one order is created`)
    const winner = winners[0]
    if (winner === undefined) continue
    const order: { ID: string; Amount: string; InstallmentID: string } = winner.json().order
    const winnerIndex = sent[answers.indexOf(winner)]!.index
    for (const [i, answer] of answers.entries()) {
      if (answer === winner) continue
      if (sent[i]!.index === winnerIndex) {
        t.equal(answer.statusCode, 200, 'the same body again gets the order back')
        t.same(answer.json().order, winner.json().order)
      } else {
        t.equal(answer.statusCode, 409, `another body with the Key is refused: ${show(answer)}`)
        t.match(answer.json().data, { code: 'IDEMPOTENCY_KEY_REUSED', key: 'dup', orderId: order.ID })
      }
    }
    const created = (await streamOf(svc, `order-${order.ID}`)).filter((e) => e.type === 'PaymentOrderCreated')
    t.equal(created.length, 1, 'one PaymentOrderCreated in the log')
    t.equal((await l.call('GET', ordersOf(credit.ID, order.InstallmentID))).json().pagination.total_items, 1, 'the read model lists one order')
    const won = sent[answers.indexOf(winner)]!
    t.equal(order.InstallmentID, won.installment, 'the order is the winning request\'s')
  }
})

t.test('a webhook linked to a credit line: N orders approved concurrently (each twice) are sent exactly N times', async (t) => {
  const sink = await startSink(t)
  const svc = await createTestApp(t, { config: { webhookAllowPrivateNetworks: true } })
  const f = await firing(svc, sink)
  const hook = await f.webhook({ tag: 'orders', path: '/orders', requestBody: '{"order": {{ .Order.ID | quote }}, "credit": {{ .Credit.ID | quote }}}' })
  const line = await f.line({ onOrderWebhooks: [hook] })
  const allOrders: string[] = []
  for (let round = 0; round < ROUNDS; round++) {
    const credit = await f.l.disbursedCredit({ creditLineId: line, term: 6 })
    const orders = await Promise.all(credit.installments.map(async (i) => {
      const created = await f.l.call('POST', ordersOf(credit.ID, i.ID), {})
      if (created.statusCode !== 201) throw new Error(show(created))
      return { installment: i.ID, id: created.json().order.ID as string }
    }))
    const approvals = await Promise.all([...orders, ...orders].map((o) => f.l.call('POST', `${ordersOf(credit.ID, o.installment)}/${o.id}/approve`)))
    noServerErrors(t, approvals, `round ${round}`)
    t.equal(approvals.filter((r) => r.statusCode === 200).length, orders.length, `round ${round}: each order approved once`)
    allOrders.push(...orders.map((o) => o.id))
    const sends = await f.settled(credit.ID, orders.length)
    await f.quiesce()
    const after = await f.sendsOf(credit.ID)
    t.equal(after.length, orders.length, `round ${round}: exactly ${orders.length} sends recorded for the credit`)
    t.same(after.map((s) => s.orderId).sort(), orders.map((o) => o.id).sort(), 'one send per order')
    t.equal(new Set(after.map((s) => s.trigger.eventId)).size, orders.length, 'one send per approval event')
    t.ok(sends.every((s) => s.status === 'delivered'), 'all delivered')
    const creditLogs = await f.l.call('GET', `/v1/credits/${credit.ID}/webhook-logs?limit=100`)
    t.equal(creditLogs.json().pagination.total_items, orders.length, 'the credit\'s send log lists each send once')
  }
  const received = f.received().map((r) => JSON.parse(r.body).order as string)
  t.same([...received].sort(), [...allOrders].sort(), 'the destination received each order exactly once')
  const logs = await f.api('GET', `/webhook/${hook}/logs?limit=100`)
  t.equal(logs.json().pagination.total_items, allOrders.length, 'the webhook\'s send log lists each send once')
})

t.test('an approved credit raced by disbursements and cancellations ends in one final state, and its limit reservation follows it', async (t) => {
  const { svc, l, creditLineId } = await withCreditLine(t)
  const debtorId = await createDebtor(svc.runtime, svc.organizationId)
  const limitResponse = await l.call('POST', '/v1/creditor/credit-limits', { debtorId, maxAmount: '50000000.00', currency: 'COP', expirationDate: '2099-12-31' })
  const limitId: string = limitResponse.json().creditLimit.creditLimitId
  const outcomes = new Set<string>()
  const disbursedIds: string[] = []
  for (let round = 0; round < ROUNDS + 3; round++) {
    const credit = await l.requestCredit({ creditLineId, debtorId, principal: '1000000.00' })
    t.equal((await l.call('POST', `/v1/credits/${credit.ID}/approve`, {})).statusCode, 200)
    const disburse = () => l.call('POST', `/v1/credits/${credit.ID}/disburse`, { method: 'bank_transfer' })
    const cancel = () => l.call('POST', `/v1/credits/${credit.ID}/cancel`, { reason: 'race' })
    // Alternate which kind goes first, so both outcomes occur.
    const calls = round % 2 === 0 ? [disburse, cancel, disburse, cancel, disburse] : [cancel, disburse, cancel, disburse, cancel]
    const answers = await Promise.all(calls.map((call) => call()))
    noServerErrors(t, answers, `round ${round}`)
    onlyConflicts(t, answers, ['INVALID_TRANSITION'], `round ${round}`)
    const final = (await creditOf(l, credit.ID)).state
    const wins = answers.filter((r) => r.statusCode === 200)
    t.equal(wins.length, 1, `round ${round}: exactly one move succeeds (${final})`)
    const events = await creditEvents(l, credit.ID)
    const moves = events.filter((e) => e.type === 'CreditDisbursed' || e.type === 'CreditCancelled').map((e) => e.type)
    t.equal(moves.length, 1, 'one final move in the log')
    t.equal(final, moves[0] === 'CreditDisbursed' ? 'Desembolsado' : 'Anulado', 'the read model shows it')
    outcomes.add(final)
    if (final === 'Desembolsado') disbursedIds.push(credit.ID)
  }
  // Once the exposure process has caught up, the limit counts exactly the disbursed credits.
  const expected = new Decimal('1000000.00').times(disbursedIds.length).toFixed(2)
  await until(svc.runtime, async () => (await l.call('GET', `/v1/creditor/credit-limits/${limitId}`)).json().creditLimit.usedAmount === expected).catch(() => undefined)
  const limit = (await l.call('GET', `/v1/creditor/credit-limits/${limitId}`)).json().creditLimit
  t.equal(limit.usedAmount, expected, 'usedAmount = Σ principal of the disbursed credits (a cancelled credit holds nothing)')
  const { state } = await svc.runtime.commands.load(creditLimitAggregate, limitId)
  const counted = Object.entries(state.exposures).filter(([, amount]) => !new Decimal(amount).isZero()).map(([id]) => id)
  t.same(counted.sort(), [...disbursedIds].sort(), 'the limit stream counts exactly the disbursed credits')
  t.comment(`final states seen: ${[...outcomes].join(', ')}`)
})

t.test('deleting a role template while users are created with it: either the users exist with it or it is deleted, never both', async (t) => {
  const svc = await createTestApp(t)
  const org = svc.organizationId
  const call = (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: object) =>
    svc.call({ method, url: `/v1/organization/${org}${url}`, token: svc.adminToken, ...(payload === undefined ? {} : { payload }) })
  for (let round = 0; round < ROUNDS + 1; round++) {
    const template = await call('POST', '/role-template', { name: `racy ${round}`, permissions: ['ReadCredit'] })
    t.equal(template.statusCode, 201, show(template))
    const templateId: string = template.json().data.id
    const usernames = [0, 1, 2].map((i) => `racer-${round}-${i}`)
    const creations = usernames.map((username) => () => call('POST', '/users', { username, password: 'correct horse battery', roleTemplateId: templateId }))
    const deletion = () => call('DELETE', `/role-template/${templateId}`)
    const calls = round % 2 === 0 ? [deletion, ...creations, deletion] : [...creations, deletion, deletion]
    const answers = await Promise.all(calls.map((c) => c()))
    noServerErrors(t, answers, `round ${round}`)
    const deletions = answers.filter((_, i) => calls[i] === deletion)
    const users = answers.filter((_, i) => calls[i] !== deletion)
    const deleted = deletions.some((r) => r.statusCode === 204)
    const createdUsers = users.filter((r) => r.statusCode === 201).length
    t.ok(users.every((r) => r.statusCode === 201 || (r.statusCode >= 400 && r.statusCode < 500)), 'user creations: 201 or a 4xx')
    t.ok(deletions.every((r) => r.statusCode === 204 || r.statusCode === 404 || codeOf(r) === 'ROLE_TEMPLATE_IN_USE'),
      `deletions: ${deletions.map(show).join(' | ')}`)
    t.notOk(deleted && createdUsers > 0, `round ${round}: a template that was deleted has no users created with it (deleted: ${deleted}, users: ${createdUsers})`)
    const read = await call('GET', `/role-template/${templateId}`)
    if (deleted) t.equal(read.statusCode, 404, 'the deleted template is gone')
    else t.equal(read.json().data.usage_count, createdUsers, 'usage_count = users created with it')
    // A user refused because the template went away leaves nothing behind: its username is free again.
    for (const [i, username] of usernames.entries()) {
      if (users[i]!.statusCode === 201) continue
      const again = await call('POST', '/users', { username, password: 'correct horse battery', roleTemplateId: builtInRoleTemplateId(org, 'analyst') })
      t.equal(again.statusCode, 201, `a refused creation leaves the username ${username} free: ${show(again)}`)
    }
  }
})

t.test('a user creation whose role template is deleted between its check and its assignment is refused and leaves no user behind', async (t) => {
  const svc = await createTestApp(t)
  const org = svc.organizationId
  const call = (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: object) =>
    svc.call({ method, url: `/v1/organization/${org}${url}`, token: svc.adminToken, ...(payload === undefined ? {} : { payload }) })
  // The interleaving the concurrent test above rarely hits, made deterministic: the DELETE runs (to its answer) just before
  // the workflow assigns the template, i.e. after it checked that the template exists.
  const commands = svc.runtime.commands
  const original = commands.execute.bind(commands)
  t.teardown(() => { commands.execute = original })
  for (let round = 0; round < ROUNDS; round++) {
    const templateId: string = (await call('POST', '/role-template', { name: `doomed ${round}`, permissions: ['ReadCredit'] })).json().data.id
    let deletion: Response | null = null
    commands.execute = (async (...args: Parameters<typeof original>) => {
      const command = args[2] as { type?: string }
      if (command.type === 'AssignRoleTemplate' && deletion === null) deletion = await call('DELETE', `/role-template/${templateId}`)
      return original(...args)
    }) as typeof commands.execute
    const username = `late-${round}`
    const created = await call('POST', '/users', { username, password: 'correct horse battery', roleTemplateId: templateId })
    commands.execute = original
    t.equal((deletion as Response | null)?.statusCode, 204, 'the template was deleted while the user was being created')
    t.ok(created.statusCode >= 400 && created.statusCode < 500, `the creation is refused with a 4xx: ${show(created)}`)
    const login = await requestToken(svc.app, {
      grant_type: 'password', username, password: 'correct horse battery', client_id: svc.config.adminClientId ?? '', client_secret: svc.config.adminClientSecret ?? '',
    })
    t.not(login.statusCode, 200, `the refused user cannot sign in: ${show(login)}`)
    const again = await call('POST', '/users', { username, password: 'another horse battery', roleTemplateId: builtInRoleTemplateId(org, 'analyst') })
    t.equal(again.statusCode, 201, `the username of a refused creation is free: ${show(again)}`)
  }
})

t.test('reports exports are capped per organization even when the canonical and the legacy route are called at once', async (t) => {
  const clock = new ManualClock('2026-03-10T09:00:00.000Z')
  const cap = 2
  const svc = await createTestApp(t, {
    clock, config: { exportsReportsMaxConcurrent: cap, exportsReportsMaxPerHour: 100 },
    beforeStart: (runtime) => {
      runtime.exports.sources.register(creditsSource)
      // Jobs that never finish: every admitted job stays queued or running, so the cap is what counts.
      runtime.exports.dataSets.register(blockingDataSet('reports'))
    },
  })
  for (let round = 0; round < ROUNDS; round++) {
    const organizationId = await createOrganization(svc, `Exportadora ${round}`)
    const canonical = () => svc.call({ method: 'POST', url: '/v1/exports', token: svc.adminToken, organizationId,
      payload: { type: 'reports', format: 'consolidated', columns: ['credits.id', 'credits.principal'] } })
    const legacy = () => svc.call({ method: 'POST', url: '/v1/reports/export', token: svc.adminToken, organizationId,
      payload: { columns: ['credits.id', 'credits.principal'] } })
    const answers = await Promise.all([canonical(), legacy(), canonical(), legacy(), canonical(), legacy()])
    noServerErrors(t, answers, `round ${round}`)
    t.same(answers.filter((r) => r.statusCode !== 202 && codeOf(r) !== 'EXPORT_RATE_LIMITED').map(show), [], 'each is admitted or 429')
    const admitted = answers.filter((r) => r.statusCode === 202).length
    const { active } = await svc.runtime.queries.exportJobs.reportsActivity(organizationId, '2000-01-01T00:00:00Z')
    t.ok(admitted <= cap, `round ${round}: at most ${cap} admitted (admitted ${admitted})`)
    t.ok(active <= cap, `round ${round}: at most ${cap} reports jobs queued or running (found ${active})`)
    t.equal(active, admitted, 'the read model holds each admitted job')
  }
})

t.test('a sandbox payment settled by its provider while people approve and reject it ends decided once, and is applied at most once', async (t) => {
  const clock = new ManualClock('2026-01-10T09:00:00.000Z')
  const svc = await createTestApp(t, { clock, config: { sandboxDelayMs: 1000, accessTokenTtl: 86_400 } })
  const l = await lending(svc)
  const creditLineId = await l.createLine({ provider: 'sandbox' })
  const credit = await l.disbursedCredit({ creditLineId, term: 6 })
  const outcomes = new Set<string>()
  for (let round = 0; round < ROUNDS + 1; round++) {
    const installment = credit.installments[round % credit.installments.length]!
    const url = ordersOf(credit.ID, installment.ID)
    // Round 2: the amount the sandbox declines.
    const amount = round === 2 ? '13.13' : '20000.00'
    const submitted = nextEvent(svc.runtime, 'PaymentOrderSubmitted')
    const created = await l.call('POST', url, { Amount: amount })
    t.equal(created.statusCode, 201, show(created))
    const orderId: string = created.json().order.ID
    await submitted
    clock.advance(1000)
    // The provider's poll starts first in even rounds; in odd rounds a few turns of the event loop after the requests.
    const poll = async () => {
      if (round % 2 === 1) for (let i = 0; i < 10 * round; i++) await new Promise((resolve) => setImmediate(resolve))
      await svc.runtime.scheduler.runNow('paymentOutcomes')
      return null
    }
    const api = await Promise.all([
      ...(round % 2 === 0 ? [poll()] : []),
      l.call('POST', `${url}/${orderId}/approve`),
      l.call('POST', `${url}/${orderId}/reject`, { reason: 'manual' }),
      l.call('POST', `${url}/${orderId}/approve`),
      l.call('POST', `${url}/${orderId}/reject`, { reason: 'manual' }),
      ...(round % 2 === 1 ? [poll()] : []),
    ])
    const answers = api.filter((r): r is Response => r !== null)
    noServerErrors(t, answers, `round ${round}`)
    onlyConflicts(t, answers, ['INVALID_TRANSITION'], `round ${round}`)
    t.ok(answers.filter((r) => r.statusCode === 200).length <= 1, 'at most one person decides it')
    const decisions = (await streamOf(svc, `order-${orderId}`)).filter((e) => e.type === 'PaymentOrderApproved' || e.type === 'PaymentOrderFailed')
    t.equal(decisions.length, 1, `round ${round}: one decision in the order's log (${decisions.map((e) => e.type).join(', ')})`)
    const approved = decisions[0]?.type === 'PaymentOrderApproved'
    outcomes.add(decisions[0]?.type ?? 'none')
    const order = (await l.call('GET', `${url}/${orderId}`)).json()
    t.equal(order.Status, approved ? 'completed' : 'failed', 'the order read model shows that decision')
    if (approved) await appliedInReadModel(svc, credit.ID, [orderId])
  }
  const approvedOrders: string[] = []
  for (const event of await streamOf(svc, `credit-${credit.ID}`)) if (event.type === 'CreditPaymentApplied') approvedOrders.push(event.data.orderId)
  await readModelsAgreeWithLog(t, svc, l, credit.ID, approvedOrders)
  t.comment(`decisions seen: ${[...outcomes].join(', ')}`)
})

t.test('payments on several credits of one debtor release their limit concurrently; usedAmount ends at their outstanding principal', async (t) => {
  const { svc, l, creditLineId } = await withCreditLine(t)
  for (let round = 0; round < ROUNDS - 1; round++) {
    const debtorId = await createDebtor(svc.runtime, svc.organizationId, `Pagadora${round}`)
    // Setting the limit twice at once: one limit per creditor, debtor and currency.
    const limits = await Promise.all(['30000000.00', '20000000.00', '25000000.00'].map((maxAmount) =>
      l.call('POST', '/v1/creditor/credit-limits', { debtorId, maxAmount, currency: 'COP', expirationDate: '2099-12-31' })))
    noServerErrors(t, limits, `round ${round} limits`)
    t.equal(limits.filter((r) => r.statusCode === 201).length, 1, 'one limit is created')
    onlyConflicts(t, limits, ['ALREADY_EXISTS'], 'the others are told it exists')
    const limitId: string = limits.find((r) => r.statusCode === 201)?.json().creditLimit.creditLimitId
    t.ok(limits.filter((r) => r.statusCode === 409).every((r) => r.json().data.creditLimitId === limitId), 'naming the one that exists')
    const credits = []
    for (let i = 0; i < 6; i++) credits.push(await l.disbursedCredit({ creditLineId, debtorId, principal: '1000000.00', term: 6 }))
    // Half are paid off with a zero order, the others pay their first installment; all approved at once.
    const orders = await Promise.all(credits.map(async (credit, i) => {
      const target = i % 2 === 0 ? 'zero' : credit.installments[0]!.ID
      const created = await l.call('POST', ordersOf(credit.ID, target), {})
      if (created.statusCode !== 201) throw new Error(show(created))
      return { credit: credit.ID, target, id: created.json().order.ID as string }
    }))
    const approvals = await Promise.all(orders.map((o) => l.call('POST', `${ordersOf(o.credit, o.target)}/${o.id}/approve`)))
    noServerErrors(t, approvals, `round ${round}`)
    t.ok(approvals.every((r) => r.statusCode === 200), 'all approved')
    for (const o of orders) await appliedInReadModel(svc, o.credit, [o.id])
    const outstanding = sum(await Promise.all(credits.map(async (c) => (await creditOf(l, c.ID)).balances.outstandingPrincipal)))
    const usedNow = async () => (await l.call('GET', `/v1/creditor/credit-limits/${limitId}`)).json().creditLimit.usedAmount as string
    await until(svc.runtime, async () => (await usedNow()) === outstanding.toFixed(2)).catch(() => undefined)
    t.equal(await usedNow(), outstanding.toFixed(2), `round ${round}: usedAmount = Σ outstanding principal of the debtor's credits`)
    const { state } = await svc.runtime.commands.load(creditLimitAggregate, limitId)
    t.equal(sum(Object.values(state.exposures)).toFixed(2), outstanding.toFixed(2), 'the limit stream counts the same')
  }
})

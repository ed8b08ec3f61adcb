import t, { type Test } from 'tap'
import { profileAggregate } from '../../src/commands/profile.js'
import type { RecordedEvent } from '../../src/events/catalogue.js'
import type { NaturalPerson } from '../../src/events/profile.js'
import { creditScoringProcess } from '../../src/processes/creditScoring.js'
import { ManualClock } from '../../src/shared/clock.js'
import { newId } from '../../src/shared/ids.js'
import { createTestApp } from '../helpers/app.js'
import { lending, nextEvent } from '../helpers/lending.js'
import { createProfile, defaultConfigOf, memberToken } from '../helpers/organizations.js'
import { consumerModel as model } from '../helpers/scoring.js'

const person = (birthDate: string, monthlyIncome: string, employmentType: NaturalPerson['employmentType']): NaturalPerson => ({
  firstName: 'Ana', lastName: 'Gómez', documentType: 'CC', documentNumber: newId().slice(-10), birthDate, monthlyIncome, employmentType,
})
// On 2026-01-15: 35 years → 80 × 0.3 = 24; 4 500 000.00 → 60 × 0.5 = 30; formal → 100 × 0.2 = 20; bonus +5: 79, approve.
const solvent = person('1990-06-01', '4500000.00', 'formal')
// 19 years → 50 × 0.3 = 15; 1 000 000.00 → 20 × 0.5 = 10; informal → 40 × 0.2 = 8; penalty −15: 18, reject.
const young = person('2006-06-01', '1000000.00', 'informal')
// 30 years → 24; 2 500 000.00 → 30; independent → 70 × 0.2 = 14; no bonus: 68, review.
const independent = person('1995-06-01', '2500000.00', 'independent')

const setup = async (t: Test, config: { processesEnabled?: boolean } = {}) => {
  const clock = new ManualClock('2026-01-15T12:00:00.000Z')
  // Tokens outlive the clock moves.
  const svc = await createTestApp(t, { clock, config: { accessTokenTtl: 400 * 86_400, ...config } })
  const lend = await lending(svc)
  const configId = await defaultConfigOf(svc, svc.organizationId)
  const base = `/v1/organization/${svc.organizationId}/config/${configId}/scoring-model`
  const headers = { 'config-organization-id': svc.organizationId, 'organization-id': svc.organizationId }
  const scoringModel = async (body: object = {}) => {
    const created = await svc.call({ method: 'POST', url: base, token: svc.adminToken, headers, payload: { ...model, ...body } })
    if (created.statusCode !== 201) throw new Error(created.body)
    const id: string = created.json().data.ID
    return {
      id,
      patch: (payload: object) => svc.call({ method: 'PATCH', url: `${base}/${id}`, token: svc.adminToken, headers, payload }),
    }
  }
  const creditLineId = await lend.createLine()
  const request = async (natural: NaturalPerson) => lend.requestCredit({ creditLineId, debtorId: await createProfile(svc, svc.organizationId, { natural }) })
  const credit = async (id: string) => (await lend.call('GET', `/v1/credits/${id}`)).json().data.credit
  const history = async (id: string) => {
    const events: RecordedEvent[] = []
    for await (const event of svc.runtime.history(`credit-${id}`)) events.push(event)
    return events
  }
  return { svc, clock, lend, scoringModel, request, credit, history }
}

t.test('automatic scoring approves, rejects, or leaves a credit for a person, and the score shows on the credit', async (t) => {
  const { lend, scoringModel, request, credit } = await setup(t)
  const { id: modelId } = await scoringModel()

  const approval = nextEvent(lend.svc.runtime, 'CreditApproved')
  const approved = await request(solvent)
  await approval
  const one = await credit(approved.ID)
  t.equal(one.state, 'Aprobado')
  t.equal(one.approvedBy, `scoring-model:${modelId}`)
  t.same(one.score, {
    scoringModelId: modelId, version: '1.0', versionNumber: 1, score: '79', decision: 'approve', scoredAt: one.score.scoredAt,
    reasons: [
      'age = 35: 80 × 0.3 = 24', 'monthlyIncome = 4500000.00: 60 × 0.5 = 30', 'employmentType = formal: 100 × 0.2 = 20',
      'bonus +5: formal and solvent (monthlyIncome >= 2000000 && employmentType == "formal")', 'score 79: approve (approve from 70, review from 50)',
    ],
  })

  const rejection = nextEvent(lend.svc.runtime, 'CreditRejected')
  const rejected = await request(young)
  await rejection
  t.match(await credit(rejected.ID), {
    state: 'Rechazado', rejectionReason: 'automatic scoring: model version 1.0 decides reject', score: { score: '18', decision: 'reject' },
  })

  const scoring = nextEvent(lend.svc.runtime, 'CreditScored')
  const reviewed = await request(independent)
  await scoring
  t.match(await credit(reviewed.ID), { state: 'Solicitado', approvedAt: null, score: { score: '68', decision: 'review' } })
  t.equal((await lend.call('POST', `/v1/credits/${reviewed.ID}/approve`, {})).json().data.credit.state, 'Aprobado', 'a person decides a review')

  const list = (await lend.call('GET', '/v1/credits?limit=100')).json().data
  const scores = Object.fromEntries(list.map((c: { ID: string; score: { decision: string } | null }) => [c.ID, c.score?.decision]))
  t.same(scores, { [approved.ID]: 'approve', [rejected.ID]: 'reject', [reviewed.ID]: 'review' }, 'the list shows the score too')
})

t.test('no default model active and in force at the request: the credit is left alone', async (t) => {
  const { lend, clock, scoringModel, request, credit, history } = await setup(t)
  // The scoring process handles credits in log order: once a later credit is scored, every earlier one was handled.
  const scoredAfter = async () => {
    const scored = nextEvent(lend.svc.runtime, 'CreditScored')
    await request(independent)
    await scored
  }
  const beforeAnyModel = await request(solvent)
  const notDefault = await scoringModel({ isDefault: false })
  const withoutDefault = await request(solvent)
  await notDefault.patch({ isDefault: true })
  await scoredAfter()
  await notDefault.patch({ isActive: false })
  const inactive = await request(solvent)
  await notDefault.patch({ isActive: true, isDefault: false })
  await scoringModel({ version: '2.0', validFrom: '2026-02-01T00:00:00.000Z' })
  const notYetInForce = await request(solvent)
  clock.set('2026-02-01T00:00:00.000Z')
  await scoredAfter()
  for (const [name, id] of Object.entries({ beforeAnyModel: beforeAnyModel.ID, withoutDefault: withoutDefault.ID, inactive: inactive.ID, notYetInForce: notYetInForce.ID })) {
    t.match(await credit(id), { state: 'Solicitado', score: null }, name)
    t.same((await history(id)).map((e) => e.type), ['CreditRequested'], `${name}: nothing appended`)
  }
})

t.test('the scoring process decides as at the request, once, and never over a person\'s decision', async (t) => {
  const { svc, lend, scoringModel, request, credit, history } = await setup(t, { processesEnabled: false })
  const handle = async (creditId: string) => {
    const requested = (await history(creditId)).find((e) => e.type === 'CreditRequested')
    if (requested === undefined) throw new Error('no request')
    await creditScoringProcess.handle(requested, svc.runtime)
    await svc.runtime.settle((await history(creditId)).at(-1)?.position ?? 0)
  }
  const { patch } = await scoringModel()
  const debtorId = await createProfile(svc, svc.organizationId, { natural: solvent })
  const requested = await lend.requestCredit({ creditLineId: await lend.createLine(), debtorId })
  // After the request the debtor's profile turns into a rejection and the model is switched off: neither is what the request saw.
  await svc.runtime.execute(profileAggregate, debtorId, {
    type: 'UpdateProfile', natural: { birthDate: young.birthDate, monthlyIncome: young.monthlyIncome, employmentType: young.employmentType },
    now: svc.runtime.clock.now().toISOString(),
  }, { organizationId: svc.organizationId, actorId: 'test', correlationId: newId() })
  await patch({ isActive: false })
  await handle(requested.ID)
  t.match(await credit(requested.ID), { state: 'Aprobado', score: { score: '79', decision: 'approve' } }, 'scored with the profile and model of the request')
  await handle(requested.ID)
  t.same((await history(requested.ID)).map((e) => e.type), ['CreditRequested', 'CreditScored', 'CreditApproved'], 'a redelivery appends nothing')

  await patch({ isActive: true })
  const decidedByHand = await request(young)
  await lend.call('POST', `/v1/credits/${decidedByHand.ID}/approve`, {})
  await handle(decidedByHand.ID)
  const decided = await credit(decidedByHand.ID)
  t.match(decided, { state: 'Aprobado', score: null })
  t.notMatch(decided.approvedBy, /^scoring-model:/)
  t.same((await history(decidedByHand.ID)).map((e) => e.type), ['CreditRequested', 'CreditApproved'], 'a person\'s decision stands')
})

t.test('a credit of another organization is scored with that organization\'s model only', async (t) => {
  const { svc, lend, scoringModel, credit } = await setup(t)
  await scoringModel()
  const other = await svc.call({ method: 'POST', url: '/v1/organizations', token: svc.adminToken, payload: { name: 'Other lender' } })
  const otherId: string = other.json().data.organization.id
  const theirs = await lending(svc, otherId)
  const theirLine = await theirs.createLine()
  const theirCredit = await theirs.requestCredit({ creditLineId: theirLine, debtorId: await createProfile(svc, otherId, { natural: solvent }) })
  const scored = nextEvent(svc.runtime, 'CreditApproved')
  const ours = await lend.requestCredit({ creditLineId: await lend.createLine(), debtorId: await createProfile(svc, svc.organizationId, { natural: solvent }) })
  await scored
  t.equal((await credit(ours.ID)).state, 'Aprobado')
  const their = (await theirs.call('GET', `/v1/credits/${theirCredit.ID}`)).json().data.credit
  t.match(their, { state: 'Solicitado', score: null }, 'no model in their configuration')
  t.equal((await lend.call('GET', `/v1/credits/${theirCredit.ID}`)).statusCode, 404)
})

t.test('the score is an analysis: without ReadAnalysis the credit shows none, its CreditScored event is empty, and exports of it are refused', async (t) => {
  const { svc, lend, scoringModel, request } = await setup(t)
  await scoringModel()
  const approval = nextEvent(lend.svc.runtime, 'CreditApproved')
  const approved = await request(solvent)
  await approval
  const reader = await memberToken(svc, svc.organizationId, ['ReadCredit', 'ReadExport', 'ReadReceivables', 'ExportReports'])
  const analyst = await memberToken(svc, svc.organizationId, ['ReadCredit', 'ReadAnalysis', 'ReadExport', 'ReadReceivables', 'ExportReports'])
  const get = (token: string, url: string) => svc.call({ method: 'GET', url, token, organizationId: svc.organizationId })

  t.equal((await get(reader, `/v1/credits/${approved.ID}`)).json().data.credit.score, null, 'no score without ReadAnalysis')
  t.equal((await get(reader, `/v1/credits/${approved.ID}?asOf=2026-01-16T00:00:00.000Z`)).json().data.credit.score, null, 'nor as of a moment')
  t.equal((await get(reader, '/v1/credits')).json().data[0].score, null, 'nor in the list')
  t.match((await get(analyst, '/v1/credits')).json().data[0].score, { score: '79' })
  t.match((await get(analyst, `/v1/credits/${approved.ID}`)).json().data.credit.score, { score: '79', decision: 'approve' }, 'with it, the score')
  const scoredEvent = (body: { data: { events: Array<{ type: string; data: object }> } }) => body.data.events.find((e) => e.type === 'CreditScored')
  t.same(scoredEvent((await get(reader, `/v1/credits/${approved.ID}/events`)).json())?.data, {}, 'the event stays in the history, its data empty')
  t.match(scoredEvent((await get(analyst, `/v1/credits/${approved.ID}/events`)).json())?.data, { score: '79', decision: 'approve' })

  const exportOf = (token: string, payload: object) => svc.call({ method: 'POST', url: '/v1/exports', token, organizationId: svc.organizationId, payload })
  const scoring = await exportOf(reader, { type: 'quantitative-scoring' })
  t.equal(scoring.statusCode, 403, 'the scoring-cases export needs ReadAnalysis')
  t.equal(scoring.json().data.permission, 'ReadAnalysis')
  t.equal((await exportOf(analyst, { type: 'quantitative-scoring' })).statusCode, 202)
  const report = await exportOf(reader, { type: 'reports', format: 'consolidated', columns: ['credits.id', 'credits.score'] })
  t.equal(report.statusCode, 403, 'so does a report with the score')
  t.equal(report.json().data.permission, 'ReadAnalysis')
  t.equal((await exportOf(reader, { type: 'reports', format: 'consolidated', columns: ['credits.id', 'credits.state'] })).statusCode, 202, 'a report without it does not')
})

t.test('an automatic rejection\'s reason names the model\'s version, not the score; one recorded with its score shows it only to ReadAnalysis', async (t) => {
  const { svc, lend, scoringModel, request, credit } = await setup(t)
  await scoringModel()
  const rejection = nextEvent(lend.svc.runtime, 'CreditRejected')
  const rejected = await request(young)
  await rejection
  t.equal((await credit(rejected.ID)).rejectionReason, 'automatic scoring: model version 1.0 decides reject')

  // A rejection recorded by an earlier release, its score in the reason.
  const earlier = await request(independent)
  const legacy = 'automatic scoring: score 68 with model version 1.0 decides reject'
  const appended = await svc.runtime.eventStore.append(`credit-${earlier.ID}`, [{
    id: newId(), type: 'CreditRejected', data: { creditId: earlier.ID, organizationId: svc.organizationId, reason: legacy, rejectedBy: 'scoring-model:m', rejectedAt: '2026-01-15T12:00:00.000Z' },
    metadata: { organizationId: svc.organizationId, actorId: null, correlationId: 'c', causationId: null, occurredAt: '2026-01-15T12:00:00.000Z', schemaVersion: 1 },
  }], 'any')
  await svc.runtime.settle(appended.position)
  const reader = await memberToken(svc, svc.organizationId, ['ReadCredit'])
  const analyst = await memberToken(svc, svc.organizationId, ['ReadCredit', 'ReadAnalysis'])
  const get = (token: string, url: string) => svc.call({ method: 'GET', url, token, organizationId: svc.organizationId })
  t.equal((await get(reader, `/v1/credits/${earlier.ID}`)).json().data.credit.rejectionReason, 'automatic scoring: model version 1.0 decides reject')
  t.equal((await get(analyst, `/v1/credits/${earlier.ID}`)).json().data.credit.rejectionReason, legacy)
  const reasonIn = (body: { data: { events: Array<{ type: string; data: { reason?: string } }> } }) => body.data.events.find((e) => e.type === 'CreditRejected')?.data.reason
  t.equal(reasonIn((await get(reader, `/v1/credits/${earlier.ID}/events`)).json()), 'automatic scoring: model version 1.0 decides reject', 'nor in its history')
  t.equal(reasonIn((await get(analyst, `/v1/credits/${earlier.ID}/events`)).json()), legacy)
})

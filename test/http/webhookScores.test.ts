import t, { type Test } from 'tap'
import { ManualClock } from '../../src/shared/clock.js'
import { createTestApp } from '../helpers/app.js'
import { firing } from '../helpers/firing.js'
import { nextEvent } from '../helpers/lending.js'
import { createProfile, defaultConfigOf, memberToken } from '../helpers/organizations.js'
import { consumerModel } from '../helpers/scoring.js'
import { startSink } from '../helpers/sink.js'

const scoreBody = '{"credit": {{ .Credit.ID | toJson }}, "score": {{ .Credit.Score.Score | toJson }}, "decision": {{ .Credit.Score.Decision | toJson }}}'

/** A scored, approved credit on a line whose disbursement fires `webhookId`, disbursed; answers the send's rendered body. */
const setup = async (t: Test) => {
  const sink = await startSink(t)
  sink.route('/hook', { status: 200, body: { ok: true } })
  const svc = await createTestApp(t, { clock: new ManualClock('2026-01-15T12:00:00.000Z'), config: { webhookAllowPrivateNetworks: true } })
  const f = await firing(svc, sink)
  const org = svc.organizationId
  const configId = await defaultConfigOf(svc, org)
  const model = await svc.call({
    method: 'POST', url: `/v1/organization/${org}/config/${configId}/scoring-model`, token: svc.adminToken,
    headers: { 'config-organization-id': org, 'organization-id': org }, payload: consumerModel,
  })
  if (model.statusCode !== 201) throw new Error(model.body)
  const debtorId = await createProfile(svc, org, { natural: {
    firstName: 'Ana', lastName: 'Gómez', documentType: 'CC', documentNumber: '1234567', birthDate: '1990-06-01', monthlyIncome: '4500000.00', employmentType: 'formal',
  } })
  const member = await memberToken(svc, org, ['ReadCredit', 'ReadWebhook', 'WriteWebhook', 'WriteCredit'])
  const asMember = (method: 'GET' | 'POST' | 'PUT', url: string, payload?: object) =>
    svc.call({ method, url: `/v1${url}`, token: member, organizationId: org, ...(payload === undefined ? {} : { payload }) })
  /** Disburses a new scored credit on a line linking the webhook; answers the credit's id and what its send rendered. */
  const sendOf = async (webhookId: string) => {
    const lineId = await f.line({ onDeliveredWebhooks: [webhookId] })
    const approved = nextEvent(svc.runtime, 'CreditApproved')
    const credit = await f.l.requestCredit({ creditLineId: lineId, debtorId })
    await approved
    const disbursed = await f.l.call('POST', `/v1/credits/${credit.ID}/disburse`, { method: 'bank_transfer', reference: 'TRF-1' })
    if (disbursed.statusCode !== 200) throw new Error(disbursed.body)
    const [send] = await f.settled(credit.ID, 1)
    if (send?.request == null) throw new Error('no send')
    return { creditId: credit.ID, logId: send._id, rendered: JSON.parse(send.request.body) as { score: string; decision: string } }
  }
  return { svc, f, asMember, sendOf }
}

t.test('a webhook created by someone who may read scores sends them; a member without ReadAnalysis may not change it', async (t) => {
  const { f, asMember, sendOf } = await setup(t)
  const webhookId = await f.webhook({ tag: 'erp', path: '/hook', requestBody: scoreBody })
  const { rendered } = await sendOf(webhookId)
  t.not(rendered.score, '', 'the administrator\'s webhook renders the score')
  t.match(rendered.decision, /^(approve|review|reject)$/)

  const refused = await asMember('PUT', `/webhook/${webhookId}`, { url: 'https://collector.example.com/scores' })
  t.equal(refused.statusCode, 403, 'pointing it elsewhere would hand the member every score')
  t.match(refused.json().data, { code: 'FORBIDDEN', permission: 'ReadAnalysis' })
  t.equal((await asMember('GET', `/webhook/${webhookId}`)).json().data.url, `${f.sink.url}/hook`, 'nothing changed')
  t.equal((await asMember('PUT', `/webhook/${webhookId}`, { tag: 'erp' })).statusCode, 200, 'a change that changes nothing is no change')
})

t.test('a webhook a member without ReadAnalysis creates renders scores empty, in automatic and manual sends, until someone who may read them turns them on', async (t) => {
  const { svc, f, asMember, sendOf } = await setup(t)
  const created = await asMember('POST', '/webhook', { tag: 'crm', url: `${f.sink.url}/hook`, requestBody: scoreBody })
  t.equal(created.statusCode, 201)
  t.equal(created.json().data.scoresHidden, true, 'shown on the webhook')
  const webhookId: string = created.json().data.ID
  const first = await sendOf(webhookId)
  t.same({ score: first.rendered.score, decision: first.rendered.decision }, { score: '0', decision: '' }, 'as for a credit never scored')

  const resent = await asMember('POST', `/webhook/${webhookId}/request`, { creditID: first.creditId, logID: first.logId })
  t.equal(resent.statusCode, 200)
  t.match(JSON.parse(resent.json().data.request.body), { score: '0', decision: '' }, 'a manual re-send renders it empty too')
  t.equal((await asMember('PUT', `/webhook/${webhookId}`, { tag: 'crm-2' })).statusCode, 200, 'its own kind may still change it')

  t.match((await asMember('PUT', `/webhook/${webhookId}`, { scoresHidden: false })).json().data, { code: 'FORBIDDEN', permission: 'ReadAnalysis' },
    'nor may it turn them on')
  const asAdmin = (payload: object) =>
    svc.call({ method: 'PUT', url: `/v1/webhook/${webhookId}`, token: svc.adminToken, organizationId: svc.organizationId, payload })
  t.equal((await asAdmin({ tag: 'crm-3', signingSecret: null })).json().data.scoresHidden, true,
    'an administrator\'s change of something else leaves them hidden: the member chose where they would go')
  const hiddenStill = await sendOf(webhookId)
  t.same(hiddenStill.rendered.score, '0')
  t.equal((await asAdmin({ scoresHidden: false })).json().data.scoresHidden, false, 'asked for, by someone who may read scores')
  const second = await sendOf(webhookId)
  t.not(second.rendered.score, '0')
  t.match(second.rendered.decision, /^(approve|review|reject)$/)
  t.equal((await asMember('PUT', `/webhook/${webhookId}`, { tag: 'crm-4' })).statusCode, 403, 'and from then on only such a person changes it')
})

t.test('a creator who may read scores may create a webhook that hides them; one who may not cannot ask for them', async (t) => {
  const { svc, f, asMember } = await setup(t)
  const refused = await asMember('POST', '/webhook', { tag: 'crm', url: `${f.sink.url}/hook`, requestBody: scoreBody, scoresHidden: false })
  t.equal(refused.statusCode, 403)
  t.match(refused.json().data, { code: 'FORBIDDEN', permission: 'ReadAnalysis' })
  const hidden = await svc.call({
    method: 'POST', url: '/v1/webhook', token: svc.adminToken, organizationId: svc.organizationId,
    payload: { tag: 'erp', url: `${f.sink.url}/hook`, requestBody: scoreBody, scoresHidden: true },
  })
  t.equal(hidden.statusCode, 201)
  t.equal(hidden.json().data.scoresHidden, true)
  t.notOk('scoresHidden' in JSON.parse(JSON.stringify((await svc.runtime.queries.webhooks.getAny(hidden.json().data.ID))?.configuration)),
    'kept beside the configuration, not in it')
})

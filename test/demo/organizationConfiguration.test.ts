import t from 'tap'
import { loadDemo } from '../../src/demo/index.js'
import { ManualClock } from '../../src/shared/clock.js'
import { createTestApp } from '../helpers/app.js'

t.test('the demo configures a default scoring model, taxes and limits, once however often it runs', async (t) => {
  const svc = await createTestApp(t, { clock: new ManualClock('2026-01-15T12:00:00.000Z') })
  const first = await loadDemo(svc.runtime)
  const second = await loadDemo(svc.runtime)
  t.same(second.ids, first.ids)
  const organizationId = first.organizationId
  const headers = { 'config-organization-id': organizationId, 'organization-id': organizationId }
  const base = `/v1/organization/${organizationId}/config/${first.defaultConfigId}/scoring-model`
  const models = (await svc.call({ method: 'GET', url: `${base}?isDefault=true`, token: svc.adminToken, headers })).json().data
  t.same(models.map((m: { ID: string }) => m.ID), [first.ids['scoringModel.consumer']])
  const scored = await svc.call({
    method: 'POST', url: `${base}/${first.ids['scoringModel.consumer']}/evaluate`, token: svc.adminToken, headers, payload: { profileId: first.ids['profile.ana'] },
  })
  t.match(scored.json().data, { score: 79, decision: 'approve' }, 'Ana, as worked out in docs/scoring.md')
  const taxes = (await svc.call({ method: 'GET', url: '/v1/taxes', token: svc.adminToken, organizationId })).json().data
  t.same(taxes.map((x: { name: string }) => x.name).sort(), ['IVA', 'Retención en la fuente'])
  const limits = (await svc.call({ method: 'GET', url: '/v1/creditor/credit-limits', token: svc.adminToken, organizationId })).json()
  // Ana's disbursed consumer credit (3 000 000.00) after its payments still owes 2 541 410.61 of principal: that much of her limit is used.
  t.same(limits.summary, { totalLimits: 3, totalMaxAmount: '29500000.00', totalUsedAmount: '2541410.61', totalAvailableAmount: '26958589.39' })
  const ana = limits.creditLimits.find((l: { debtorInfo: { debtorId: string } }) => l.debtorInfo.debtorId === first.ids['profile.ana'])
  t.match(ana, { maxAmount: '8000000.00', usedAmount: '2541410.61', availableAmount: '5458589.39' })
})

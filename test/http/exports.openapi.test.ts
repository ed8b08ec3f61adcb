import t from 'tap'
import { createTestApp } from '../helpers/app.js'

interface BodyMember {
  title: string
  description: string
  properties: Record<string, { description?: string }>
}

t.test('the OpenAPI body of each export type says which rows its file holds', async (t) => {
  const svc = await createTestApp(t, { config: { processesEnabled: false } })
  const doc = (await svc.call({ method: 'GET', url: '/v1/openapi.json' })).json()
  const members: BodyMember[] = doc.paths['/v1/exports'].post.requestBody.content['application/json'].schema.oneOf
  const described = (type: string) => members.find((m) => m.title === type)
  t.match(described('debtors-credit-active')?.description, /credit active in the period \(disbursed before its end, not paid off before its start\)/,
    'a debtor whose credit was paid off during the period is listed: not only unpaid credits')
  t.match(described('refinance')?.description, /paid off by a whole-balance \(`zero`\) order in the period, refinanced or not/,
    'every payoff, refinanced or not')
  t.match(described('quantitative-scoring')?.description, /every credit requested in the period, scored or not/,
    'every request is a scoring case, with or without a recorded score')
  t.match(described('receivables-cutoff')?.properties['before']?.description, /not later than the moment the export is requested/)
  t.match(described('credit-bureau-a')?.properties['before']?.description, /refuse a later one/)
})

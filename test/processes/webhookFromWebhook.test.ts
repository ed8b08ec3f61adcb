import t from 'tap'
import { firingOrder } from '../../src/processes/webhookFiring.js'
import { configurationDefaults } from '../../src/webhooks/configuration.js'
import type { FiringWebhook } from '../../src/webhooks/runtime.js'
import { createTestApp } from '../helpers/app.js'
import { firing } from '../helpers/firing.js'
import { startSink } from '../helpers/sink.js'

const testApp = (t: Parameters<typeof createTestApp>[0]) => createTestApp(t, { config: { webhookAllowPrivateNetworks: true } })

const reader = '{"loan": {{ fromWebhook "crm" "loanId" | toJson }}}'

t.test('response queries of one webhook feed fromWebhook in another: in the same firing the reader goes after the writer, later firings read the stored value', async (t) => {
  const sink = await startSink(t)
  sink.route('/crm', { body: { loan: { id: 'L-77', status: 'open' } } })
  const svc = await testApp(t)
  const f = await firing(svc, sink)
  const writer = await f.webhook({ tag: 'crm', path: '/crm', requestBody: '{}', responseQueries: { loanId: '$.loan.id', state: '$.loan.status' } })
  const sameFiring = await f.webhook({ tag: 'ledger', path: '/ledger', requestBody: reader })
  const later = await f.webhook({ tag: 'payments', path: '/payments', requestBody: reader })
  const line = await f.line({ onDeliveredWebhooks: [sameFiring, writer], onOrderWebhooks: [later] })

  const credit = await f.l.disbursedCredit({ creditLineId: line })
  const sends = await f.settled(credit.ID, 2)
  t.same(sink.requests.map((r) => r.path), ['/crm', '/ledger'], 'the reader waited for the webhook whose tag it reads, though linked first')
  t.same(JSON.parse(sink.requests[1]?.body ?? ''), { loan: 'L-77' })
  t.same(sends.find((s) => s.webhookId === writer)?.responseQueryResults, { loanId: 'L-77', state: 'open' })

  await f.approvedOrder(credit.ID, credit.installments[0]!.ID)
  await f.settled(credit.ID, 3)
  t.same(JSON.parse(sink.requests.find((r) => r.path === '/payments')?.body ?? ''), { loan: 'L-77' }, 'a later trigger reads the stored value')

  const other = await f.l.disbursedCredit({ creditLineId: await f.line({ onOrderWebhooks: [later] }) })
  await f.approvedOrder(other.ID, other.installments[0]!.ID)
  await f.settled(other.ID, 1)
  t.same(JSON.parse(sink.requests.filter((r) => r.path === '/payments')[1]?.body ?? ''), { loan: null }, 'values belong to their credit: another one reads nil')
})

t.test('webhooks sharing a tag: fromWebhook gives the most recent delivered result; a failed send stores nothing', async (t) => {
  const sink = await startSink(t)
  sink.route('/crm-old', { body: { id: 'L-1' } })
  sink.route('/crm-new', { body: { id: 'L-2' } })
  sink.route('/crm-down', { status: 500, body: { id: 'L-ERR' } })
  const svc = await testApp(t)
  const f = await firing(svc, sink)
  const queries = { loanId: '$.id' }
  const old = await f.webhook({ tag: 'crm', path: '/crm-old', requestBody: '{}', responseQueries: queries })
  const replacement = await f.webhook({ tag: 'crm', path: '/crm-new', requestBody: '{}', responseQueries: queries })
  const down = await f.webhook({ tag: 'crm', path: '/crm-down', requestBody: '{}', responseQueries: queries })
  const readerId = await f.webhook({ tag: 'reader', path: '/reader', requestBody: reader })
  const line = await f.line({ onDeliveredWebhooks: [old], onOrderWebhooks: [readerId, replacement, down] })

  const credit = await f.l.disbursedCredit({ creditLineId: line })
  await f.settled(credit.ID, 1)
  t.same(Object.fromEntries(await svc.runtime.queries.webhookResponseValues.forCredit(svc.organizationId, credit.ID)), { crm: new Map([['loanId', 'L-1']]) })
  await f.approvedOrder(credit.ID, credit.installments[0]!.ID)
  const sends = await f.settled(credit.ID, 4)
  t.equal(sends.find((s) => s.webhookId === down)?.status, 'failed')
  t.same(JSON.parse(sink.requests.find((r) => r.path === '/reader')?.body ?? ''), { loan: 'L-2' },
    'the reader went after both crm webhooks of its firing and read the newer delivered value, not the failed one')
})

const hook = (id: string, tag: string, reads: string[]): FiringWebhook => ({
  id, organizationId: 'o', archived: false, scoresHidden: false, readsTags: new Set(reads), configuration: { ...configurationDefaults, tag, url: '', signingSecret: null },
})

t.test('the firing order follows literal fromWebhook tags and gives up waiting inside a cycle', async (t) => {
  const order = firingOrder([hook('a', 'crm', []), hook('b', 'ledger', ['crm']), hook('c', 'audit', ['ledger', 'crm', 'audit'])])
  t.same(Object.fromEntries(order), { a: [], b: ['a'], c: ['a', 'b'] }, 'a webhook reading its own tag does not wait for itself')
  const cycle = firingOrder([hook('a', 'x', ['y']), hook('b', 'y', ['x']), hook('c', 'z', ['x'])])
  t.same(Object.fromEntries(cycle), { a: [], b: [], c: ['a'] }, 'a and b read each other: neither waits for the other; c still waits for a')
})

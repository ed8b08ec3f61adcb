import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { webhookSendAggregate } from '../../src/commands/webhookSend.js'
import { firingSendId } from '../../src/processes/webhookFiring.js'
import { deterministicId, newId } from '../../src/shared/ids.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { firing } from '../helpers/firing.js'
import { startSink } from '../helpers/sink.js'

const disbursementOf = async (svc: TestApp, creditId: string): Promise<string> => {
  for await (const event of svc.runtime.history(`credit-${creditId}`)) if (event.type === 'CreditDisbursed') return event.id
  throw new Error('the credit was not disbursed')
}

t.test('a stop between a send\'s start and its outcome leaves it unknown and unsent; the rest of the firing goes out once', async (t) => {
  const sink = await startSink(t)
  // The trigger is written while no process runs: the firing happens after the restart, as after a crash.
  const first = await createTestApp(t, { config: { webhookAllowPrivateNetworks: true, processesEnabled: false } })
  const before = await firing(first, sink)
  const a = await before.webhook({ tag: 'a', path: '/a', requestBody: '{}' })
  const b = await before.webhook({ tag: 'b', path: '/b', requestBody: '{}' })
  const credit = await before.l.disbursedCredit({ creditLineId: await before.line({ onDeliveredWebhooks: [a, b] }) })
  const trigger = await disbursementOf(first, credit.ID)
  // What the firing process writes before a's request leaves; then the process dies.
  const sendId = firingSendId(trigger, a)
  await first.runtime.commands.execute(webhookSendAggregate, sendId, {
    type: 'StartWebhookSend', sendId, organizationId: first.organizationId, webhookId: a, tag: 'a',
    trigger: { type: 'CreditDisbursed', eventId: trigger, logId: null }, creditId: credit.ID, orderId: null,
    request: { method: 'POST', url: `${sink.url}/a`, headers: {}, body: '{}', bodyBytes: 2, bodyTruncated: false }, now: new Date().toISOString(),
  }, { organizationId: first.organizationId, actorId: null, correlationId: trigger, causationId: trigger })
  await first.close()

  const restarted = await createTestApp(t, { config: { ...first.config, processesEnabled: true } })
  const after = await firing(restarted, sink)
  const sends = await after.settled(credit.ID, 2)
  await after.quiesce()
  t.same(after.received().map((r) => r.path), ['/b'], 'b went out once; a was never sent')
  t.match(sends.find((s) => s.webhookId === a), { _id: sendId, status: 'unknown', error: { code: 'OUTCOME_UNKNOWN' } })
  t.match(sends.find((s) => s.webhookId === b), { _id: firingSendId(trigger, b), status: 'delivered' })
})

t.test('a trigger redelivered after a restart sends nothing new', async (t) => {
  const sink = await startSink(t)
  // The memory read store's process checkpoints are a file of their own, removed below.
  const first = await createTestApp(t, { config: { webhookAllowPrivateNetworks: true, readStore: 'memory' } })
  const before = await firing(first, sink)
  const hook = await before.webhook({ tag: 'a', path: '/a', requestBody: '{}' })
  const line = await before.line({ onDeliveredWebhooks: [hook], onOrderWebhooks: [hook] })
  const credit = await before.l.disbursedCredit({ creditLineId: line })
  await before.approvedOrder(credit.ID, credit.installments[0]!.ID)
  await before.settled(credit.ID, 2)
  await first.close()
  // Every process manager follows the log from its start again, as if no checkpoint had been saved.
  fs.rmSync(path.join(first.config.dataDir, 'process-checkpoints.json'))

  const restarted = await createTestApp(t, { config: first.config })
  const after = await firing(restarted, sink)
  await after.quiesce()
  t.same(after.received().map((r) => r.path), ['/a', '/a'], 'the disbursement and the approval were each sent once, before the restart')
  t.equal((await after.sendsOf(credit.ID)).length, 2)
})

t.test('a trigger handled again after a crash fires what its line linked when it happened, not a webhook linked since', async (t) => {
  const sink = await startSink(t)
  // The memory read store's process checkpoints are a file of their own, removed below.
  const first = await createTestApp(t, { config: { webhookAllowPrivateNetworks: true, readStore: 'memory' } })
  const before = await firing(first, sink)
  const a = await before.webhook({ tag: 'a', path: '/a', requestBody: '{}' })
  const b = await before.webhook({ tag: 'b', path: '/b', requestBody: '{}' })
  const line = await before.line({ onOrderWebhooks: [a] })
  const credit = await before.l.disbursedCredit({ creditLineId: line })
  await before.approvedOrder(credit.ID, credit.installments[0]!.ID)
  await before.settled(credit.ID, 1)
  const linked = await before.l.call('PATCH', `/v1/credit-lines/${line}`, { onOrderWebhooks: [a, b] })
  t.equal(linked.statusCode, 200, linked.body)
  await first.close()
  // As after a crash before the checkpoint was saved: the approval is handled again.
  fs.rmSync(path.join(first.config.dataDir, 'process-checkpoints.json'))

  const restarted = await createTestApp(t, { config: first.config })
  const after = await firing(restarted, sink)
  await after.quiesce()
  t.same(after.received().map((r) => r.path), ['/a'], 'b, linked after the approval, was not fired for it')
  t.same((await after.sendsOf(credit.ID)).map((s) => s.webhookId), [a])
})

t.test('a trigger first handled after its line changed fires the webhooks linked when it happened', async (t) => {
  const sink = await startSink(t)
  // The approval is written while no process runs; the line then changes; the firing happens after the restart.
  const first = await createTestApp(t, { config: { webhookAllowPrivateNetworks: true, processesEnabled: false } })
  const before = await firing(first, sink)
  const a = await before.webhook({ tag: 'a', path: '/a', requestBody: '{}' })
  const b = await before.webhook({ tag: 'b', path: '/b', requestBody: '{}' })
  const line = await before.line({ onDeliveredWebhooks: [a] })
  const credit = await before.l.disbursedCredit({ creditLineId: line })
  const trigger = await disbursementOf(first, credit.ID)
  const relinked = await before.l.call('PATCH', `/v1/credit-lines/${line}`, { onDeliveredWebhooks: [b] })
  t.equal(relinked.statusCode, 200, relinked.body)
  await first.close()

  const restarted = await createTestApp(t, { config: { ...first.config, processesEnabled: true } })
  const after = await firing(restarted, sink)
  const sends = await after.settled(credit.ID, 1)
  await after.quiesce()
  t.same(after.received().map((r) => r.path), ['/a'], 'a, linked at the disbursement, went out; b, linked after it, did not')
  t.match(sends, [{ _id: firingSendId(trigger, a), status: 'delivered' }])
})

t.test('a trigger logged before ids were time-ordered keeps the send id it had, so an upgrade never sends it again', async (t) => {
  const olderTrigger = '3b241101-e2bb-4255-8caf-4136c566a962'
  const hook = newId()
  t.equal(firingSendId(olderTrigger, hook), deterministicId(olderTrigger, hook), 'the UUIDv5 every earlier version derived')
  const trigger = newId()
  t.equal(firingSendId(trigger, hook).slice(0, 13), trigger.slice(0, 13), 'a new trigger\'s sends sort with it')
})

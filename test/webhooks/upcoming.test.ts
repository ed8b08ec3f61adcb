import t from 'tap'
import type { RecordedEvent } from '../../src/events/catalogue.js'
import { LiveHub } from '../../src/processes/liveHub.js'
import { UpcomingTriggers } from '../../src/webhooks/upcoming.js'

const event = (position: number, type: string): RecordedEvent => ({
  id: `event-${position}`, streamId: 's', revision: 0, position, type,
  data: { organizationId: 'org', creditId: 'credit', creditLineId: 'line' },
  metadata: { organizationId: 'org', actorId: null, correlationId: 'c', causationId: null, occurredAt: '2026-01-01T00:00:00.000Z', schemaVersion: 1 },
  recordedAt: '2026-01-01T00:00:00.000Z',
}) as unknown as RecordedEvent

t.test('keeps only published triggers and hands out those after a position, oldest first, each once', async (t) => {
  const hub = new LiveHub()
  const upcoming = new UpcomingTriggers(hub, 100)
  t.teardown(() => upcoming.close())
  for (const [position, type] of [[1, 'PaymentOrderApproved'], [2, 'WebhookSendStarted'], [3, 'CreditDisbursed'], [4, 'PaymentOrderApproved'], [5, 'PaymentOrderApproved']] as const) {
    hub.publish(event(position, type))
  }
  t.same(upcoming.claim(1, 2).map((e) => e.position), [3, 4], 'after position 1, at most 2, no other event types')
  t.same(upcoming.claim(1, 10).map((e) => e.position), [5], 'what was handed out is not handed out again')
  t.same(upcoming.claim(5, 10), [], 'nothing is left')
})

t.test('forgets triggers at or before the position the manager reached', async (t) => {
  const hub = new LiveHub()
  const upcoming = new UpcomingTriggers(hub, 100)
  t.teardown(() => upcoming.close())
  for (const position of [1, 2, 3]) hub.publish(event(position, 'PaymentOrderApproved'))
  t.same(upcoming.claim(3, 10), [])
  hub.publish(event(4, 'PaymentOrderApproved'))
  t.same(upcoming.claim(0, 10).map((e) => e.position), [4], 'triggers 1 to 3 were dropped')
})

t.test('a trigger marked as fired ahead is reported once; past the bound nothing more is kept', async (t) => {
  const hub = new LiveHub()
  const upcoming = new UpcomingTriggers(hub, 2)
  t.teardown(() => upcoming.close())
  upcoming.markFired('event-7')
  t.equal(upcoming.takeFired('event-7'), true)
  t.equal(upcoming.takeFired('event-7'), false, 'answered once')
  t.equal(upcoming.takeFired('event-8'), false, 'never marked')
  for (const position of [1, 2, 3]) hub.publish(event(position, 'PaymentOrderApproved'))
  t.same(upcoming.claim(0, 10).map((e) => e.position), [1, 2], 'the third trigger was not kept: the manager fires it in its turn')
})

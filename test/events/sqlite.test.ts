import path from 'node:path'
import t from 'tap'
import { SqliteEventStore } from '../../src/events/sqlite.js'
import { newId } from '../../src/shared/ids.js'
import { tempDir } from '../helpers/config.js'

const event = () => ({
  id: newId(), type: 'OrganizationActivated', data: { organizationId: 'o' },
  metadata: { organizationId: null, actorId: null, correlationId: 'c', causationId: null, occurredAt: '2026-01-01T00:00:00.000Z', schemaVersion: 1 },
})

t.test('keeps every appended event across a reopen, with the same positions', async (t) => {
  const file = path.join(tempDir(), 'events.sqlite')
  const first = new SqliteEventStore({ file })
  const appended = await first.append('organization-x', [event(), event()], 'no_stream')
  await first.close()
  const second = new SqliteEventStore({ file })
  t.teardown(() => second.close())
  t.equal(await second.headPosition(), appended.position)
  t.equal(await second.streamRevision('organization-x'), 1)
  const next = await second.append('organization-x', [event()], 1)
  t.ok(next.position > appended.position, 'positions keep growing after a reopen')
})

t.test('a subscription sees events another process appends to the same file', async (t) => {
  const file = path.join(tempDir(), 'events.sqlite')
  const reader = new SqliteEventStore({ file, pollIntervalMs: 20 })
  const writer = new SqliteEventStore({ file })
  t.teardown(async () => { await reader.close(); await writer.close() })
  const subscription = reader.subscribe(0)
  const first = (async () => {
    for await (const e of subscription) return e.streamId
    return undefined
  })()
  await writer.append('organization-y', [event()], 'no_stream')
  t.equal(await first, 'organization-y', 'picked up by polling, not by an in-process signal')
  await subscription.close()
})

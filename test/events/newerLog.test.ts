import Database from 'better-sqlite3'
import path from 'node:path'
import { pino } from 'pino'
import t from 'tap'
import { CommandHandler } from '../../src/commands/handler.js'
import { organizationAggregate } from '../../src/commands/organization.js'
import { SqliteEventStore } from '../../src/events/sqlite.js'
import { allProjections } from '../../src/projections/index.js'
import { MemoryReadStore } from '../../src/projections/memoryStore.js'
import { ProjectionRunner } from '../../src/projections/runner.js'
import { systemClock } from '../../src/shared/clock.js'
import { newId } from '../../src/shared/ids.js'
import { tempDir } from '../helpers/config.js'

/** A log whose second event a newer version of the service wrote: a type this code does not know, or a schema version past its own. */
const logWith = async (newer: { type: string; schemaVersion: number }): Promise<string> => {
  const file = path.join(tempDir(), 'events.sqlite')
  const store = new SqliteEventStore({ file })
  const organizationId = newId()
  const metadata = { organizationId, actorId: null, correlationId: newId(), causationId: null, occurredAt: '2026-01-01T00:00:00.000Z', schemaVersion: 1 }
  await store.append(`organization-${organizationId}`, [{
    id: newId(), type: 'OrganizationCreated', data: { organizationId, name: 'Org', defaultConfigId: newId(), createdAt: '2026-01-01T00:00:00.000Z' }, metadata,
  }], 'no_stream')
  await store.close()
  const db = new Database(file)
  db.prepare('INSERT INTO events (stream_id, revision, id, type, data, metadata, recorded_at) VALUES (?, 1, ?, ?, ?, ?, ?)').run(
    `organization-${organizationId}`, newId(), newer.type, JSON.stringify({ organizationId, name: { es: 'Nuevo' } }),
    JSON.stringify({ ...metadata, schemaVersion: newer.schemaVersion }), '2026-01-02T00:00:00.000Z')
  db.close()
  return file
}

t.test('a schema version past its own is refused where the log is read', async (t) => {
  const store = new SqliteEventStore({ file: await logWith({ type: 'OrganizationRenamed', schemaVersion: 7 }) })
  t.teardown(() => store.close())
  const read = async () => {
    for await (const _event of store.readAll()) { /* reading is what is refused */ }
  }
  await t.rejects(read(), { name: 'UnreadableEventError', message: /its schema version 7 is newer than this version of the service reads \(1\)/ })
})

for (const [what, newer, why] of [
  ['a type it does not know', { type: 'OrganizationMergedInto', schemaVersion: 1 }, /its type OrganizationMergedInto is unknown to this version/],
  ['a schema version past its own', { type: 'OrganizationRenamed', schemaVersion: 7 }, /its schema version 7 is newer/],
] as const) {
  t.test(`over an event of ${what}, a start fails saying which event, every projection says why, and a command on its stream is refused`, async (t) => {
    const store = new SqliteEventStore({ file: await logWith(newer) })
    t.teardown(() => store.close())
    const runner = new ProjectionRunner(store, new MemoryReadStore(), allProjections, { logger: pino({ level: 'silent' }) })
    await t.rejects(runner.start(), { name: 'UnreadableEventError', message: why }, 'the start fails instead of waiting for ever')
    const status = await runner.status()
    t.ok(status.projections.every((p) => p.failed !== null && /the log could not be read/.test(p.failed)), 'every projection says why it stopped')
    await runner.stop()
    const handler = new CommandHandler({ eventStore: store, clock: systemClock, maxRetries: 1 })
    const [first] = await collect(store.readAll())
    const organizationId = first?.streamId.replace('organization-', '') ?? ''
    await t.rejects(handler.load(organizationAggregate, organizationId), { name: 'UnreadableEventError', message: why })
  })
}

const collect = async <T>(items: AsyncIterable<T>): Promise<T[]> => {
  const all: T[] = []
  try {
    for await (const item of items) all.push(item)
  } catch {
    // the newer event ends the read; what came before it is enough here
  }
  return all
}

import Database from 'better-sqlite3'
import fs from 'node:fs'
import path from 'node:path'
import { SqliteEventStore } from '../src/events/sqlite.js'
import type { NewEvent } from '../src/events/types.js'
import { newId } from '../src/shared/ids.js'
import { median, type BenchResult } from './lib/report.js'
import { scratchDir } from './lib/scratch.js'

const ROUNDS = Number(process.env['BENCH_APPEND_ROUNDS'] ?? 5)
const APPENDS = Number(process.env['BENCH_APPENDS'] ?? 4000)
const IN_FLIGHT = 32

const sampleEvent = (): NewEvent => ({
  id: newId(),
  type: 'PaymentOrderCreated',
  data: {
    orderId: newId(), creditId: newId(), installmentId: newId(), installmentNumber: 3, amount: '452318.27', collectionCosts: '0.00',
    provider: 'sandbox', method: 'credit_card', key: `key-${newId()}`, createdAt: '2026-03-01T10:00:00.000Z',
  },
  metadata: { organizationId: newId(), actorId: newId(), correlationId: newId(), causationId: null, occurredAt: '2026-03-01T10:00:00.000Z', schemaVersion: 1 },
})

const rawTable = (db: Database.Database) => {
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = FULL')
  db.exec(`CREATE TABLE events (position INTEGER PRIMARY KEY, stream_id TEXT NOT NULL, revision INTEGER NOT NULL, id TEXT NOT NULL UNIQUE,
    type TEXT NOT NULL, data TEXT NOT NULL, metadata TEXT NOT NULL, recorded_at TEXT NOT NULL, UNIQUE (stream_id, revision))`)
  return db.prepare('INSERT INTO events (stream_id, revision, id, type, data, metadata, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?)')
}

/** Raw inserts of the same rows: one transaction per row (sequential) or per batch of IN_FLIGHT rows (concurrent). */
const raw = (events: NewEvent[], batch: number) => {
  const dir = scratchDir('raw')
  const db = new Database(path.join(dir, 'raw.sqlite'))
  const insert = rawTable(db)
  const many = db.transaction((rows: NewEvent[]) => {
    for (const e of rows) insert.run(`order-${e.id}`, 0, e.id, e.type, JSON.stringify(e.data), JSON.stringify(e.metadata), e.metadata.occurredAt)
  })
  const start = performance.now()
  for (let i = 0; i < events.length; i += batch) many(events.slice(i, i + batch))
  const seconds = (performance.now() - start) / 1000
  db.close()
  fs.rmSync(dir, { recursive: true, force: true })
  return events.length / seconds
}

/** The embedded store's append(): expected-revision check, idempotency check, insert, notification. */
const store = async (events: NewEvent[], inFlight: number) => {
  const dir = scratchDir('store')
  const eventStore = new SqliteEventStore({ file: path.join(dir, 'events.sqlite'), synchronous: 'FULL' })
  const start = performance.now()
  for (let i = 0; i < events.length; i += inFlight) {
    await Promise.all(events.slice(i, i + inFlight).map((e) => eventStore.append(`order-${e.id}`, [e], 'no_stream')))
  }
  const seconds = (performance.now() - start) / 1000
  await eventStore.close()
  fs.rmSync(dir, { recursive: true, force: true })
  return events.length / seconds
}

export const appendBench = async (): Promise<BenchResult[]> => {
  const results: BenchResult[] = []
  for (const [label, inFlight] of [['one at a time', 1], [`${IN_FLIGHT} in flight`, IN_FLIGHT]] as const) {
    const ours: number[] = []
    const theirs: number[] = []
    for (let round = 0; round < ROUNDS + 1; round++) {
      const events = Array.from({ length: APPENDS }, sampleEvent)
      const a = await store(events, inFlight)
      const b = raw(events, inFlight)
      if (round === 0) continue // warm-up
      ours.push(a)
      theirs.push(b)
    }
    const value = median(ours)
    const base = median(theirs)
    results.push({
      name: `append (${label})`,
      what: 'event append throughput, embedded store, synchronous=FULL',
      result: { value, unit: 'appends/s' },
      baseline: { name: inFlight === 1 ? 'raw inserts, one per transaction' : `raw inserts, ${IN_FLIGHT} per transaction`, value: base, unit: 'rows/s' },
      ratio: value / base,
      target: '≥ 50 % of raw',
      met: value / base >= 0.5,
      details: { rounds: ROUNDS, appendsPerRound: APPENDS },
    })
  }
  return results
}

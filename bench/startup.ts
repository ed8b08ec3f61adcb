import fs from 'node:fs'
import path from 'node:path'
import Database from 'better-sqlite3'
import { allProcesses } from '../src/processes/index.js'
import { median, type BenchResult } from './lib/report.js'
import { scratchDir } from './lib/scratch.js'
import { seededLog } from './lib/seed.js'
import { startServer } from './lib/server.js'

const LOG_EVENTS = Number(process.env['BENCH_STARTUP_EVENTS'] ?? 1_000_000)
const ROUNDS = Number(process.env['BENCH_STARTUP_ROUNDS'] ?? 2)

interface Start {
  /** Spawn to listening: the service listens once its read models have caught up with the log. */
  listeningMs: number
  /** Spawn to the first 200 of GET /v1/health (ready: stores up, read models caught up, none failed). */
  readyMs: number
  /** Spawn to the first answer of a public read from a projection holding the seeded data. */
  firstReadMs: number
  /** Highest resident memory of the service process by then (VmHWM). */
  peakRssMiB: number
}

interface Round {
  /** A start with no snapshot of the read store: every projection replays the whole log. */
  cold: Start
  /** SIGTERM to exit: the clean stop, which writes the read store's snapshot. */
  stopMs: number
  snapshotMiB: number
  /** The next start on the same DATA_DIR: the snapshot loaded, nothing to catch up. */
  warm: Start
}

const logFacts = (file: string): { head: number; creditLineId: string } => {
  const db = new Database(file, { readonly: true })
  try {
    const head = db.prepare<[], { head: number }>('SELECT MAX(position) AS head FROM events').get()?.head ?? 0
    const line = db.prepare<[], { data: string }>("SELECT data FROM events WHERE type = 'CreditLineCreated' ORDER BY position LIMIT 1").get()
    const creditLineId = line === undefined ? '' : (JSON.parse(line.data) as { creditLineId: string }).creditLineId
    return { head, creditLineId }
  } finally {
    db.close()
  }
}

const peakRss = (pid: number | undefined): number => {
  if (pid === undefined) return 0
  const kib = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]
  return kib === undefined ? 0 : Number(kib) / 1024
}

/** Polls `url` until it answers `status`; answers the time since `since`. */
const until = async (url: string, status: number, since: number): Promise<number> => {
  for (;;) {
    const response = await fetch(url).catch(() => null)
    if (response !== null) {
      await response.arrayBuffer()
      if (response.status === status) return performance.now() - since
    }
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

const startMeasured = async (dataDir: string, facts: { creditLineId: string }): Promise<{ start: Start; stop: () => Promise<number> }> => {
  const spawned = performance.now()
  const server = await startServer({ dataDir })
  try {
    const readyMs = await until(`${server.url}/v1/health`, 200, spawned)
    const firstReadMs = await until(`${server.url}/v1/products/${facts.creditLineId}`, 200, spawned)
    const start = { listeningMs: server.startupMs, readyMs, firstReadMs, peakRssMiB: peakRss(server.child.pid) }
    return {
      start,
      stop: async () => {
        const stopping = performance.now()
        await server.stop()
        return performance.now() - stopping
      },
    }
  } catch (error) {
    await server.stop()
    throw error
  }
}

/**
 * A service whose log holds the seeded events: a fresh DATA_DIR with a copy
 * of the log and the process managers' checkpoints at its head (where a
 * running service leaves them). The first start has no snapshot of the
 * embedded read store, so it replays the whole log (as after an upgrade or a
 * crash); it stops cleanly, writing the snapshot; the second start loads it.
 */
const startOnce = async (file: string, facts: { head: number; creditLineId: string }): Promise<Round> => {
  const dataDir = scratchDir('startup')
  try {
    fs.copyFileSync(file, path.join(dataDir, 'events.sqlite'))
    fs.writeFileSync(path.join(dataDir, 'process-checkpoints.json'), JSON.stringify(Object.fromEntries(allProcesses.map((p) => [p.name, facts.head]))))
    const cold = await startMeasured(dataDir, facts)
    const stopMs = await cold.stop()
    const snapshot = path.join(dataDir, 'read-store.snapshot')
    const snapshotMiB = fs.existsSync(snapshot) ? fs.statSync(snapshot).size / 2 ** 20 : 0
    const warm = await startMeasured(dataDir, facts)
    await warm.stop()
    return { cold: cold.start, stopMs, snapshotMiB, warm: warm.start }
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
}

/** `npm run bench -- startup`: the service started on an embedded store holding a million mixed events. */
export const startupBench = async (): Promise<BenchResult[]> => {
  const log = seededLog(LOG_EVENTS, (line) => process.stderr.write(`${line}\n`))
  const facts = logFacts(log.file)
  const rounds: Round[] = []
  for (let i = 0; i < ROUNDS; i++) {
    rounds.push(await startOnce(log.file, facts))
    process.stderr.write(`  round ${i + 1}: ${JSON.stringify(rounds[i])}\n`)
  }
  const seconds = (pick: (r: Round) => number) => median(rounds.map(pick)) / 1000
  const cold = seconds((r) => r.cold.readyMs)
  const warm = seconds((r) => r.warm.readyMs)
  const events = log.events.toLocaleString('en-US')
  return [{
    name: 'start-up with 1M events (embedded store)',
    what: `spawn to GET /v1/health answering 200 after a clean stop (read store loaded from its snapshot) on a log of ${events} mixed events`,
    result: { value: warm, unit: 's' },
    baseline: null,
    ratio: null,
    target: 'ready in < 30 s',
    met: warm < 30,
    details: {
      events: log.events, rounds: ROUNDS, listeningSeconds: seconds((r) => r.warm.listeningMs), firstReadSeconds: seconds((r) => r.warm.firstReadMs),
      peakRssMiB: median(rounds.map((r) => r.warm.peakRssMiB)), snapshotMiB: median(rounds.map((r) => r.snapshotMiB)),
      stopSeconds: seconds((r) => r.stopMs), seedSeconds: log.seedSeconds ?? 'cached',
    },
  }, {
    name: 'start-up with 1M events, no snapshot',
    what: `the same start with no snapshot (first start, new code, or after a crash): every projection replays the ${events} events`,
    result: { value: cold, unit: 's' },
    baseline: null,
    ratio: null,
    target: 'reported (< 30 s is the target of a start after a clean stop)',
    met: null,
    details: {
      listeningSeconds: seconds((r) => r.cold.listeningMs), firstReadSeconds: seconds((r) => r.cold.firstReadMs),
      peakRssMiB: median(rounds.map((r) => r.cold.peakRssMiB)),
    },
  }]
}

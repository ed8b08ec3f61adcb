import { spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { pino } from 'pino'
import { SqliteEventStore } from '../src/events/sqlite.js'
import { allProjections } from '../src/projections/index.js'
import { MemoryReadStore } from '../src/projections/memoryStore.js'
import { ProjectionRunner } from '../src/projections/runner.js'
import { missingNodeFlags } from '../src/shared/nodeFlags.js'
import { median, type BenchResult } from './lib/report.js'
import { scratchDir } from './lib/scratch.js'
import { seededLog } from './lib/seed.js'

/** BENCH_REBUILD_EVENTS shrinks the run for a quick check; the figures in the docs are for a million. */
export const LOG_EVENTS = Number(process.env['BENCH_REBUILD_EVENTS'] ?? 1_000_000)
const ROUNDS = Number(process.env['BENCH_REBUILD_ROUNDS'] ?? 2)
// The first round after the log was written ran slower on a fresh machine (docs/benchmarks.md, "Stop 29"), as other benchmarks' first rounds do.
const WARMUP = Number(process.env['BENCH_REBUILD_WARMUP'] ?? 1)
const MiB = 2 ** 20
const root = path.resolve(import.meta.dirname, '..')

interface Round {
  events: number
  seconds: number
  /** CPU time of the process (user + system): on a shared machine, what the work itself cost. */
  cpuSeconds: number
  peakRss: number
}

type Kind = 'read' | 'rebuild'

/** Samples RSS every 20 ms while `work` runs; answers the highest. */
const peakRssDuring = async <T>(work: () => Promise<T>): Promise<{ value: T; peakRss: number }> => {
  let peak = process.memoryUsage.rss()
  const timer = setInterval(() => { peak = Math.max(peak, process.memoryUsage.rss()) }, 20)
  try {
    const value = await work()
    peak = Math.max(peak, process.memoryUsage.rss())
    return { value, peakRss: peak }
  } finally {
    clearInterval(timer)
  }
}

/** The baseline: every event of the log read back and parsed (what the runner is fed), nothing projected. */
const readOnce = async (eventStore: SqliteEventStore): Promise<number> => {
  let events = 0
  for await (const event of eventStore.readAll()) if (event.position > 0) events += 1
  return events
}

/** Every registered projection from position 0 into a fresh embedded read store, as at every start of the service. */
const rebuildOnce = async (eventStore: SqliteEventStore): Promise<number> => {
  const logger = pino({ level: 'silent' })
  const runner = new ProjectionRunner(eventStore, new MemoryReadStore(), allProjections, { logger })
  await runner.start()
  const status = await runner.status()
  await runner.stop()
  const failed = status.projections.filter((p) => p.failed !== null)
  if (failed.length > 0) throw new Error(`projections failed: ${failed.map((p) => `${p.name}: ${p.failed}`).join('; ')}`)
  return runner.position
}

/** One round in this (fresh) process, so its RSS is the round's alone. */
const measure = async (kind: Kind, file: string): Promise<Round> => {
  const eventStore = new SqliteEventStore({ file, writer: 'inline' })
  try {
    const started = performance.now()
    const cpu = process.cpuUsage()
    const { value: events, peakRss } = await peakRssDuring(() => (kind === 'read' ? readOnce(eventStore) : rebuildOnce(eventStore)))
    const used = process.cpuUsage(cpu)
    return { events, seconds: (performance.now() - started) / 1000, cpuSeconds: (used.user + used.system) / 1e6, peakRss }
  } finally {
    await eventStore.close()
  }
}

const child = (args: string[], env: Record<string, string> = {}): Promise<{ stdout: string; seconds: number }> =>
  new Promise((resolve, reject) => {
    const started = performance.now()
    const process_ = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } })
    let stdout = ''
    process_.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString() })
    process_.once('exit', (code) => (code === 0
      ? resolve({ stdout, seconds: (performance.now() - started) / 1000 })
      : reject(new Error(`${args.join(' ')} exited with ${code}`))))
  })

/** Each round runs with the V8 flags the service's own processes get (src/shared/nodeFlags.ts), the baseline too. */
const round = async (kind: Kind, file: string): Promise<Round> =>
  JSON.parse((await child([...missingNodeFlags([], process.env['NODE_OPTIONS']), '--import', 'tsx', import.meta.filename, 'measure', kind, file])).stdout) as Round

/** `credit-service projections rebuild` over a DATA_DIR holding the log: the whole command, process start to exit. */
const cliOnce = async (file: string): Promise<number> => {
  const dataDir = scratchDir('rebuild-cli')
  try {
    fs.linkSync(file, path.join(dataDir, 'events.sqlite'))
    const { stdout, seconds } = await child([path.join(root, 'bin/credit-service.js'), 'projections', 'rebuild'], { DATA_DIR: dataDir, LOG_LEVEL: 'warn' })
    if (stdout.includes('FAILED')) throw new Error(`the rebuild command reported a failed projection:\n${stdout}`)
    return seconds
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
}

const perSecond = (rounds: readonly Round[]) => median(rounds.map((r) => r.events / r.seconds))

/**
 * `npm run bench -- rebuild`: every projection rebuilt from zero over a
 * million mixed events in the embedded store, against reading the same events
 * without projecting; rounds alternate, each in a fresh process, after a
 * warm-up round of each kind.
 */
export const rebuildBench = async (): Promise<BenchResult[]> => {
  const log = seededLog(LOG_EVENTS, (line) => process.stderr.write(`${line}\n`))
  const reads: Round[] = []
  const rebuilds: Round[] = []
  const cli: number[] = []
  for (let i = 0; i < WARMUP; i++) {
    const warmRead = await round('read', log.file)
    const warmRebuild = await round('rebuild', log.file)
    process.stderr.write(`  warm-up ${i + 1}: read ${JSON.stringify(warmRead)}, rebuild ${JSON.stringify(warmRebuild)}\n`)
  }
  for (let i = 0; i < ROUNDS; i++) {
    reads.push(await round('read', log.file))
    rebuilds.push(await round('rebuild', log.file))
    cli.push(await cliOnce(log.file))
    process.stderr.write(`  round ${i + 1}: read ${JSON.stringify(reads[i])}, rebuild ${JSON.stringify(rebuilds[i])}, cli ${cli[i]?.toFixed(1)} s\n`)
  }
  const ours = perSecond(rebuilds)
  const theirs = perSecond(reads)
  const events = rebuilds[0]?.events ?? 0
  return [
    {
      name: 'projection rebuild from zero (1M mixed events)',
      what: `events/s of every registered projection (${allProjections.length}) rebuilt from position 0 into the embedded read store, ${events.toLocaleString('en-US')} mixed events`,
      result: { value: ours, unit: 'events/s' },
      baseline: { name: 'reading and parsing the same events, no projection', value: theirs, unit: 'events/s' },
      ratio: ours / theirs,
      target: '≥ 50,000 events/s; RSS reported',
      met: ours >= 50_000 && events >= LOG_EVENTS,
      details: {
        events, warmupRounds: WARMUP, rounds: ROUNDS, rebuildSeconds: median(rebuilds.map((r) => r.seconds)), readSeconds: median(reads.map((r) => r.seconds)),
        rebuildCpuSeconds: median(rebuilds.map((r) => r.cpuSeconds)), readCpuSeconds: median(reads.map((r) => r.cpuSeconds)),
        rebuildPeakRssMiB: median(rebuilds.map((r) => r.peakRss)) / MiB, readPeakRssMiB: median(reads.map((r) => r.peakRss)) / MiB,
        cliRebuildSeconds: median(cli), cliEventsPerSecond: events / median(cli), seedSeconds: log.seedSeconds ?? 'cached',
      },
    },
  ]
}

if (process.argv[2] === 'measure') {
  const [, , , kind, file] = process.argv
  if ((kind !== 'read' && kind !== 'rebuild') || file === undefined) throw new Error('usage: rebuild.ts measure read|rebuild <file>')
  measure(kind, file).then((result) => {
    process.stdout.write(JSON.stringify(result))
    process.exit(0)
  }, (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.stack ?? error.message : String(error)}\n`)
    process.exit(1)
  })
}

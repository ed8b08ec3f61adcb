import { execFile } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import type { BenchResult } from '../../bench/lib/report.js'

const root = path.resolve(import.meta.dirname, '../..')

/** Every benchmark shrunk to seconds: the same code paths, servers and processes as `npm run bench`, a few hundred operations each. */
const SMALL: Record<string, string> = {
  BENCH_ROUNDS: '1', BENCH_SECONDS: '1', BENCH_WARMUP: '0',
  BENCH_APPEND_ROUNDS: '1', BENCH_APPENDS: '200',
  BENCH_EXPORT_ROWS: '2000', BENCH_EXPORT_ROUNDS: '1',
  BENCH_WEBHOOK_APPROVALS: '60', BENCH_WEBHOOK_RATE: '200',
  BENCH_SSE_CLIENTS: '10', BENCH_SSE_UPDATES: '5',
  BENCH_REBUILD_EVENTS: '3000', BENCH_REBUILD_ROUNDS: '1',
  BENCH_STARTUP_EVENTS: '3000', BENCH_STARTUP_ROUNDS: '1',
  BENCH_PAGES_CREDITS: '3000', BENCH_PAGES_ROUNDS: '1',
}

/**
 * `npm run bench -- --no-write <names>` with the small settings, in a scratch
 * TMPDIR (the seeded logs' cache included), answering the rows it printed.
 * The docs and bench/results are not written.
 */
export const runSmallBenches = async (names: readonly string[]): Promise<BenchResult[]> => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-smoke-'))
  try {
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'bench/run.ts', '--no-write', ...names], {
      cwd: root, env: { ...process.env, ...SMALL, TMPDIR: tmp }, maxBuffer: 16 * 2 ** 20, timeout: 240_000,
    })
    return stdout.split('\n').filter((line) => line.startsWith('RESULT ')).map((line) => JSON.parse(line.slice('RESULT '.length)))
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true })
  }
}

/** The row of that name; fails the test when the run did not print it. */
export const rowNamed = (rows: readonly BenchResult[], name: string): BenchResult => {
  const row = rows.find((r) => r.name === name)
  if (row === undefined) throw new Error(`no row "${name}" among ${rows.map((r) => r.name).join(', ')}`)
  return row
}

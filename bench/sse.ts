import path from 'node:path'
import Database from 'better-sqlite3'
import { EventSource } from 'eventsource'
import { apiClient } from './lib/api.js'
import { epochNow, quantile, sleep } from './lib/pool.js'
import { median, type BenchResult } from './lib/report.js'
import { startServer } from './lib/server.js'

const clients = Number(process.env['BENCH_SSE_CLIENTS'] ?? 1000)
const updates = Number(process.env['BENCH_SSE_UPDATES'] ?? 100)
const rounds = Number(process.env['BENCH_ROUNDS'] ?? 3)

interface Receipt {
  position: number
  at: number
}

/** One connected client: every `export.updated` it received, with when. */
interface Client {
  source: EventSource
  receipts: Receipt[]
}

const connect = (url: string, headers: Record<string, string>): Promise<Client> =>
  new Promise((resolve, reject) => {
    const source = new EventSource(url, {
      fetch: (input, init) => fetch(input, { ...init, headers: { ...init?.headers, ...headers } }),
    })
    const client: Client = { source, receipts: [] }
    source.addEventListener('export.updated', (message) => {
      client.receipts.push({ position: Number(message.lastEventId), at: epochNow() })
    })
    source.onopen = () => resolve(client)
    source.onerror = (error) => reject(new Error(`event stream failed: ${error.message ?? 'unknown'}`))
  })

/** When each event was recorded (its occurredAt), read from the embedded store after the run. */
const recordedAt = (dataDir: string, positions: number[]): Map<number, number> => {
  const db = new Database(path.join(dataDir, 'events.sqlite'), { readonly: true, fileMustExist: true })
  try {
    const statement = db.prepare<[number], { recorded_at: string }>('SELECT recorded_at FROM events WHERE position = ?')
    return new Map(positions.map((p) => [p, Date.parse(statement.get(p)?.recorded_at ?? '')]))
  } finally {
    db.close()
  }
}

/**
 * SSE fan-out: 1,000 clients follow GET /v1/exports/sse of one organization
 * while export jobs are requested one after another until at least 100
 * `export.updated` events went out (each job: queued, running, progress,
 * done). Every client must receive every update; delivery latency is the
 * receipt time minus the event's recorded time. The clients share one token,
 * so the server's cap on streams per principal is raised to their number.
 */
export const sseBench = async (): Promise<BenchResult[]> => {
  // The clients share the administrator's token, which the per-principal cap (16 by default) would refuse past the 16th.
  const server = await startServer({ env: { EXPORTS_SSE_MAX_STREAMS_PER_PRINCIPAL: String(clients) } })
  try {
    const api = await apiClient(server)
    const headers = { authorization: api.headers.authorization, 'organization-id': api.organizationId }
    const url = `${server.url}/v1/exports/sse`
    const measured: Array<Record<'updates' | 'jobs' | 'complete' | 'connectMs' | 'elapsedMs' | 'p50' | 'p99' | 'max' | 'clientCpu' | 'firstP99', number>> = []
    for (let round = 0; round < rounds; round++) {
      const connected: Client[] = []
      const connectStart = performance.now()
      for (let i = 0; i < clients; i += 100) {
        connected.push(...await Promise.all(Array.from({ length: Math.min(100, clients - i) }, () => connect(url, headers))))
      }
      const connectMs = performance.now() - connectStart
      const observer = connected[0]
      if (observer === undefined) throw new Error('no clients')
      const jobs: string[] = []
      const start = performance.now()
      const cpuBefore = process.cpuUsage()
      while (observer.receipts.length < updates) {
        const created = await api.call<{ data: { orderID: string } }>('POST', '/v1/exports', { type: 'receivables' }, [202])
        jobs.push(created.data.orderID)
        await sleep(10)
      }
      // Let the last jobs finish, then give the slowest client time to catch up.
      for (const id of jobs) {
        for (;;) {
          const job = await api.call<{ data: { status: string } }>('GET', `/v1/exports/${id}`)
          if (job.data.status === 'done' || job.data.status === 'failed') break
          await sleep(50)
        }
      }
      let expected = observer.receipts.length
      for (let settled = 0; settled < 40; settled++) {
        expected = observer.receipts.length
        if (connected.every((c) => c.receipts.length >= expected)) break
        await sleep(50)
      }
      const elapsedMs = performance.now() - start
      const cpu = process.cpuUsage(cpuBefore)
      const clientCpu = (cpu.user + cpu.system) / 1000 / elapsedMs
      const expectedPositions = new Set(observer.receipts.map((r) => r.position))
      const times = recordedAt(server.dataDir, [...expectedPositions])
      const latencies: number[] = []
      const firstReceipt = new Map<number, number>()
      let complete = 0
      for (const client of connected) {
        const positions = new Set(client.receipts.map((r) => r.position))
        if (positions.size === expectedPositions.size && [...expectedPositions].every((p) => positions.has(p)) && client.receipts.length === positions.size) complete++
        for (const receipt of client.receipts) {
          latencies.push(receipt.at - (times.get(receipt.position) ?? Number.NaN))
          firstReceipt.set(receipt.position, Math.min(firstReceipt.get(receipt.position) ?? Number.POSITIVE_INFINITY, receipt.at))
        }
      }
      for (const client of connected) client.source.close()
      measured.push({
        updates: expectedPositions.size, jobs: jobs.length, complete, connectMs, elapsedMs,
        p50: quantile(latencies, 0.5), p99: quantile(latencies, 0.99), max: quantile(latencies, 1), clientCpu,
        firstP99: quantile([...firstReceipt].map(([p, at]) => at - (times.get(p) ?? Number.NaN)), 0.99),
      })
      await sleep(500)
    }
    const pick = (key: keyof (typeof measured)[number]) => median(measured.map((m) => m[key]))
    const incomplete = measured.reduce((n, m) => n + (clients - m.complete), 0)
    const p99 = pick('p99')
    return [{
      name: 'SSE fan-out', what: `${clients} clients on GET /v1/exports/sse, ≥ ${updates} export job updates per round (jobs requested every 10 ms)`,
      result: { value: p99, unit: 'ms p99 delivery' },
      baseline: null, ratio: null,
      target: 'every client receives every update; p99 delivery < 200 ms',
      met: incomplete === 0 && p99 < 200,
      details: {
        updatesPerRound: pick('updates'), jobsPerRound: pick('jobs'), clientsMissingUpdates: incomplete,
        p50ms: pick('p50'), p99ms: p99, maxMs: pick('max'), connectAllMs: pick('connectMs'), roundMs: pick('elapsedMs'),
        firstClientP99ms: pick('firstP99'), clientProcessCpu: pick('clientCpu'),
      },
    }]
  } finally {
    await server.stop()
  }
}

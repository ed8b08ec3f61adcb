import autocannon from 'autocannon'
import { median } from './report.js'

export interface LoadOptions {
  url: string
  connections: number
  /** Seconds per measured round. */
  duration: number
  rounds: number
  /** Seconds of warm-up before the rounds (not measured). */
  warmup: number
  method?: 'GET' | 'POST'
  headers?: Record<string, string>
  /** Builds each request (path, body, headers); autocannon calls it per request. */
  requests?: autocannon.Request[]
  body?: string
}

export interface LoadResult {
  requestsPerSecond: number
  p50: number
  p99: number
  non2xx: number
  errors: number
  rounds: Array<{ requestsPerSecond: number; p99: number }>
}

const once = (options: LoadOptions, duration: number) =>
  autocannon({
    url: options.url,
    connections: options.connections,
    duration,
    method: options.method ?? 'GET',
    ...(options.headers === undefined ? {} : { headers: options.headers }),
    ...(options.requests === undefined ? {} : { requests: options.requests }),
    ...(options.body === undefined ? {} : { body: options.body }),
  })

/** Warm-up, then several rounds; the median round is quoted. */
export const load = async (options: LoadOptions): Promise<LoadResult> => {
  if (options.warmup > 0) await once(options, options.warmup)
  const rounds: autocannon.Result[] = []
  for (let i = 0; i < options.rounds; i++) rounds.push(await once(options, options.duration))
  return summarize(rounds)
}

/**
 * Baseline and service measured in alternating rounds (after a warm-up of
 * each), so that load from elsewhere on a shared machine falls on both alike.
 */
export const compare = async (baseline: LoadOptions, service: LoadOptions): Promise<{ baseline: LoadResult; service: LoadResult }> => {
  if (baseline.warmup > 0) await once(baseline, baseline.warmup)
  if (service.warmup > 0) await once(service, service.warmup)
  const a: autocannon.Result[] = []
  const b: autocannon.Result[] = []
  for (let i = 0; i < service.rounds; i++) {
    a.push(await once(baseline, baseline.duration))
    b.push(await once(service, service.duration))
  }
  return { baseline: summarize(a), service: summarize(b) }
}

const summarize = (rounds: autocannon.Result[]): LoadResult => ({
  requestsPerSecond: median(rounds.map((r) => r.requests.average)),
  p50: median(rounds.map((r) => r.latency.p50)),
  p99: median(rounds.map((r) => r.latency.p99)),
  non2xx: rounds.reduce((n, r) => n + r.non2xx, 0),
  errors: rounds.reduce((n, r) => n + r.errors, 0),
  rounds: rounds.map((r) => ({ requestsPerSecond: r.requests.average, p99: r.latency.p99 })),
})

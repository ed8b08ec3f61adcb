import path from 'node:path'
import { Value } from 'typebox/value'
import { SqliteEventStore } from '../src/events/sqlite.js'
import { ProductDTO } from '../src/http/products.js'
import { Tax } from '../src/http/taxes.js'
import { newId } from '../src/shared/ids.js'
import { Type } from 'typebox'
import { apiClient } from './lib/api.js'
import { startBareServer } from './lib/bare.js'
import { compare, load, type LoadOptions } from './lib/load.js'
import type { BenchResult } from './lib/report.js'
import { scratchDir } from './lib/scratch.js'
import { startServer } from './lib/server.js'

const rounds = Number(process.env['BENCH_ROUNDS'] ?? 3)
const duration = Number(process.env['BENCH_SECONDS'] ?? 10)
const warmup = Number(process.env['BENCH_WARMUP'] ?? 3)

const settings = (options: Omit<LoadOptions, 'rounds' | 'duration' | 'warmup'>): LoadOptions => ({ ...options, rounds, duration, warmup })
const measure = (options: Omit<LoadOptions, 'rounds' | 'duration' | 'warmup'>) => load(settings(options))

/** GET /v1/products/{id}: a public read from a projection, against a bare fastify route with the same JSON and schema. */
export const productsBench = async (): Promise<BenchResult[]> => {
  const server = await startServer()
  try {
    const api = await apiClient(server)
    const id = await api.creditLine()
    const url = `${server.url}/v1/products/${id}`
    const body: unknown = await (await fetch(url)).json()
    const schema = Type.Object({ data: Type.Object({ product: ProductDTO }) })
    if (!Value.Check(schema, body)) throw new Error('the product answer does not match its schema')
    const bare = await startBareServer({ path: '/product', body, schema })
    try {
      const { baseline: base, service: ours } = await compare(settings({ url: `${bare.url}/product`, connections: 50 }), settings({ url, connections: 50 }))
      const ratio = ours.requestsPerSecond / base.requestsPerSecond
      return [{
        name: 'GET /v1/products/{id}', what: 'public read from a projection, 50 connections',
        result: { value: ours.requestsPerSecond, unit: 'req/s' },
        baseline: { name: 'bare fastify route, same JSON and schema', value: base.requestsPerSecond, unit: 'req/s' },
        ratio, target: '≥ 70 % of baseline; p99 < 10 ms', met: ratio >= 0.7 && ours.p99 < 10,
        details: { p99ms: ours.p99, baselineP99ms: base.p99, non2xx: ours.non2xx },
      }]
    } finally {
      await bare.stop()
    }
  } finally {
    await server.stop()
  }
}

/** GET /v1/taxes with a Bearer token: JWT verification, organization context and a projection query. */
export const taxesBench = async (): Promise<BenchResult[]> => {
  const server = await startServer()
  try {
    const api = await apiClient(server)
    for (const [name, type, percentage] of [['IVA', 'VAT', 19], ['Retención en la fuente', 'RETENTION', 2.5], ['ICA', 'OTHER', 0.966]] as const) {
      await api.call('POST', '/v1/taxes', { name, type, percentage, applies_to: ['PAYMENT'], minimum_amount: 0 })
    }
    const url = `${server.url}/v1/taxes`
    const headers = { authorization: api.headers.authorization, 'organization-id': api.organizationId }
    const body: unknown = await (await fetch(url, { headers })).json()
    const schema = Type.Object({ status: Type.Literal('success'), data: Type.Array(Tax) })
    if (!Value.Check(schema, body)) throw new Error('the taxes answer does not match its schema')
    const bare = await startBareServer({ path: '/taxes', body, schema })
    try {
      const { baseline: base, service: ours } = await compare(settings({ url: `${bare.url}/taxes`, connections: 50 }), settings({ url, connections: 50, headers }))
      const ratio = ours.requestsPerSecond / base.requestsPerSecond
      return [{
        name: 'GET /v1/taxes (Bearer)', what: 'JWT verification + organization context + projection query, 50 connections',
        result: { value: ours.requestsPerSecond, unit: 'req/s' },
        baseline: { name: 'bare fastify route, same JSON and schema', value: base.requestsPerSecond, unit: 'req/s' },
        ratio, target: '≥ 50 % of baseline', met: ratio >= 0.5,
        details: { p99ms: ours.p99, non2xx: ours.non2xx },
      }]
    } finally {
      await bare.stop()
    }
  } finally {
    await server.stop()
  }
}

/** Raw appends of order-sized events to the embedded store from one process, 32 in flight: the orders baseline. */
const rawAppendsPerSecond = async (): Promise<number> => {
  const store = new SqliteEventStore({ file: path.join(scratchDir('orders-raw'), 'events.sqlite'), synchronous: 'FULL' })
  const event = () => ({
    id: newId(), type: 'PaymentOrderCreated', data: { orderId: newId(), amount: '1000.00', provider: 'manual' },
    metadata: { organizationId: newId(), actorId: newId(), correlationId: newId(), causationId: null, occurredAt: new Date().toISOString(), schemaVersion: 1 },
  })
  const total = 20_000
  const start = performance.now()
  for (let i = 0; i < total; i += 32) await Promise.all(Array.from({ length: 32 }, () => store.append(`order-${newId()}`, [event()], 'no_stream')))
  const perSecond = total / ((performance.now() - start) / 1000)
  await store.close()
  return perSecond
}

/** POST …/orders: command, append, projection catch-up, answer, at 32 connections over many credits. */
export const ordersBench = async (): Promise<BenchResult[]> => {
  const server = await startServer()
  try {
    const api = await apiClient(server)
    const lineId = await api.creditLine()
    const targets: string[] = []
    for (let i = 0; i < 16; i++) {
      const credit = await api.disbursedCredit(lineId, await api.debtor())
      for (const installment of credit.installments.slice(0, 4)) targets.push(`/v1/payables/${credit.ID}/installments/${installment.ID}/orders`)
    }
    const headers = { ...api.headers }
    const requests = targets.map((p) => ({ method: 'POST' as const, path: p, body: JSON.stringify({ Amount: '1000.00', Provider: 'manual' }) }))
    const baseline = await rawAppendsPerSecond()
    const ours = await measure({ url: server.url, connections: 32, headers, requests })
    return [{
      name: 'POST …/orders', what: 'create payment orders (manual provider), 32 connections, 64 installments of 16 credits',
      result: { value: ours.requestsPerSecond, unit: 'orders/s' },
      baseline: { name: 'raw appends to the embedded store, one process, 32 in flight', value: baseline, unit: 'appends/s' },
      ratio: ours.requestsPerSecond / baseline, target: '≥ 1,500 orders/s; p99 < 50 ms', met: ours.requestsPerSecond >= 1500 && ours.p99 < 50,
      details: { p50ms: ours.p50, p99ms: ours.p99, non2xx: ours.non2xx, errors: ours.errors },
    }]
  } finally {
    await server.stop()
  }
}

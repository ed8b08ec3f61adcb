import { creditQueries, creditsProjection, type CreditListQuery } from '../src/projections/credits.js'
import { MemoryReadStore } from '../src/projections/memoryStore.js'
import type { ReadDocument } from '../src/projections/readStore.js'
import { median, type BenchResult } from './lib/report.js'

/** BENCH_PAGES_CREDITS shrinks the run for a quick check; the figures in the docs are for 500,000. */
const CREDITS = Number(process.env['BENCH_PAGES_CREDITS'] ?? 500_000)
const ROUNDS = Number(process.env['BENCH_PAGES_ROUNDS'] ?? 5)
const PAGE = 50
const STATES = ['Desembolsado', 'Pagado', 'Aprobado', 'Cancelado'] as const

/**
 * Credit documents as the list reads them: the fields it filters and sorts
 * on, and a body of the size a credit's summary fields take. The same objects
 * go into both stores, so the two hold one copy between them.
 */
const seed = (stores: readonly MemoryReadStore[]): void => {
  const spec = creditsProjection.collections[0]
  if (spec === undefined) throw new Error('the credits projection declares no collection')
  const collections = stores.map((store) => store.collection<ReadDocument>(spec))
  const start = Date.parse('2024-01-02T09:00:00.000Z')
  for (let i = 0; i < CREDITS; i++) {
    const id = `0190${i.toString(16).padStart(8, '0')}-0000-7000-8000-000000000000`
    const doc = {
      _id: id, _position: i + 1, organizationId: i % 10 === 9 ? 'org-other' : 'org-bench', status: STATES[i % STATES.length],
      requestedAt: new Date(start + i * 60_000).toISOString(), debtorId: `debtor-${i % 50_000}`, creditLineId: `line-${i % 7}`,
      principal: '1000000.00', outstandingTotal: '512345.67', currency: 'COP', term: 12,
    }
    for (const collection of collections) collection.inProcess?.store(doc, null)
  }
}

interface Timings {
  firstMs: number
  deepMs: number
  filteredMs: number
}

/** Median time of each kind of page over the rounds; the list answers its page and its total, as the route asks. */
const measure = async (store: MemoryReadStore): Promise<Timings & { buildMs: number }> => {
  const list = creditQueries(store).list
  const page = async (query: Omit<CreditListQuery, 'organizationId' | 'limit'>): Promise<number> => {
    const started = performance.now()
    const answer = await list({ organizationId: 'org-bench', limit: PAGE, ...query })
    if (answer.items.length !== PAGE) throw new Error(`a page of ${answer.items.length} documents, ${PAGE} expected`)
    return performance.now() - started
  }
  const buildMs = await page({ offset: 0 })
  const rounds: Timings[] = []
  for (let round = 0; round < ROUNDS; round++) {
    rounds.push({ firstMs: await page({ offset: 0 }), deepMs: await page({ offset: Math.floor(CREDITS / 4) }), filteredMs: await page({ offset: 0, state: 'Pagado' }) })
  }
  return {
    buildMs,
    firstMs: median(rounds.map((r) => r.firstMs)),
    deepMs: median(rounds.map((r) => r.deepMs)),
    filteredMs: median(rounds.map((r) => r.filteredMs)),
  }
}

const round2 = (ms: number) => Math.round(ms * 100) / 100

export const pagesBench = async (): Promise<BenchResult[]> => {
  const kept = new MemoryReadStore()
  const sorting = new MemoryReadStore({ orderedFrom: Number.POSITIVE_INFINITY })
  seed([kept, sorting])
  const baseline = await measure(sorting)
  const result = await measure(kept)
  const perSecond = (t: Timings) => 3000 / (t.firstMs + t.deepMs + t.filteredMs)
  const inOrganization = Math.ceil(CREDITS * 0.9)
  return [{
    name: 'GET /v1/credits pages (memory store)',
    what: `the credit list's query (a page of ${PAGE} and its total) over ${inOrganization.toLocaleString('en-US')} credits of one organization, in process: the first page, a page at offset ${Math.floor(CREDITS / 4).toLocaleString('en-US')}, a page filtered by state`,
    result: { value: perSecond(result), unit: 'pages/s' },
    baseline: { value: perSecond(baseline), unit: 'pages/s', name: 'the same store sorting every match and testing every candidate of the total, for each page' },
    ratio: perSecond(result) / perSecond(baseline),
    target: '— (no target in issue 8)',
    met: null,
    details: {
      credits: inOrganization,
      firstPageMs: round2(result.firstMs), deepPageMs: round2(result.deepMs), filteredPageMs: round2(result.filteredMs), orderBuiltMs: round2(result.buildMs),
      sortingFirstPageMs: round2(baseline.firstMs), sortingDeepPageMs: round2(baseline.deepMs), sortingFilteredPageMs: round2(baseline.filteredMs),
    },
  }]
}

import t from 'tap'
import { rowNamed, runSmallBenches } from '../helpers/benchSmoke.js'

// The harness is run end to end at a small size, so a change that breaks a benchmark fails here rather than in the next hour-long run.
// No figure is judged (timed assertions do not belong in tests): only that each row was measured, with its baseline, and nothing failed.

t.test('the append and HTTP benchmarks measure every row against its baseline, with no failed request', { timeout: 300_000 }, async (t) => {
  const rows = await runSmallBenches(['append', 'products', 'taxes', 'orders', 'pages'])
  t.same(rows.map((r) => r.name), ['append (one at a time)', 'append (32 in flight)', 'GET /v1/products/{id}', 'GET /v1/taxes (Bearer)', 'POST …/orders', 'GET /v1/credits pages (memory store)'])
  const pages = rowNamed(rows, 'GET /v1/credits pages (memory store)')
  t.equal(pages.details['credits'], 2700, 'the pages were read over the organization\'s seeded credits')
  t.equal(pages.met, null, 'a row with no target in the issue is not judged')
  for (const row of rows.filter((r) => r !== pages)) {
    t.ok(row.result.value > 0 && Number.isFinite(row.result.value), `${row.name}: a measured figure`)
    t.ok(row.baseline !== null && row.baseline.value > 0, `${row.name}: a baseline measured in the same run`)
    t.equal(typeof row.met, 'boolean', `${row.name}: judged against its target`)
  }
  for (const name of ['GET /v1/products/{id}', 'GET /v1/taxes (Bearer)', 'POST …/orders']) {
    t.equal(rowNamed(rows, name).details['non2xx'], 0, `${name}: every request answered 2xx`)
  }
  t.equal(rowNamed(rows, 'POST …/orders').details['errors'], 0)
  t.equal(rowNamed(rows, 'append (32 in flight)').details['appendsPerRound'], 200)
})

import t from 'tap'
import { rowNamed, runSmallBenches } from '../helpers/benchSmoke.js'

// See smoke.requests.test.ts: the harness at a small size; counts are checked, never times.

t.test('the export, rebuild and start-up benchmarks go through every row, event and start they claim', { timeout: 300_000 }, async (t) => {
  const rows = await runSmallBenches(['exports', 'rebuild', 'startup'])
  t.same(rows.map((r) => r.name), [
    'export 1M installments to CSV', 'export 1M installments: peak RSS',
    'export 1M installments to CSV (SQLite read store)', 'export 1M installments: peak RSS (SQLite read store)',
    'projection rebuild from zero (1M mixed events)', 'start-up with 1M events (embedded store)', 'start-up with 1M events, no snapshot',
  ])
  for (const name of ['export 1M installments to CSV', 'export 1M installments to CSV (SQLite read store)']) {
    const row = rowNamed(rows, name)
    t.equal(row.details['rows'], 2000, `${name}: every row exported`)
    t.match(row.what, /over 2,000 rows/, `${name}: the size it ran at is in its description`)
    t.ok(Number(row.details['fileMiB']) > 0 && row.baseline !== null && row.baseline.value > 0, `${name}: a file written, beside csv-stringify alone`)
  }
  for (const name of ['export 1M installments: peak RSS', 'export 1M installments: peak RSS (SQLite read store)']) {
    t.ok(rowNamed(rows, name).result.value > 0, `${name}: sampled`)
  }
  const rebuild = rowNamed(rows, 'projection rebuild from zero (1M mixed events)')
  t.ok(Number(rebuild.details['events']) >= 3000, 'the rebuild projected the whole seeded log')
  t.ok(rebuild.baseline !== null && rebuild.baseline.value > 0 && Number(rebuild.details['cliRebuildSeconds']) > 0, 'the read baseline and the CLI command were measured')
  t.equal(rebuild.details['warmupRounds'], 1, 'after an unmeasured warm-up round of each kind')
  const startup = rowNamed(rows, 'start-up with 1M events (embedded store)')
  t.ok(Number(startup.details['events']) >= 3000 && Number(startup.details['snapshotMiB']) > 0, 'the start loaded the snapshot of the whole log')
  t.ok(rowNamed(rows, 'start-up with 1M events, no snapshot').result.value > 0, 'the start without a snapshot was measured')
})

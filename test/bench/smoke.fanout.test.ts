import t from 'tap'
import { rowNamed, runSmallBenches } from '../helpers/benchSmoke.js'

// See smoke.requests.test.ts: the harness at a small size; counts are checked, never times.

t.test('the webhook and SSE benchmarks deliver every send once and every update to every client', { timeout: 300_000 }, async (t) => {
  const rows = await runSmallBenches(['webhooks', 'sse'])
  t.same(rows.map((r) => r.name), ['webhook fan-out, 3 webhooks per approval', 'webhook fan-out', 'SSE fan-out'])
  for (const [name, perTrigger] of [['webhook fan-out, 3 webhooks per approval', 3], ['webhook fan-out', 1]] as const) {
    const row = rowNamed(rows, name)
    t.equal(row.details['deliveriesPerTrigger'], perTrigger)
    t.equal(row.details['lost'], 0, `${name}: no send missing at the sink`)
    t.equal(row.details['repeated'], 0, `${name}: no send arriving twice`)
    t.equal(row.details['throttledStarts'], 0, `${name}: the paced approvals never waited for the bound on unanswered ones`)
    t.ok(row.result.value > 0 && row.baseline !== null && row.baseline.value > 0, `${name}: deliveries/s beside the sink's own rate`)
    t.ok(Number(row.details['p99ms']) > 0 && Number(row.details['serverCpuUsPerApproval']) > 0, `${name}: latency and CPU reported`)
  }
  const sse = rowNamed(rows, 'SSE fan-out')
  t.equal(sse.details['clientsMissingUpdates'], 0, 'every client received every update')
  t.ok(Number(sse.details['updatesPerRound']) >= 5, 'at least the asked-for updates were sent')
  t.ok(sse.result.value > 0, 'a delivery p99 was measured')
})

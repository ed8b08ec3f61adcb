import t from 'tap'
import { mergeResults, table, type BenchResult } from '../../bench/lib/report.js'

const row = (name: string, value: number, measuredAt?: string): BenchResult => ({
  name, what: `${name} measured`, result: { value, unit: 'req/s' }, baseline: null, ratio: null, target: '≥ 1 req/s', met: true, details: {},
  ...(measuredAt === undefined ? {} : { measuredAt }),
})

t.test('a partial run replaces its rows where they stood and keeps the others with the time they were measured', async (t) => {
  const previous = { machine: { date: '2026-11-22T05:43:00.000Z' }, results: [row('a', 1), row('b', 2, '2026-11-22T06:27:00.000Z'), row('c', 3)] }
  const merged = mergeResults(previous, [row('b', 20), row('d', 40)], '2026-11-22T07:51:00.000Z')
  t.same(merged.map((r) => [r.name, r.result.value, r.measuredAt]), [
    ['a', 1, '2026-11-22T05:43:00.000Z'],
    ['b', 20, '2026-11-22T07:51:00.000Z'],
    ['c', 3, '2026-11-22T05:43:00.000Z'],
    ['d', 40, '2026-11-22T07:51:00.000Z'],
  ])
})

t.test('a first run writes every row with its time', async (t) => {
  const merged = mergeResults({}, [row('a', 1)], '2026-11-22T07:51:00.000Z')
  t.same(merged.map((r) => r.measuredAt), ['2026-11-22T07:51:00.000Z'])
})

t.test('the table shows what else the machine was doing while each row ran', async (t) => {
  const busy = { ...row('a', 1), machineLoad: { stealPercent: 12.25, otherProcessesCores: 0.8, loadAverageAtStart: 2.5 } }
  const lines = table([busy, row('b', 2)]).split('\n')
  t.match(lines[0], /\| machine while it ran \| measured \(UTC\) \|$/)
  t.match(lines[2], /\| steal 12\.3 %, others 0\.80 cores, load 2\.50 \| — \|$/)
  t.match(lines[3], /\| — \| — \|$/)
})

t.test('the table shows when each row was measured', async (t) => {
  const lines = table([row('a', 1, '2026-11-22T05:43:10.000Z'), row('b', 2)]).split('\n')
  t.match(lines[0], /\| measured \(UTC\) \|$/)
  t.match(lines[2], /\| 2026-11-22 05:43 \|$/)
  t.match(lines[3], /\| — \|$/)
})

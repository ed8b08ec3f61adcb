import os from 'node:os'
import t from 'tap'
import { describeMachineLoad, machineLoadBetween, parseCpuTicks, parseOwnTicks, watchMachineLoad } from '../../bench/lib/machineLoad.js'

const procStat = (user: number, idle: number, iowait: number, steal: number) =>
  `cpu  ${user} 0 100 ${idle} ${iowait} 0 10 ${steal} 40 0\ncpu0 1 2 3 4 5 6 7 8 9 10\n`

const selfStat = (utime: number, cutime: number) =>
  `4034 (node bench (run)) S 4031 4031 1056 0 -1 4194304 99 0 0 0 ${utime} 5 ${cutime} 5 20 0 1 0 403499 3133440 394`

t.test('the machine line of /proc/stat gives total, busy and stolen ticks, guest time not counted twice', async (t) => {
  t.same(parseCpuTicks(procStat(1000, 5000, 200, 300)), { total: 6610, busy: 1110, steal: 300 })
  t.equal(parseCpuTicks('intr 1 2 3\n'), null)
  t.equal(parseCpuTicks('cpu 1 2 x 4 5 6 7 8\n'), null)
})

t.test("the process's own and reaped children's ticks are read after the command name, which may hold spaces and parentheses", async (t) => {
  t.equal(parseOwnTicks(selfStat(70, 300)), 70 + 5 + 300 + 5)
  t.equal(parseOwnTicks('12 (short) S 1'), null)
})

t.test('steal and the cores other processes kept busy come from the ticks between two samples', async (t) => {
  const before = { cpu: { total: 10_000, busy: 2_000, steal: 100 }, own: 1_000 }
  // 2,000 ticks pass on 2 cores: 200 stolen, 1,500 busy of which the benchmark's tree used 1,000.
  const after = { cpu: { total: 12_000, busy: 3_500, steal: 300 }, own: 2_000 }
  const load = machineLoadBetween(before, after, 2, 0.75)
  t.equal(load.stealPercent, 10)
  t.equal(load.otherProcessesCores, 0.5)
  t.equal(load.loadAverageAtStart, 0.75)
  t.equal(describeMachineLoad(load), 'steal 10.0 %, others 0.50 cores, load 0.75')
})

t.test('without /proc figures the load says it does not know rather than zero', async (t) => {
  const unknown = machineLoadBetween({ cpu: null, own: null }, { cpu: null, own: null }, 2, 1.5)
  t.equal(describeMachineLoad(unknown), 'steal ?, others ?, load 1.50')
  const noOwn = machineLoadBetween({ cpu: { total: 1, busy: 0, steal: 0 }, own: null }, { cpu: { total: 101, busy: 50, steal: 0 }, own: 7 }, 2, 0)
  t.equal(noOwn.stealPercent, 0)
  t.equal(noOwn.otherProcessesCores, null)
  t.equal(describeMachineLoad(undefined), '—')
})

t.test("on Linux the watch reads this machine's figures, within what two samples allow", async (t) => {
  const watch = watchMachineLoad()
  const until = Date.now() + 200
  let spins = 0
  while (Date.now() < until) spins += 1
  const load = watch.stop()
  t.ok(spins > 0)
  if (process.platform !== 'linux') return
  const { stealPercent, otherProcessesCores } = load
  t.ok(stealPercent !== null && stealPercent >= 0 && stealPercent <= 100, `steal ${stealPercent}`)
  t.ok(otherProcessesCores !== null && otherProcessesCores >= 0 && otherProcessesCores <= os.cpus().length, `others ${otherProcessesCores}`)
})

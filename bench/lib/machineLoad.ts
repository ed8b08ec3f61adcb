import fs from 'node:fs'
import os from 'node:os'

/** Cumulative CPU ticks of every core, from the first line of /proc/stat. */
export interface CpuTicks {
  total: number
  busy: number
  steal: number
}

/**
 * What else the machine was doing while one benchmark ran: the share of CPU
 * time the hypervisor gave to other guests (steal), the cores kept busy by
 * processes outside the benchmark's own tree, and the 1-minute load average
 * when it began. Shared machines make rows swing; this says which rows ran
 * on a busy hour.
 */
export interface MachineLoad {
  stealPercent: number | null
  otherProcessesCores: number | null
  loadAverageAtStart: number
}

// Fields after "cpu": user nice system idle iowait irq softirq steal guest guest_nice; guest time is already counted in user and nice.
export const parseCpuTicks = (procStat: string): CpuTicks | null => {
  const first = procStat.split('\n', 1)[0] ?? ''
  const [label, ...fields] = first.trim().split(/\s+/)
  if (label !== 'cpu' || fields.length < 8) return null
  const ticks = fields.slice(0, 8).map(Number)
  if (ticks.some((tick) => !Number.isFinite(tick))) return null
  const [, , , idle = 0, iowait = 0, , , steal = 0] = ticks
  const total = ticks.reduce((sum, tick) => sum + tick, 0)
  return { total, busy: total - idle - iowait - steal, steal }
}

/**
 * CPU ticks of this process and of its children that have exited (utime,
 * stime, cutime, cstime of /proc/self/stat). Every benchmark stops the
 * servers and load tools it started, so by its end they are all counted.
 */
export const parseOwnTicks = (selfStat: string): number | null => {
  // The command name (field 2) is in parentheses and may hold spaces: count fields from the last ')'.
  const fields = selfStat.slice(selfStat.lastIndexOf(')') + 1).trim().split(/\s+/)
  const own = fields.slice(11, 15).map(Number)
  return own.length === 4 && own.every(Number.isFinite) ? own.reduce((sum, tick) => sum + tick, 0) : null
}

interface Sample {
  cpu: CpuTicks | null
  own: number | null
}

export const machineLoadBetween = (before: Sample, after: Sample, cores: number, loadAverageAtStart: number): MachineLoad => {
  if (before.cpu === null || after.cpu === null) return { stealPercent: null, otherProcessesCores: null, loadAverageAtStart }
  const elapsed = after.cpu.total - before.cpu.total
  if (elapsed <= 0) return { stealPercent: null, otherProcessesCores: null, loadAverageAtStart }
  const stealPercent = ((after.cpu.steal - before.cpu.steal) / elapsed) * 100
  const otherProcessesCores = before.own === null || after.own === null
    ? null
    : Math.max(0, (after.cpu.busy - before.cpu.busy - (after.own - before.own)) / elapsed) * cores
  return { stealPercent, otherProcessesCores, loadAverageAtStart }
}

const readOr = <T>(file: string, parse: (text: string) => T | null): T | null => {
  try {
    return parse(fs.readFileSync(file, 'utf8'))
  } catch {
    return null
  }
}

const sample = (): Sample => ({ cpu: readOr('/proc/stat', parseCpuTicks), own: readOr('/proc/self/stat', parseOwnTicks) })

/** Starts watching; `stop()` answers the load over the time between. Figures are null where /proc is missing (not Linux). */
export const watchMachineLoad = (): { stop: () => MachineLoad } => {
  const loadAverageAtStart = os.loadavg()[0] ?? 0
  const before = sample()
  return { stop: () => machineLoadBetween(before, sample(), os.cpus().length, loadAverageAtStart) }
}

const orUnknown = (value: number | null, digits: number, unit: string) => (value === null ? '?' : `${value.toFixed(digits)}${unit}`)

export const describeMachineLoad = (load: MachineLoad | undefined): string =>
  load === undefined
    ? '—'
    : `steal ${orUnknown(load.stealPercent, 1, ' %')}, others ${orUnknown(load.otherProcessesCores, 2, ' cores')}, load ${load.loadAverageAtStart.toFixed(2)}`

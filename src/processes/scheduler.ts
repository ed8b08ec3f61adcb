import cron, { type ScheduledTask } from 'node-cron'
import type { ProcessLogger } from './process.js'

export interface ScheduledJob<Deps> {
  name: string
  /** node-cron expression (seconds field optional). */
  schedule: string
  /** Jobs only issue commands; what they change is recorded as events. */
  run(deps: Deps): Promise<void>
}

/** node-cron schedules; `runNow` lets tests and operators trigger a job with an injected clock. */
export class Scheduler<Deps> {
  private readonly tasks: ScheduledTask[] = []
  private readonly running = new Set<string>()

  constructor(
    private readonly jobs: ReadonlyArray<ScheduledJob<Deps>>,
    private readonly deps: Deps,
    private readonly logger: ProcessLogger,
  ) {}

  start(): void {
    for (const job of this.jobs) {
      // runNow skips a tick while the previous run is still going; a missed tick is caught up by the next one.
      // In UTC whatever the host's zone: the jobs' periods (the previous UTC day or month) are UTC, and UTC has no missing hour.
      const task = cron.schedule(job.schedule, () => void this.runNow(job.name), { name: job.name, timezone: 'UTC' })
      task.on('execution:missed', (context) => this.logger.debug({ job: job.name, at: context.date }, 'scheduled run missed; the next run catches up'))
      this.tasks.push(task)
    }
  }

  get names(): string[] {
    return this.jobs.map((j) => j.name)
  }

  /** When a started job runs next (null: not started or no further run). */
  nextRun(name: string): Date | null {
    return this.tasks.find((task) => task.name === name)?.getNextRun() ?? null
  }

  async runNow(name: string): Promise<void> {
    const job = this.jobs.find((j) => j.name === name)
    if (job === undefined) throw new Error(`unknown job ${name}`)
    if (this.running.has(name)) return
    this.running.add(name)
    try {
      await job.run(this.deps)
    } catch (error) {
      this.logger.error({ err: error, job: name }, 'scheduled job failed')
    } finally {
      this.running.delete(name)
    }
  }

  async stop(): Promise<void> {
    for (const task of this.tasks) await task.stop()
    this.tasks.length = 0
  }
}

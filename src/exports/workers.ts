/**
 * The export jobs this instance is running: a fixed number of slots, each
 * job abortable. The queue itself is the read model (jobs in `queued`), so
 * nothing waits in memory for a slot.
 */
export class ExportWorkers {
  private readonly running = new Map<string, { abort: AbortController; done: Promise<void> }>()
  private stopped = false
  /** Set while a pump claims jobs, so that concurrent triggers run it once more instead of in parallel. */
  pumping: Promise<void> | null = null
  pumpAgain = false

  constructor(readonly capacity: number) {}

  get free(): number {
    return this.stopped ? 0 : Math.max(0, this.capacity - this.running.size)
  }

  get stopping(): boolean {
    return this.stopped
  }

  get active(): ReadonlySet<string> {
    return new Set(this.running.keys())
  }

  /** Runs a claimed job in a slot; `work` must settle once its signal aborts. */
  start(orderId: string, work: (signal: AbortSignal) => Promise<void>, onDone: () => void): void {
    const abort = new AbortController()
    const done = work(abort.signal).finally(() => {
      this.running.delete(orderId)
      if (!this.stopped) onDone()
    })
    this.running.set(orderId, { abort, done })
  }

  /** Aborts every running job and waits until each has recorded how it ended. */
  async stop(): Promise<void> {
    this.stopped = true
    const jobs = [...this.running.values()]
    for (const job of jobs) job.abort.abort()
    await Promise.allSettled(jobs.map((job) => job.done))
    await this.pumping
  }
}

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

  /**
   * Runs a claimed job in a slot; `work` must settle once its signal aborts,
   * and promptly when it is already aborted (a job claimed while stopping).
   */
  start(orderId: string, work: (signal: AbortSignal) => Promise<void>, onDone: () => void): void {
    const abort = new AbortController()
    // A claim that was in flight when stop began: the job must record its interruption, never run.
    if (this.stopped) abort.abort()
    const done = work(abort.signal).finally(() => {
      this.running.delete(orderId)
      if (!this.stopped) onDone()
    })
    this.running.set(orderId, { abort, done })
  }

  /**
   * Aborts every running job and waits until each has recorded how it ended,
   * including jobs whose claim completes while the stop is under way.
   */
  async stop(): Promise<void> {
    this.stopped = true
    for (const job of this.running.values()) job.abort.abort()
    // A claim in flight when stop began starts its job only once it completes: jobs are collected again until no pump is left.
    while (this.pumping !== null || this.running.size > 0) {
      await Promise.allSettled([this.pumping, ...[...this.running.values()].map((job) => job.done)])
    }
  }
}

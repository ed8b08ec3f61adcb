/** Runs `work` over every item with at most `concurrency` in flight; resolves when all are done (the first failure rejects). */
export const inPool = async <T>(items: readonly T[], concurrency: number, work: (item: T) => Promise<void>): Promise<void> => {
  let next = 0
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++] as T
      await work(item)
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker))
}

/** The value at quantile q (0–1) of a list of numbers. */
export const quantile = (values: readonly number[], q: number): number => {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? Number.NaN
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Epoch milliseconds with sub-millisecond resolution, comparable across processes of one machine. */
export const epochNow = () => performance.timeOrigin + performance.now()

/**
 * Starts `work` for item i at `i / perSecond` seconds after the call (an open
 * loop: a slow answer does not delay the next start, as real clients do not
 * wait for each other), with at most `maxInFlight` unfinished. Answers how
 * many starts waited because that bound was reached (`throttled`: the
 * service did not keep up), and how many were more than `lateMs` behind
 * schedule for any reason (`late`: including this process's own timers
 * firing late on a busy machine).
 */
export const atRate = async <T>(
  items: readonly T[], perSecond: number, maxInFlight: number, work: (item: T) => Promise<void>, lateMs = 10,
): Promise<{ late: number; throttled: number }> => {
  const start = performance.now()
  const running = new Set<Promise<void>>()
  let late = 0
  let throttled = 0
  for (const [i, item] of items.entries()) {
    const due = start + (i * 1000) / perSecond
    const wait = due - performance.now()
    if (wait > 0) await sleep(wait)
    if (running.size >= maxInFlight) throttled += 1
    while (running.size >= maxInFlight) await Promise.race(running)
    if (performance.now() - due > lateMs) late += 1
    const task: Promise<void> = work(item).finally(() => running.delete(task))
    running.add(task)
  }
  await Promise.all(running)
  return { late, throttled }
}

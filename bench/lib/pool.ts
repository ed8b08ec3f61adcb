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

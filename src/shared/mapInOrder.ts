import { pMapIterable, type pMapSkip, type pMapStop } from 'p-map'

/**
 * `mapper` over `input`, `concurrency` at a time, results in input order.
 * When the consumer stops (an error, a break), the mappers already running
 * finish before control returns: a caller that then removes what they write
 * is not followed by late writes.
 */
export async function* mapInOrder<T, R>(input: AsyncIterable<T>, mapper: (item: T) => Promise<R>, concurrency: number): AsyncGenerator<Exclude<R, typeof pMapSkip | typeof pMapStop>> {
  const running = new Set<Promise<R>>()
  const tracked = (item: T): Promise<R> => {
    const result = mapper(item)
    running.add(result)
    // Also handles the rejection of a result the consumer never collects.
    result.then(() => running.delete(result), () => running.delete(result))
    return result
  }
  try {
    yield* pMapIterable(input, tracked, { concurrency })
  } finally {
    await Promise.allSettled([...running])
  }
}

/** Serializes work by key: one runs at a time per key, in arrival order. */
export class KeyedLock {
  private readonly tails = new Map<string, Promise<void>>()

  async run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve()
    let release: () => void = () => undefined
    const tail = new Promise<void>((resolve) => { release = resolve })
    const chained = previous.then(() => tail)
    this.tails.set(key, chained)
    await previous
    try {
      return await work()
    } finally {
      release()
      if (this.tails.get(key) === chained) this.tails.delete(key)
    }
  }
}

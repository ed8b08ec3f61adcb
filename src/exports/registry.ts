/** Values by a key each carries (a data set's type, a blob producer's kind); registering a key again replaces its value. */
export class Registry<K extends string, V> {
  private readonly entries = new Map<K, V>()

  constructor(private readonly keyOf: (value: V) => K, initial: readonly V[] = []) {
    for (const value of initial) this.register(value)
  }

  register(value: V): void {
    this.entries.set(this.keyOf(value), value)
  }

  /** Takes a key out (an operator's build without a data set, a test of what answers when one is missing). */
  remove(key: K): void {
    this.entries.delete(key)
  }

  get(key: K): V | undefined {
    return this.entries.get(key)
  }

  get keys(): K[] {
    return [...this.entries.keys()]
  }
}

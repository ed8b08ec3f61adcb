/** What the tail holds after a position: the events (of the asked types) and how far it looked. */
export interface TailRead<E> {
  events: E[]
  through: number
}

/**
 * The latest events this connection committed, in log order and without a
 * gap, parsed once and frozen: the subscriptions of the process (projections
 * and process managers) take what was just appended from here instead of each
 * reading it back from SQLite and parsing it again. Bounded: the oldest half
 * is dropped when it reaches twice its capacity; a subscriber further behind
 * reads the log, as it always could.
 */
export class CommittedTail<E extends { position: number; type: string }> {
  private events: E[] = []

  constructor(private readonly capacity: number) {}

  /** Adds an event committed after the last one; a gap (another connection committed in between) starts the tail again. */
  add(event: E): void {
    const last = this.events.at(-1)
    if (last !== undefined && event.position !== last.position + 1) this.events = []
    this.events.push(event)
    if (this.events.length >= 2 * this.capacity) this.events = this.events.slice(-this.capacity)
  }

  clear(): void {
    this.events = []
  }

  /**
   * Up to `limit` events after `after` (only of `types` when given), when the
   * tail holds the event right after it or `after` is its last; null when it
   * does not, and the log must be read. `through` is the last position
   * looked at, so a filtered read never looks at the same events again.
   */
  after(after: number, types: ReadonlySet<string> | null, limit: number): TailRead<E> | null {
    const first = this.events[0]
    const last = this.events.at(-1)
    if (first === undefined || last === undefined || after < first.position - 1 || after > last.position) return null
    const found: E[] = []
    let through = after
    for (let index = after - first.position + 1; index < this.events.length && found.length < limit; index++) {
      const event = this.events[index]
      if (event === undefined) break
      through = event.position
      if (types === null || types.has(event.type)) found.push(event)
    }
    return { events: found, through }
  }
}

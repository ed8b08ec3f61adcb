/** What the tail holds after a position: the events (of the asked types) and how far it looked. */
export interface TailRead<E> {
  events: E[]
  through: number
}

/**
 * The latest events this connection committed, in log order and without a
 * gap, parsed once and frozen: the subscriptions of the process (projections
 * and process managers) take what was just appended from here instead of each
 * reading it back from SQLite and parsing it again. Bounded in events and in
 * bytes (of their JSON, a proxy for the parsed size: a webhook send's events
 * carry bodies up to 64 KiB, a stored request up to the body limit): past
 * twice either bound the oldest are dropped down to it; a subscriber further
 * behind reads the log, as it always could.
 */
export class CommittedTail<E extends { position: number; type: string }> {
  private events: E[] = []
  private sizes: number[] = []
  private bytes = 0

  constructor(private readonly capacity: number, private readonly maxBytes = 16 * 2 ** 20) {}

  /** Adds an event committed after the last one; a gap (another connection committed in between) starts the tail again. */
  add(event: E, bytes = 0): void {
    const last = this.events.at(-1)
    if (last !== undefined && event.position !== last.position + 1) this.clear()
    this.events.push(event)
    this.sizes.push(bytes)
    this.bytes += bytes
    if (this.events.length >= 2 * this.capacity || this.bytes >= 2 * this.maxBytes) this.trim()
  }

  private trim(): void {
    let drop = Math.max(0, this.events.length - this.capacity)
    let kept = this.bytes
    for (let index = 0; index < drop; index++) kept -= this.sizes[index] ?? 0
    while (drop < this.events.length && kept > this.maxBytes) {
      kept -= this.sizes[drop] ?? 0
      drop += 1
    }
    this.events = this.events.slice(drop)
    this.sizes = this.sizes.slice(drop)
    this.bytes = kept
  }

  clear(): void {
    this.events = []
    this.sizes = []
    this.bytes = 0
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

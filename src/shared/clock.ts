export interface Clock {
  now(): Date
}

export const systemClock: Clock = { now: () => new Date() }

/** A clock tests move by hand. */
export class ManualClock implements Clock {
  private current: number
  constructor(start: Date | string = '2026-01-15T12:00:00.000Z') {
    this.current = new Date(start).getTime()
  }
  now(): Date {
    return new Date(this.current)
  }
  set(to: Date | string): void {
    this.current = new Date(to).getTime()
  }
  advance(ms: number): void {
    this.current += ms
  }
}

export const isoNow = (clock: Clock): string => clock.now().toISOString()

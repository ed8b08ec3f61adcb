import { randomFillSync } from 'node:crypto'
import { parse, v5 as uuidv5, v7 as uuidv7, validate, version } from 'uuid'

/** Namespace for every name-derived id of this service (UUIDv5). */
export const SERVICE_NAMESPACE = '6f1d3c52-8a0e-5b1f-9a2c-3e4d5f6a7b8c'
const NAMESPACE_BYTES = parse(SERVICE_NAMESPACE)

// Random bytes drawn 4 KiB at a time: one call into the CSPRNG per 256 ids. Drawn per id
// (what `uuid` does by default) it was 4 % of the server's time under the webhook load.
const pool = new Uint8Array(4096)
let drawn = pool.length
const sixteenRandomBytes = (): Uint8Array => {
  if (drawn === pool.length) {
    randomFillSync(pool)
    drawn = 0
  }
  drawn += 16
  return pool.subarray(drawn - 16, drawn)
}

// RFC 9562's counter method, as `uuid` keeps it by default: a new millisecond starts the counter at a random value, the same one increments it.
let lastMillisecond = -Infinity
let counter = 0

/**
 * A new id: UUIDv7, so ids made one after another sort by time. The log's
 * unique indexes (event id; stream id and revision) then take new keys at
 * their right edge, and a commit rewrites a few index pages instead of one
 * random page per event (see docs/benchmarks.md, "Time-ordered ids").
 */
export const newId = (): string => {
  const random = sixteenRandomBytes()
  const now = Date.now()
  if (now > lastMillisecond) {
    lastMillisecond = now
    counter = (((random[6] ?? 0) & 0x7f) << 24) | ((random[7] ?? 0) << 16) | ((random[8] ?? 0) << 8) | (random[9] ?? 0)
  } else {
    counter = (counter + 1) | 0
    if (counter === 0) lastMillisecond += 1
  }
  return uuidv7({ random, msecs: lastMillisecond, seq: counter })
}

/** A stable id derived from a name: the same name gives the same id on every installation. */
export const deterministicId = (...parts: Array<string | number>): string =>
  uuidv5(parts.map(String).join(':'), NAMESPACE_BYTES)

/** True for a UUIDv7, whose leading characters are its time and whose last ones are random. */
export const isTimeOrderedId = (id: string): boolean => validate(id) && version(id) === 7

/**
 * A stable id that sorts with the UUIDv7 it derives from: that id's
 * 48-bit millisecond prefix, then the name-derived bits of
 * `deterministicId(...parts)`, as a UUIDv8 (RFC 9562's custom layout).
 * From an id that is not UUIDv7 (made before ids were time-ordered) it is
 * `deterministicId(...parts)` itself, so ids derived from older ones do
 * not change.
 */
export const deterministicIdAfter = (timeOrderedId: string, ...parts: Array<string | number>): string => {
  const named = deterministicId(...parts)
  if (!isTimeOrderedId(timeOrderedId)) return named
  return `${timeOrderedId.slice(0, 13).toLowerCase()}-8${named.slice(15)}`
}

export const isUuid = (value: string): boolean => validate(value)

import { createHash } from 'node:crypto'

/** The hash of what makes two requests under one idempotency key "the same": their canonical fields, in order. */
export const hashRequest = (fields: readonly unknown[]): string => createHash('sha256').update(JSON.stringify(fields)).digest('hex')

/**
 * A value in a canonical form: an object as its [key, value] pairs sorted by
 * key, absent (undefined) fields left out, so the order the client wrote the
 * keys in does not matter; arrays keep their order.
 */
export const canonical = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(canonical)
  if (typeof value !== 'object' || value === null) return value
  return Object.entries(value)
    .filter(([, field]) => field !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, field]) => [key, canonical(field)])
}

/**
 * A creation under an idempotency key, whose id derives from the key so its
 * stream is created once: `earlier` answers what the key already created
 * (or refuses another request with it), else `create` runs. A creation that
 * decided nothing lost a race to a concurrent request with the same key,
 * whose creation `earlier` then answers.
 */
export const createOnce = async <R, C extends { events: readonly unknown[] }>(
  earlier: () => Promise<R | null>, create: () => Promise<C>, created: (result: C) => R,
): Promise<R> => {
  const before = await earlier()
  if (before !== null) return before
  const result = await create()
  if (result.events.length > 0) return created(result)
  const concurrent = await earlier()
  if (concurrent === null) throw new Error('a keyed creation decided nothing, yet nothing exists under its key')
  return concurrent
}

import { createHash } from 'node:crypto'

/** The hash of what makes two requests under one idempotency key "the same": their canonical fields, in order. */
export const hashRequest = (fields: readonly unknown[]): string => createHash('sha256').update(JSON.stringify(fields)).digest('hex')

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

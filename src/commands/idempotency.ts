import { createHash } from 'node:crypto'
import type { DomainEvent } from '../events/catalogue.js'
import type { RequestKey } from '../events/types.js'
import { AppError } from '../shared/errors.js'
import type { Aggregate } from './decider.js'
import type { CommandContext, CommandHandler } from './handler.js'

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

/** A resource created under an `Idempotency-Key` whose id derives from the organization and the Key. */
export interface KeyedCreation<S> {
  /** The Key and the hash (or digest) of this request. */
  requested: RequestKey
  /** What the 409 calls the request: `a different ${what}`. */
  what: string
  /** Added to the 409's details: the id the Key names. */
  details: Record<string, string>
  load: () => Promise<{ state: S; position: number }>
  exists: (state: S) => boolean
  /** The Key and hash recorded with the resource (absent when it was created without one). */
  recordedKey: (state: S) => RequestKey | undefined
  /** Whether this caller may have the resource back (default: anyone who may create one). */
  mayView?: { allows: (state: S) => boolean; refusal: string }
  create: () => Promise<{ events: readonly unknown[]; position: number }>
}

/**
 * A creation under an `Idempotency-Key`: the first request creates, the same
 * request again gets the resource back (`created: false`) whatever it has
 * become, another request with the Key is 409 `IDEMPOTENCY_KEY_REUSED`, as is
 * the same request from a caller `mayView` refuses; the 409 names the
 * resource (`details`) only to a caller `mayView` allows.
 */
export const createOnceUnderKey = <S>(creation: KeyedCreation<S>): Promise<{ created: boolean; position: number }> => {
  // The resource's id goes only to a caller who may have the resource back: to another, even naming it says too much.
  const reused = (message: string, named: boolean) =>
    new AppError('IDEMPOTENCY_KEY_REUSED', message, { key: creation.requested.key, ...(named ? creation.details : {}) })
  const earlier = async () => {
    const { state, position } = await creation.load()
    if (!creation.exists(state)) return null
    const visible = creation.mayView === undefined || creation.mayView.allows(state)
    if (creation.recordedKey(state)?.requestHash !== creation.requested.requestHash) {
      throw reused(`this Idempotency-Key was already used for a different ${creation.what}`, visible)
    }
    if (creation.mayView !== undefined && !visible) throw reused(creation.mayView.refusal, false)
    return { created: false, position }
  }
  return createOnce(earlier, creation.create, (result) => ({ created: true, position: result.position }))
}

/**
 * `createOnceUnderKey` for a resource that is one aggregate's stream, whose id
 * derives from the Key and whose state keeps the Key it was created with:
 * whoever may create one may have it back.
 */
export const createStreamOnce = <C, E extends DomainEvent, S extends { idempotency?: RequestKey }>(
  commands: CommandHandler,
  aggregate: Aggregate<C, E, S>,
  id: string,
  command: C & { idempotency: RequestKey },
  context: CommandContext,
  creation: Pick<KeyedCreation<S>, 'what' | 'details' | 'exists' | 'mayView'>,
): Promise<{ created: boolean; position: number }> => createOnceUnderKey({
  ...creation, requested: command.idempotency,
  load: () => commands.load(aggregate, id), recordedKey: (state) => state.idempotency,
  create: () => commands.execute(aggregate, id, command, context),
})

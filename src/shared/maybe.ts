/**
 * A value now or a promise of it: what a read answers when the store may hold
 * its documents in process memory. Answering without a promise spares the
 * promise, its microtask and the hops of every caller up the chain, on paths
 * every request takes (authentication, organization access).
 */
export type Maybe<T> = T | Promise<T>

/** `next` applied to the value: at once when it is at hand, once it settles otherwise (a throw in `next` then rejects). */
export const whenReady = <T, R>(value: Maybe<T>, next: (value: T) => Maybe<R>): Maybe<R> =>
  value instanceof Promise ? value.then(next) : next(value)

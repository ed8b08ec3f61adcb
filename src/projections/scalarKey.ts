/** A value the memory store's indexes key documents by. */
export type Key = string | number | boolean

/**
 * Whether a value is a key: a string, a boolean or a finite number. NaN and
 * the infinities (which JSON cannot hold) are left to the general matcher and
 * to sorting: in a key they would break equality (JSON writes them as null)
 * and order (the difference of two infinities is NaN).
 */
export const isKey = (value: unknown): value is Key =>
  typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value))

/**
 * Freezes a plain-JSON value and everything in it, for objects shared between
 * callers (read-model documents, cached aggregate states, the empty template
 * context): a caller that tries to edit one fails loudly instead of changing
 * it for the others. Already frozen parts are not walked again.
 */
export const deepFreeze = <T>(value: T): T => {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const child of Object.values(value)) deepFreeze(child)
  }
  return value
}

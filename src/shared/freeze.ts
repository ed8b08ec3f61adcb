/**
 * Freezes a plain-JSON value and everything in it, for objects shared between
 * callers (read-model documents, cached aggregate states, the empty template
 * context): a caller that tries to edit one fails loudly instead of changing
 * it for the others. Already frozen parts are not walked again, so freezing a
 * new version of a document costs only its new parts.
 */
export const deepFreeze = <T>(value: T): T => {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) freezeObject(value)
  return value
}

// Walked with for…in (no array of values per object): the read store freezes every document it is given.
const freezeObject = (value: object): void => {
  Object.freeze(value)
  if (Array.isArray(value)) {
    for (const child of value) if (child !== null && typeof child === 'object' && !Object.isFrozen(child)) freezeObject(child)
    return
  }
  for (const key in value) {
    const child: unknown = Reflect.get(value, key)
    if (child !== null && typeof child === 'object' && !Object.isFrozen(child)) freezeObject(child)
  }
}

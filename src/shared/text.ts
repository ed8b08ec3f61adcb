/** Characters as JSON Schema's `maxLength` counts them (code points): an emoji is one, not the two UTF-16 units of `String.length`. */
export const characterCount = (text: string): number => {
  let count = 0
  for (const _character of text) count += 1
  return count
}

const beyondSurrogates = /[\ud800-\uffff]/
const surrogatesLast = (unit: number) => (unit >= 0xe000 ? unit - 0x800 : unit + 0x2000)

/**
 * Code-point order, which is the order of UTF-8 bytes MongoDB and SQLite
 * compare by. JavaScript's `<` compares UTF-16 units, which puts a character
 * above U+FFFF (a surrogate pair) before U+E000–U+FFFF. The two orders can
 * differ only where both strings hold a unit from U+D800 up, so any other
 * pair takes the native comparison (the pattern fails at once on Latin-1
 * strings).
 */
export const compareText = (a: string, b: string): number => {
  if (a === b) return 0
  if (!beyondSurrogates.test(a)) return a < b ? -1 : 1
  const shorter = Math.min(a.length, b.length)
  for (let index = 0; index < shorter; index++) {
    const x = a.charCodeAt(index)
    const y = b.charCodeAt(index)
    if (x === y) continue
    return x >= 0xd800 && y >= 0xd800 ? surrogatesLast(x) - surrogatesLast(y) : x - y
  }
  return a.length - b.length
}

const loneSurrogate = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

/**
 * The first string (value or key) in a parsed JSON value holding half a
 * surrogate pair, which no UTF-8 store can keep (MongoDB's driver would
 * write U+FFFD in its place); null when every string is well formed.
 */
export const illFormedText = (value: unknown): string | null => {
  const pending: unknown[] = [value]
  while (pending.length > 0) {
    const next = pending.pop()
    if (typeof next === 'string') {
      if (loneSurrogate.test(next)) return next
    } else if (typeof next === 'object' && next !== null) {
      for (const [key, child] of Object.entries(next)) {
        if (loneSurrogate.test(key)) return key
        pending.push(child)
      }
    }
  }
  return null
}

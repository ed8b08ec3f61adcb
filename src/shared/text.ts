/** Characters as JSON Schema's `maxLength` counts them (code points): an emoji is one, not the two UTF-16 units of `String.length`. */
export const characterCount = (text: string): number => {
  let count = 0
  for (const _character of text) count += 1
  return count
}

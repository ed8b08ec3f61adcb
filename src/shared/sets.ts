/** Whether two lists without repeats hold the same values, in any order. */
export const sameMembers = <T>(a: readonly T[], b: readonly T[]): boolean => {
  const held = new Set(b)
  return a.length === b.length && a.every((value) => held.has(value))
}

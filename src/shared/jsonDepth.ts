/**
 * Deeper than any JSON this service takes needs. V8's JSON.parse takes any
 * depth, but JSON.stringify (every append, every log line) and the webhook
 * renderer recurse, and a few thousand levels overflow their stack.
 */
export const MAX_JSON_DEPTH = 64

/** Whether a parsed JSON value has objects or arrays nested more than `limit` levels deep (walked without recursion). */
export const nestsDeeperThan = (value: unknown, limit: number): boolean => {
  const pending: Array<{ node: object; depth: number }> = typeof value === 'object' && value !== null ? [{ node: value, depth: 1 }] : []
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (next.depth > limit) return true
    for (const child of Object.values(next.node)) {
      if (typeof child === 'object' && child !== null) pending.push({ node: child, depth: next.depth + 1 })
    }
  }
  return false
}

import { LRUCache } from 'lru-cache'

/** The validity window of a verified token, in epoch milliseconds, as fast-jwt checks it (`nbf ≤ now ≤ exp`). */
export interface TokenWindow {
  notBefore: number
  expiresAt: number
}

/** The window of a token's claims; null when it has no `exp` (such a token is not kept). */
export const windowOf = (claims: { exp?: unknown; nbf?: unknown }): TokenWindow | null =>
  typeof claims.exp !== 'number'
    ? null
    : { notBefore: typeof claims.nbf === 'number' ? claims.nbf * 1000 : -Infinity, expiresAt: claims.exp * 1000 }

/**
 * What was derived from access tokens whose signature, issuer and type were
 * already verified, by the raw token. Clients send the same token for its
 * whole lifetime, so a repeated token skips the signature check and the
 * claim parsing. An entry answers only inside its token's window (the caller
 * passes `now`, so an injected clock is honoured); outside it, the entry is
 * dropped and the token goes through full verification again, which refuses
 * it with the usual error. Bounded: the least recently used tokens leave first.
 */
export class VerifiedTokens<T extends object> {
  private readonly entries: LRUCache<string, { value: T; window: TokenWindow }>

  constructor(max: number) {
    this.entries = new LRUCache({ max })
  }

  get(token: string, now: number): T | undefined {
    const entry = this.entries.get(token)
    if (entry === undefined) return undefined
    if (now > entry.window.expiresAt || now < entry.window.notBefore) {
      this.entries.delete(token)
      return undefined
    }
    return entry.value
  }

  set(token: string, value: T, window: TokenWindow): void {
    this.entries.set(token, { value, window })
  }

  get size(): number {
    return this.entries.size
  }
}

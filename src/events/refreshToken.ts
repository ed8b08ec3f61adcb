import type { Event } from './types.js'

/** A refresh-token family starts with a password or MFA grant; each refresh rotates its token. */
export type RefreshTokenIssued = Event<'RefreshTokenIssued', {
  familyId: string
  clientId: string
  userId: string
  scope: string
  /** SHA-256 of the token; the token itself is never stored. */
  tokenHash: string
  expiresAt: string
  issuedAt: string
  /** The user's password version at the sign-in; absent (0) in families issued before passwords could change. */
  passwordVersion?: number
}>
export type RefreshTokenRotated = Event<'RefreshTokenRotated', {
  familyId: string
  previousTokenHash: string
  tokenHash: string
  expiresAt: string
  rotatedAt: string
}>
/** Revoked because a rotated token was presented again (RFC 6819 5.2.2.3), or explicitly. */
export type RefreshTokenFamilyRevoked = Event<'RefreshTokenFamilyRevoked', {
  familyId: string
  reason: 'reuse_detected' | 'revoked'
  revokedAt: string
}>

export type RefreshTokenEvent = RefreshTokenIssued | RefreshTokenRotated | RefreshTokenFamilyRevoked

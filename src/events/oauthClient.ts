import type { Event } from './types.js'

export type OAuthClientRegistered = Event<'OAuthClientRegistered', {
  clientId: string
  name: string
  /** scrypt hash; the secret is shown once at creation and never stored. */
  secretHash: string
  scopes: string[]
  organizationId: string
  createdAt: string
}>
export type OAuthClientSecretRotated = Event<'OAuthClientSecretRotated', {
  clientId: string
  secretHash: string
  /**
   * Rotations so far, this one included (1 for the first): the client's tokens issued under an earlier version end. Absent in
   * events recorded before versions: the count of rotations up to it.
   */
  secretVersion?: number
}>
export type OAuthClientRevoked = Event<'OAuthClientRevoked', { clientId: string }>

export type OAuthClientEvent = OAuthClientRegistered | OAuthClientSecretRotated | OAuthClientRevoked

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
export type OAuthClientSecretRotated = Event<'OAuthClientSecretRotated', { clientId: string; secretHash: string }>
export type OAuthClientRevoked = Event<'OAuthClientRevoked', { clientId: string }>

export type OAuthClientEvent = OAuthClientRegistered | OAuthClientSecretRotated | OAuthClientRevoked

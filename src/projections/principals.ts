import { usernameKey } from '../events/user.js'
import { applyAt, defineProjection, updateAt } from './projection.js'
import { readsOf, type ReadStore } from './readStore.js'

export interface UserDoc {
  _id: string
  _position?: number
  username: string
  usernameKey: string
  passwordHash: string
  /**
   * Changes of the password so far: a token carries the version it was issued under (claim `pwv`). Absent (0) in a
   * document a persistent read store kept from before passwords could change.
   */
  passwordVersion?: number
  organizationId: string
  totpEnrolled: boolean
  encryptedTotpSecret: string | null
  active: boolean
  createdAt: string
  /** Until when sign-ins are refused after too many failures; null (or absent, in older documents) when not locked. */
  signInLockedUntil?: string | null
}

export const passwordVersionOf = (user: UserDoc): number => user.passwordVersion ?? 0

export interface ClientDoc {
  _id: string
  _position?: number
  name: string
  secretHash: string
  scopes: string[]
  organizationId: string
  revoked: boolean
  createdAt: string
}

/** A sign-in (refresh-token family) revoked: the access tokens issued to it stop working too. */
export interface RevokedSignInDoc {
  _id: string
  _position?: number
  revokedAt: string
}

const users = { name: 'users', indexes: [{ usernameKey: 1 }, { organizationId: 1 }] } as const
const clients = { name: 'oauth_clients', indexes: [{ organizationId: 1 }] } as const
const revokedSignIns = { name: 'revoked_sign_ins' } as const

export const principalsProjection = defineProjection({
  name: 'principals',
  handles: ['UserRegistered', 'UserTotpEnrolled', 'UserPasswordChanged', 'UserDeactivated', 'UserSignInLocked', 'UserSignInUnlocked',
    'OAuthClientRegistered', 'OAuthClientSecretRotated', 'OAuthClientRevoked', 'RefreshTokenFamilyRevoked'],
  collections: [users, clients, revokedSignIns],
  async project(store, event, position) {
    const userDocs = store.collection<UserDoc>(users)
    const clientDocs = store.collection<ClientDoc>(clients)
    switch (event.type) {
      case 'UserRegistered':
        return applyAt(userDocs, event.data.userId, position, () => ({
          _id: event.data.userId, username: event.data.username, usernameKey: usernameKey(event.data.username),
          passwordHash: event.data.passwordHash, passwordVersion: 0, organizationId: event.data.organizationId, totpEnrolled: false,
          encryptedTotpSecret: null, active: true, createdAt: event.data.createdAt, signInLockedUntil: null,
        }))
      case 'UserTotpEnrolled':
        return updateAt(userDocs, event.data.userId, position, (doc) => ({ ...doc, totpEnrolled: true, encryptedTotpSecret: event.data.encryptedSecret }))
      case 'UserPasswordChanged':
        return updateAt(userDocs, event.data.userId, position, (doc) => ({ ...doc, passwordHash: event.data.passwordHash, passwordVersion: event.data.passwordVersion }))
      case 'UserDeactivated':
        return updateAt(userDocs, event.data.userId, position, (doc) => ({ ...doc, active: false }))
      case 'UserSignInLocked':
        return updateAt(userDocs, event.data.userId, position, (doc) => ({ ...doc, signInLockedUntil: event.data.lockedUntil }))
      case 'UserSignInUnlocked':
        return updateAt(userDocs, event.data.userId, position, (doc) => ({ ...doc, signInLockedUntil: null }))
      case 'OAuthClientRegistered':
        return applyAt(clientDocs, event.data.clientId, position, () => ({
          _id: event.data.clientId, name: event.data.name, secretHash: event.data.secretHash, scopes: event.data.scopes,
          organizationId: event.data.organizationId, revoked: false, createdAt: event.data.createdAt,
        }))
      case 'OAuthClientSecretRotated':
        return updateAt(clientDocs, event.data.clientId, position, (doc) => ({ ...doc, secretHash: event.data.secretHash }))
      case 'OAuthClientRevoked':
        return updateAt(clientDocs, event.data.clientId, position, (doc) => ({ ...doc, revoked: true }))
      case 'RefreshTokenFamilyRevoked':
        return applyAt(store.collection<RevokedSignInDoc>(revokedSignIns), event.data.familyId, position, () => ({
          _id: event.data.familyId, revokedAt: event.data.revokedAt,
        }))
      default: {
        const _never: never = event
        return _never
      }
    }
  },
})

export const principalQueries = (store: ReadStore) => {
  const userDocs = store.collection<UserDoc>(users)
  const clientDocs = store.collection<ClientDoc>(clients)
  // Looked up by every authenticated request: answered without a promise where the store can.
  const userReads = readsOf(userDocs)
  const clientReads = readsOf(clientDocs)
  const revokedSignInReads = readsOf(store.collection<RevokedSignInDoc>(revokedSignIns))
  return {
    user: (id: string) => userReads.get(id),
    userByUsername: (username: string) => userDocs.findOne({ usernameKey: usernameKey(username) }),
    client: (clientId: string) => clientReads.get(clientId),
    /** The revocation of a sign-in (the `sid` of its access tokens), or null. */
    revokedSignIn: (signInId: string) => revokedSignInReads.get(signInId),
    /** A page of the organization's users, newest first. */
    userPage: async (organizationId: string, page: { offset: number; limit: number }) => ({
      items: await userDocs.find({ organizationId }, { sort: { createdAt: -1, _id: -1 }, skip: page.offset, limit: page.limit }),
      total: await userDocs.count({ organizationId }),
    }),
    /** A page of the organization's OAuth clients, newest first. */
    clientPage: async (organizationId: string, page: { offset: number; limit: number }) => ({
      items: await clientDocs.find({ organizationId }, { sort: { createdAt: -1, _id: -1 }, skip: page.offset, limit: page.limit }),
      total: await clientDocs.count({ organizationId }),
    }),
  }
}

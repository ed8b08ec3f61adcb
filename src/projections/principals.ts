import { usernameKey } from '../events/user.js'
import { MAX_ACCESS_TOKEN_TTL_SECONDS } from '../shared/config.js'
import { applyAt, defineProjection, updateAt } from './projection.js'
import { readsOf, type ReadCollection, type ReadStore } from './readStore.js'

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
  /**
   * Rotations of the secret so far: a client's own token carries the version it was issued under (claim `csv`). Absent (0)
   * in a document a persistent read store kept from before versions.
   */
  secretVersion?: number
}

export const secretVersionOf = (client: ClientDoc): number => client.secretVersion ?? 0

/** A sign-in (refresh-token family) revoked: the access tokens issued to it stop working too. */
export interface RevokedSignInDoc {
  _id: string
  _position?: number
  revokedAt: string
}

// Pages of an organization's users and clients are read newest first, then by id (userPage, clientPage): in that index's order.
const users = { name: 'users', indexes: [{ usernameKey: 1 }, { organizationId: 1, createdAt: -1, _id: -1 }] } as const
const clients = { name: 'oauth_clients', indexes: [{ organizationId: 1, createdAt: -1, _id: -1 }] } as const
const revokedSignIns = { name: 'revoked_sign_ins', indexes: [{ revokedAt: 1 }] } as const
/** One document: the hour (`YYYY-MM-DDTHH`, of an event's `revokedAt`) when `revoked_sign_ins` was last pruned, and of what. */
const revokedSignInsPruning = { name: 'revoked_sign_ins_pruning' } as const

interface PruningDoc {
  _id: string
  _position?: number
  hour: string
  /** Revocations before this time were forgotten. */
  before: string
}

/**
 * How long a revoked sign-in is remembered: the access tokens issued to it are refused by it until they expire, at most
 * the longest ACCESS_TOKEN_TTL after the revocation. Measured from the event's own time, so a replay keeps the same entries.
 */
export const REVOKED_SIGN_IN_RETENTION_MS = MAX_ACCESS_TOKEN_TTL_SECONDS * 1000

/**
 * Forgets the revocations older than the retention before `revokedAt`, at the first revocation of each hour: the
 * embedded store scans its entries for a range, so pruning at every revocation would cost the square of their number.
 * An entry is thus kept up to an hour longer than needed. Answers whether this revocation is to be remembered: not
 * when it is older than what was pruned already (an event delivered again).
 */
const pruneRevokedSignIns = async (
  revoked: ReadCollection<RevokedSignInDoc>, pruning: ReadCollection<PruningDoc>, revokedAtText: string, position: number,
): Promise<boolean> => {
  const revokedAt = Date.parse(revokedAtText)
  if (!Number.isFinite(revokedAt)) return true
  const hour = new Date(revokedAt).toISOString().slice(0, 13)
  const last = await pruning.get(revokedSignIns.name)
  if (last !== null && last.hour >= hour) return revokedAtText >= last.before
  const before = new Date(revokedAt - REVOKED_SIGN_IN_RETENTION_MS).toISOString()
  await revoked.deleteMany({ revokedAt: { $lt: before } })
  await applyAt(pruning, revokedSignIns.name, position, () => ({ _id: revokedSignIns.name, hour, before }))
  return true
}

export const principalsProjection = defineProjection({
  name: 'principals',
  handles: ['UserRegistered', 'UserTotpEnrolled', 'UserPasswordChanged', 'UserDeactivated', 'UserReactivated', 'UserSignInLocked', 'UserSignInUnlocked',
    'OAuthClientRegistered', 'OAuthClientSecretRotated', 'OAuthClientRevoked', 'RefreshTokenFamilyRevoked'],
  collections: [users, clients, revokedSignIns, revokedSignInsPruning],
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
      case 'UserReactivated':
        return updateAt(userDocs, event.data.userId, position, (doc) => ({ ...doc, active: true }))
      case 'UserSignInLocked':
        return updateAt(userDocs, event.data.userId, position, (doc) => ({ ...doc, signInLockedUntil: event.data.lockedUntil }))
      case 'UserSignInUnlocked':
        return updateAt(userDocs, event.data.userId, position, (doc) => ({ ...doc, signInLockedUntil: null }))
      case 'OAuthClientRegistered':
        return applyAt(clientDocs, event.data.clientId, position, () => ({
          _id: event.data.clientId, name: event.data.name, secretHash: event.data.secretHash, scopes: event.data.scopes,
          organizationId: event.data.organizationId, revoked: false, createdAt: event.data.createdAt, secretVersion: 0,
        }))
      case 'OAuthClientSecretRotated':
        return updateAt(clientDocs, event.data.clientId, position, (doc) => ({
          ...doc, secretHash: event.data.secretHash, secretVersion: event.data.secretVersion ?? secretVersionOf(doc) + 1,
        }))
      case 'OAuthClientRevoked':
        return updateAt(clientDocs, event.data.clientId, position, (doc) => ({ ...doc, revoked: true }))
      case 'RefreshTokenFamilyRevoked': {
        const revoked = store.collection<RevokedSignInDoc>(revokedSignIns)
        const remembered = await pruneRevokedSignIns(revoked, store.collection<PruningDoc>(revokedSignInsPruning), event.data.revokedAt, position)
        if (!remembered) return
        return applyAt(revoked, event.data.familyId, position, () => ({ _id: event.data.familyId, revokedAt: event.data.revokedAt }))
      }
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

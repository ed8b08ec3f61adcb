import type { RefreshTokenEvent } from '../events/refreshToken.js'
import { AppError } from '../shared/errors.js'
import type { Aggregate } from './decider.js'

export type RefreshTokenCommand =
  | {
    type: 'IssueRefreshToken'; familyId: string; clientId: string; userId: string; passwordVersion: number; scope: string; tokenHash: string
    expiresAt: string; now: string
  }
  /** `maxAgeSeconds`: the longest life of the sign-in from its first token, however often it is rotated. */
  | { type: 'RotateRefreshToken'; clientId: string; presentedHash: string; newHash: string; expiresAt: string; maxAgeSeconds: number; now: string }
  | { type: 'RevokeRefreshTokenFamily'; now: string }

export interface RefreshTokenState {
  status: 'none' | 'active' | 'revoked'
  familyId: string
  clientId: string
  userId: string
  /** The user's password version at the sign-in: a later change ends the family. */
  passwordVersion: number
  scope: string
  currentHash: string
  expiresAt: string
  /** When the sign-in's first token was issued. */
  issuedAt: string
  /** Hashes of rotated tokens: presenting one again is a reuse. */
  retiredHashes: ReadonlySet<string>
}

const invalid = (message: string) => new AppError('INVALID_REFRESH_TOKEN', message)

export const refreshTokenFamilyAggregate: Aggregate<RefreshTokenCommand, RefreshTokenEvent, RefreshTokenState> = {
  streamType: 'refreshTokenFamily',
  eventTypes: ['RefreshTokenIssued', 'RefreshTokenRotated', 'RefreshTokenFamilyRevoked'],
  initialState: () => ({
    status: 'none', familyId: '', clientId: '', userId: '', passwordVersion: 0, scope: '', currentHash: '', expiresAt: '', issuedAt: '', retiredHashes: new Set(),
  }),
  decide(command, state) {
    switch (command.type) {
      case 'IssueRefreshToken':
        if (state.status !== 'none') throw new AppError('ALREADY_EXISTS', 'refresh token family exists')
        return [{ type: 'RefreshTokenIssued', data: {
          familyId: command.familyId, clientId: command.clientId, userId: command.userId, scope: command.scope,
          tokenHash: command.tokenHash, expiresAt: command.expiresAt, issuedAt: command.now, passwordVersion: command.passwordVersion,
        } }]
      case 'RotateRefreshToken':
        if (state.status === 'none') throw invalid('unknown refresh token')
        if (state.status === 'revoked') throw invalid('refresh token revoked')
        if (state.clientId !== command.clientId) throw invalid('refresh token was issued to another client')
        if (state.retiredHashes.has(command.presentedHash)) {
          // A rotated token came back: someone holds a copy. Revoke the whole family; the caller answers invalid_grant.
          return [{ type: 'RefreshTokenFamilyRevoked', data: { familyId: state.familyId, reason: 'reuse_detected', revokedAt: command.now } }]
        }
        if (state.currentHash !== command.presentedHash) throw invalid('unknown refresh token')
        const endOfSignIn = new Date(Date.parse(state.issuedAt) + command.maxAgeSeconds * 1000).toISOString()
        if (command.now >= endOfSignIn) throw invalid('the sign-in reached its longest life; sign in again')
        if (command.now >= state.expiresAt) throw invalid('refresh token expired')
        return [{ type: 'RefreshTokenRotated', data: {
          familyId: state.familyId, previousTokenHash: state.currentHash, tokenHash: command.newHash,
          expiresAt: command.expiresAt < endOfSignIn ? command.expiresAt : endOfSignIn, rotatedAt: command.now,
        } }]
      case 'RevokeRefreshTokenFamily':
        if (state.status !== 'active') return []
        return [{ type: 'RefreshTokenFamilyRevoked', data: { familyId: state.familyId, reason: 'revoked', revokedAt: command.now } }]
      default: {
        const _never: never = command
        return _never
      }
    }
  },
  evolve(state, event) {
    switch (event.type) {
      case 'RefreshTokenIssued':
        return { ...state, status: 'active', familyId: event.data.familyId, clientId: event.data.clientId, userId: event.data.userId,
          passwordVersion: event.data.passwordVersion ?? 0, scope: event.data.scope, currentHash: event.data.tokenHash, expiresAt: event.data.expiresAt,
          issuedAt: event.data.issuedAt }
      case 'RefreshTokenRotated':
        return { ...state, currentHash: event.data.tokenHash, expiresAt: event.data.expiresAt,
          retiredHashes: new Set([...state.retiredHashes, event.data.previousTokenHash]) }
      case 'RefreshTokenFamilyRevoked':
        return { ...state, status: 'revoked' }
      default: {
        const _never: never = event
        return _never
      }
    }
  },
}

import type { OAuthClientEvent } from '../events/oauthClient.js'
import { AppError } from '../shared/errors.js'
import type { Aggregate } from './decider.js'

export type OAuthClientCommand =
  | { type: 'RegisterClient'; clientId: string; name: string; secretHash: string; scopes: string[]; organizationId: string; now: string }
  | { type: 'RotateClientSecret'; secretHash: string }
  | { type: 'RevokeClient' }

export interface OAuthClientState {
  exists: boolean
  revoked: boolean
  clientId: string
  name: string
  secretHash: string
  scopes: string[]
  organizationId: string
  /** Rotations of the secret so far. */
  secretVersion: number
}

export const oauthClientAggregate: Aggregate<OAuthClientCommand, OAuthClientEvent, OAuthClientState> = {
  streamType: 'oauthClient',
  eventTypes: ['OAuthClientRegistered', 'OAuthClientSecretRotated', 'OAuthClientRevoked'],
  initialState: () => ({ exists: false, revoked: false, clientId: '', name: '', secretHash: '', scopes: [], organizationId: '', secretVersion: 0 }),
  decide(command, state) {
    switch (command.type) {
      case 'RegisterClient':
        if (state.exists) throw new AppError('ALREADY_EXISTS', `client ${command.clientId} already exists`)
        return [{ type: 'OAuthClientRegistered', data: {
          clientId: command.clientId, name: command.name, secretHash: command.secretHash, scopes: command.scopes,
          organizationId: command.organizationId, createdAt: command.now,
        } }]
      case 'RotateClientSecret':
        if (!state.exists) throw new AppError('NOT_FOUND', 'client not found', { resource: 'client' })
        return [{ type: 'OAuthClientSecretRotated', data: { clientId: state.clientId, secretHash: command.secretHash, secretVersion: state.secretVersion + 1 } }]
      case 'RevokeClient':
        if (!state.exists) throw new AppError('NOT_FOUND', 'client not found', { resource: 'client' })
        return state.revoked ? [] : [{ type: 'OAuthClientRevoked', data: { clientId: state.clientId } }]
      default: {
        const _never: never = command
        return _never
      }
    }
  },
  evolve(state, event) {
    switch (event.type) {
      case 'OAuthClientRegistered':
        return { exists: true, revoked: false, clientId: event.data.clientId, name: event.data.name, secretHash: event.data.secretHash,
          scopes: event.data.scopes, organizationId: event.data.organizationId, secretVersion: 0 }
      case 'OAuthClientSecretRotated':
        return { ...state, secretHash: event.data.secretHash, secretVersion: event.data.secretVersion ?? state.secretVersion + 1 }
      case 'OAuthClientRevoked':
        return { ...state, revoked: true }
      default: {
        const _never: never = event
        return _never
      }
    }
  },
}

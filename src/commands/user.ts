import type { SignInFailureReason, UserEvent, UsernameEvent } from '../events/user.js'
import { AppError } from '../shared/errors.js'
import type { Aggregate } from './decider.js'

/** How many wrong passwords or codes in a row lock a user's sign-in, and for how long. */
export interface SignInPolicy {
  maxFailures: number
  lockoutSeconds: number
}

export type UserCommand =
  /** With a TOTP secret, the enrolment is in the same append: no user exists, even for a moment of a crash, without the MFA asked for. */
  | { type: 'RegisterUser'; userId: string; username: string; passwordHash: string; organizationId: string; encryptedTotpSecret: string | null; now: string }
  | { type: 'EnrollTotp'; encryptedSecret: string }
  | { type: 'AcceptOtp'; timeStep: number; now: string }
  /** A verified password: refused while locked; `completesSignIn` (no code to follow) starts the failure count again. */
  | { type: 'AcceptPassword'; completesSignIn: boolean; now: string }
  | { type: 'RecordSignInFailure'; reason: SignInFailureReason; policy: SignInPolicy; now: string }
  /** `expectedPasswordVersion` is the version whose password the caller verified: a change in between refuses this one. */
  | { type: 'ChangePassword'; passwordHash: string; expectedPasswordVersion: number; now: string }
  /** An administrator sets a new password without the current one: it ends every token, and lifts a lock. */
  | { type: 'ResetPassword'; passwordHash: string; now: string }
  | { type: 'UnlockSignIn'; now: string }
  | { type: 'DeactivateUser' }
  /** Lets a deactivated user back in with a new password: its tokens from before stay refused, and a lock is lifted. */
  | { type: 'ReactivateUser'; passwordHash: string; now: string }

export interface UserState {
  exists: boolean
  active: boolean
  userId: string
  username: string
  passwordHash: string
  passwordVersion: number
  organizationId: string
  encryptedTotpSecret: string | null
  lastOtpTimeStep: number
  /** Wrong passwords or codes since the last complete sign-in, password change or lock. */
  signInFailures: number
  signInLockedUntil: string | null
}

const requireUser = (state: UserState): void => {
  if (!state.exists) throw new AppError('NOT_FOUND', 'user not found', { resource: 'user' })
}

/** The refusal a sign-in lock still in force at `now` gives (with Retry-After), or null when there is none. */
export const signInLockRefusal = (lockedUntil: string | null | undefined, now: string): AppError | null => {
  if (lockedUntil === null || lockedUntil === undefined) return null
  const left = Date.parse(lockedUntil) - Date.parse(now)
  if (!(left > 0)) return null
  const retryAfter = Math.ceil(left / 1000)
  return new AppError('SIGN_IN_LOCKED', `too many wrong passwords or codes in a row; sign-in is locked until ${lockedUntil}`, {
    lockedUntil, retryAfter,
  }, { 'retry-after': String(retryAfter) })
}

const refuseWhileLocked = (state: UserState, now: string): void => {
  const refusal = signInLockRefusal(state.signInLockedUntil, now)
  if (refusal !== null) throw refusal
}

const unlocked = (state: UserState, now: string): UserEvent[] =>
  signInLockRefusal(state.signInLockedUntil, now) !== null || state.signInFailures > 0
    ? [{ type: 'UserSignInUnlocked', data: { userId: state.userId, unlockedAt: now } }]
    : []

/** A password set by an administrator: a new version, so every earlier token ends, and a lock lifted. */
const passwordSet = (state: UserState, passwordHash: string, now: string): UserEvent[] => [
  ...unlocked(state, now),
  { type: 'UserPasswordChanged', data: { userId: state.userId, passwordHash, passwordVersion: state.passwordVersion + 1 } },
]

const clearedFailures = (state: UserState, now: string): UserEvent[] =>
  state.signInFailures > 0 ? [{ type: 'UserSignInFailuresCleared', data: { userId: state.userId, clearedAt: now } }] : []

export const userAggregate: Aggregate<UserCommand, UserEvent, UserState> = {
  streamType: 'user',
  eventTypes: ['UserRegistered', 'UserTotpEnrolled', 'UserOtpAccepted', 'UserPasswordChanged', 'UserDeactivated', 'UserReactivated',
    'UserSignInFailed', 'UserSignInLocked', 'UserSignInUnlocked', 'UserSignInFailuresCleared'],
  initialState: () => ({
    exists: false, active: false, userId: '', username: '', passwordHash: '', passwordVersion: 0, organizationId: '', encryptedTotpSecret: null,
    lastOtpTimeStep: -1, signInFailures: 0, signInLockedUntil: null,
  }),
  decide(command, state) {
    switch (command.type) {
      case 'RegisterUser':
        if (state.exists) throw new AppError('ALREADY_EXISTS', 'user already exists')
        return [{ type: 'UserRegistered', data: {
          userId: command.userId, username: command.username, passwordHash: command.passwordHash,
          organizationId: command.organizationId, createdAt: command.now,
        } }, ...(command.encryptedTotpSecret === null ? [] : [
          { type: 'UserTotpEnrolled' as const, data: { userId: command.userId, encryptedSecret: command.encryptedTotpSecret } },
        ])]
      case 'EnrollTotp':
        requireUser(state)
        return [{ type: 'UserTotpEnrolled', data: { userId: state.userId, encryptedSecret: command.encryptedSecret } }]
      case 'AcceptOtp':
        requireUser(state)
        refuseWhileLocked(state, command.now)
        if (command.timeStep <= state.lastOtpTimeStep) throw new AppError('OTP_ALREADY_USED', 'this one-time code was already used')
        return [{ type: 'UserOtpAccepted', data: { userId: state.userId, timeStep: command.timeStep } }, ...clearedFailures(state, command.now)]
      case 'AcceptPassword':
        requireUser(state)
        refuseWhileLocked(state, command.now)
        return command.completesSignIn ? clearedFailures(state, command.now) : []
      case 'RecordSignInFailure': {
        requireUser(state)
        refuseWhileLocked(state, command.now)
        const failures = state.signInFailures + 1
        const failed: UserEvent = { type: 'UserSignInFailed', data: { userId: state.userId, reason: command.reason, failedAt: command.now, failures } }
        if (failures < command.policy.maxFailures) return [failed]
        const lockedUntil = new Date(Date.parse(command.now) + command.policy.lockoutSeconds * 1000).toISOString()
        return [failed, { type: 'UserSignInLocked', data: { userId: state.userId, lockedAt: command.now, lockedUntil } }]
      }
      case 'ChangePassword':
        requireUser(state)
        if (!state.active) throw new AppError('NOT_ACTIVE', 'the user is deactivated')
        refuseWhileLocked(state, command.now)
        if (state.passwordVersion !== command.expectedPasswordVersion) {
          throw new AppError('CONFLICT', 'the password was changed meanwhile; verify the current one again')
        }
        return [{ type: 'UserPasswordChanged', data: { userId: state.userId, passwordHash: command.passwordHash, passwordVersion: state.passwordVersion + 1 } }]
      case 'ResetPassword':
        requireUser(state)
        if (!state.active) throw new AppError('NOT_ACTIVE', 'the user is deactivated')
        return passwordSet(state, command.passwordHash, command.now)
      case 'UnlockSignIn':
        requireUser(state)
        return unlocked(state, command.now)
      case 'DeactivateUser':
        requireUser(state)
        return state.active ? [{ type: 'UserDeactivated', data: { userId: state.userId } }] : []
      case 'ReactivateUser':
        requireUser(state)
        if (state.active) throw new AppError('CONFLICT', 'the user is active')
        // The new password first: read models apply one event at a time, and an active user with the old version would
        // admit the tokens issued before the deactivation for that moment.
        return [
          ...passwordSet(state, command.passwordHash, command.now),
          { type: 'UserReactivated', data: { userId: state.userId, reactivatedAt: command.now } },
        ]
      default: {
        const _never: never = command
        return _never
      }
    }
  },
  evolve(state, event) {
    switch (event.type) {
      case 'UserRegistered':
        return { ...state, exists: true, active: true, userId: event.data.userId, username: event.data.username,
          passwordHash: event.data.passwordHash, organizationId: event.data.organizationId }
      case 'UserTotpEnrolled':
        return { ...state, encryptedTotpSecret: event.data.encryptedSecret }
      case 'UserOtpAccepted':
        return { ...state, lastOtpTimeStep: event.data.timeStep }
      case 'UserPasswordChanged':
        return { ...state, passwordHash: event.data.passwordHash, passwordVersion: event.data.passwordVersion, signInFailures: 0 }
      case 'UserDeactivated':
        return { ...state, active: false }
      case 'UserReactivated':
        return { ...state, active: true }
      case 'UserSignInFailed':
        return { ...state, signInFailures: event.data.failures }
      case 'UserSignInLocked':
        return { ...state, signInFailures: 0, signInLockedUntil: event.data.lockedUntil }
      case 'UserSignInUnlocked':
        return { ...state, signInFailures: 0, signInLockedUntil: null }
      case 'UserSignInFailuresCleared':
        return { ...state, signInFailures: 0 }
      default: {
        const _never: never = event
        return _never
      }
    }
  },
}

export type UsernameCommand =
  | { type: 'ClaimUsername'; username: string; userId: string }
  /** Gives the name back only if `userId` still holds it. */
  | { type: 'ReleaseUsername'; username: string; userId: string }
export interface UsernameState { claimedBy: string | null }

export const usernameAggregate: Aggregate<UsernameCommand, UsernameEvent, UsernameState> = {
  streamType: 'username',
  eventTypes: ['UsernameClaimed', 'UsernameReleased'],
  initialState: () => ({ claimedBy: null }),
  decide(command, state) {
    switch (command.type) {
      case 'ClaimUsername':
        if (state.claimedBy === command.userId) return []
        if (state.claimedBy !== null) throw new AppError('USERNAME_TAKEN', `username ${command.username} is taken`)
        return [{ type: 'UsernameClaimed', data: { username: command.username, userId: command.userId } }]
      case 'ReleaseUsername':
        return state.claimedBy === command.userId ? [{ type: 'UsernameReleased', data: { username: command.username, userId: command.userId } }] : []
      default: {
        const _never: never = command
        return _never
      }
    }
  },
  evolve(_state, event) {
    switch (event.type) {
      case 'UsernameClaimed':
        return { claimedBy: event.data.userId }
      case 'UsernameReleased':
        return { claimedBy: null }
      default: {
        const _never: never = event
        return _never
      }
    }
  },
}

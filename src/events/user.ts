import { deterministicId } from '../shared/ids.js'
import type { Event } from './types.js'

/** Usernames are unique ignoring case and surrounding spaces: this is the form compared. */
export const usernameKey = (username: string): string => username.trim().toLowerCase()

/** The stream whose claim makes a username unique: `username-<uuidv5(usernameKey)>`. */
export const usernameStreamId = (username: string): string => deterministicId('username', usernameKey(username))

export type UserRegistered = Event<'UserRegistered', {
  userId: string
  username: string
  /** scrypt hash; the password itself is never stored. */
  passwordHash: string
  organizationId: string
  createdAt: string
}>
/** The TOTP secret, encrypted with the service's data key (AES-256-GCM), never in clear. */
export type UserTotpEnrolled = Event<'UserTotpEnrolled', { userId: string; encryptedSecret: string }>
/** Records the time step of an accepted one-time code, so the same code cannot be used twice. */
export type UserOtpAccepted = Event<'UserOtpAccepted', { userId: string; timeStep: number }>
/** `passwordVersion` counts the changes (1 for the first): tokens issued under an earlier one stop working. */
export type UserPasswordChanged = Event<'UserPasswordChanged', { userId: string; passwordHash: string; passwordVersion: number }>
export type UserDeactivated = Event<'UserDeactivated', { userId: string }>
/** An administrator let a deactivated user back in; the same append gives it a new password (UserPasswordChanged). */
export type UserReactivated = Event<'UserReactivated', { userId: string; reactivatedAt: string }>
/**
 * A wrong password or one-time code given for this user (at sign-in, or as the current password of a change).
 * `failures` counts them since the last successful sign-in or lock.
 */
export type UserSignInFailed = Event<'UserSignInFailed', { userId: string; reason: SignInFailureReason; failedAt: string; failures: number }>
/** Too many failures in a row: sign-ins and password changes are refused until `lockedUntil`. */
export type UserSignInLocked = Event<'UserSignInLocked', { userId: string; lockedAt: string; lockedUntil: string }>
/** An administrator lifted the lock (or reset the password): sign-ins are checked again, the count from zero. */
export type UserSignInUnlocked = Event<'UserSignInUnlocked', { userId: string; unlockedAt: string }>
/** A complete sign-in (password, and the code where enrolled) after failures: the count starts again. */
export type UserSignInFailuresCleared = Event<'UserSignInFailuresCleared', { userId: string; clearedAt: string }>

export type SignInFailureReason = 'password' | 'otp'

export type UserEvent =
  | UserRegistered | UserTotpEnrolled | UserOtpAccepted | UserPasswordChanged | UserDeactivated | UserReactivated
  | UserSignInFailed | UserSignInLocked | UserSignInUnlocked | UserSignInFailuresCleared

/** Stream `username-<uuidv5(lower-case username)>`: the claim that makes usernames unique. */
export type UsernameClaimed = Event<'UsernameClaimed', { username: string; userId: string }>
/** A claim whose user was never registered (a creation cut off between the two), given back by the registration recovery. */
export type UsernameReleased = Event<'UsernameReleased', { username: string; userId: string }>
export type UsernameEvent = UsernameClaimed | UsernameReleased

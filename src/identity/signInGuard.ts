import type { CommandContext, CommandHandler } from '../commands/handler.js'
import { signInLockRefusal, userAggregate, type SignInPolicy, type UserState } from '../commands/user.js'
import type { SignInFailureReason } from '../events/user.js'
import type { Clock } from '../shared/clock.js'
import { KeyedLock } from '../shared/keyedLock.js'

export interface SignInGuardDeps {
  commands: CommandHandler
  clock: Clock
  policy: SignInPolicy
}

/** One check of a user's secret: `verify` gives a value for a right secret and null for a wrong one. */
export interface SignInAttempt<V, T> {
  userId: string
  reason: SignInFailureReason
  context: CommandContext
  verify(state: UserState): V | null | Promise<V | null>
  /** What a wrong secret answers, once it is counted. */
  wrong(): Error
  /** Runs for a right secret, before the next attempt for this user is checked. */
  right(state: UserState, verified: V): Promise<T>
}

/**
 * Counts wrong passwords and one-time codes per user and refuses every attempt while a lock is in force
 * (SIGN_IN_LOCKED), whether its secret is right or not, so a lock tells a guesser nothing. A user's attempts
 * are checked one at a time against the user's stream: guesses sent all at once are counted exactly and
 * cannot outrun the lock they cause.
 */
export class SignInGuard {
  private readonly attempts = new KeyedLock()

  constructor(private readonly deps: SignInGuardDeps) {}

  attempt<V, T>(attempt: SignInAttempt<V, T>): Promise<T> {
    return this.attempts.run(attempt.userId, async () => {
      const { state } = await this.deps.commands.load(userAggregate, attempt.userId)
      const refusal = signInLockRefusal(state.signInLockedUntil, this.now())
      if (refusal !== null) throw refusal
      const verified = await attempt.verify(state)
      if (verified === null) {
        await this.deps.commands.execute(userAggregate, attempt.userId, {
          type: 'RecordSignInFailure', reason: attempt.reason, policy: this.deps.policy, now: this.now(),
        }, attempt.context)
        throw attempt.wrong()
      }
      return attempt.right(state, verified)
    })
  }

  private now(): string {
    return this.deps.clock.now().toISOString()
  }
}

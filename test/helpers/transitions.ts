import type { Test } from 'tap'
import { AppError } from '../../src/shared/errors.js'

/** Asserts that a decision is refused as INVALID_TRANSITION naming from, to and the allowed moves. */
export const refusedAsInvalidTransition = (t: Test, decide: () => unknown, expected: { from: string; to: string; allowed: readonly string[] }) => {
  try {
    decide()
    t.fail(`${expected.from} → ${expected.to} must be refused`)
  } catch (error) {
    t.ok(error instanceof AppError && error.code === 'INVALID_TRANSITION', `${expected.from} → ${expected.to} refused`)
    t.same(error instanceof AppError ? error.details : undefined, { ...expected, allowed: [...expected.allowed] })
  }
}

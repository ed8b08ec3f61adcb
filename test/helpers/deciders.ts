import type { Test } from 'tap'
import type { Aggregate } from '../../src/commands/decider.js'
import type { DomainEvent } from '../../src/events/catalogue.js'
import { AppError } from '../../src/shared/errors.js'

/** given events, when a command, then these events (or this refusal): the decider alone, no I/O. */
export const scenario = <C, E extends DomainEvent, S>(aggregate: Aggregate<C, E, S>) => ({
  given: (...history: E[]) => {
    const state = history.reduce((s, e) => aggregate.evolve(s, e), aggregate.initialState())
    return {
      state,
      when: (command: C) => ({
        then: (t: Test, expected: E[], message = 'decides the expected events') => t.same(aggregate.decide(command, state), expected, message),
        thenNothing: (t: Test, message?: string) => t.same(aggregate.decide(command, state), [], message ?? 'no events'),
        thenRefused: (t: Test, code: string, message?: string) => {
          try {
            aggregate.decide(command, state)
            t.fail(`expected refusal ${code}`)
          } catch (error) {
            t.ok(error instanceof AppError, 'refused with an AppError')
            t.equal(error instanceof AppError ? error.code : undefined, code, message ?? `refused with ${code}`)
          }
        },
      }),
    }
  },
})

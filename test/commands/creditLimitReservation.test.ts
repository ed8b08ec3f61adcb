import t from 'tap'
import { creditLimitAggregate } from '../../src/commands/creditLimit.js'
import { CommandHandler } from '../../src/commands/handler.js'
import { SqliteEventStore } from '../../src/events/sqlite.js'
import type { EventStore } from '../../src/events/store.js'
import { ManualClock } from '../../src/shared/clock.js'
import { AppError } from '../../src/shared/errors.js'

const context = { organizationId: 'o1', actorId: 'a', correlationId: 'c' }
const now = '2026-01-15T12:00:00.000Z'
const reserve = (creditId: string) => ({
  type: 'ReserveCreditLimit' as const, creditLimitId: 'l1', organizationId: 'o1', debtorId: 'p1', currency: 'COP', creditId, amount: '3000000.00',
  check: true, today: '2026-01-15', now,
})

/** An event store whose first `gated` appends wait until all of them have arrived: every one of them was decided before any was written. */
const gatedAppends = (store: EventStore, gated: number): EventStore => {
  const waiting: Array<() => void> = []
  let arrived = 0
  return {
    kind: store.kind,
    append: async (...args) => {
      if (arrived < gated) {
        arrived += 1
        await new Promise<void>((resolve) => {
          waiting.push(resolve)
          if (waiting.length === gated) for (const release of waiting) release()
        })
      }
      return store.append(...args)
    },
    readStream: (...args) => store.readStream(...args),
    readAll: (...args) => store.readAll(...args),
    subscribe: (after) => store.subscribe(after),
    subscribeToAll: (after) => store.subscribeToAll(after),
    headPosition: () => store.headPosition(),
    streamRevision: (streamId) => store.streamRevision(streamId),
    ping: () => store.ping(),
    close: () => store.close(),
  }
}

t.test('two reservations decided on the same state cannot both be written: the second is decided again and refused', async (t) => {
  const sqlite = new SqliteEventStore({ file: ':memory:' })
  t.teardown(() => sqlite.close())
  const clock = new ManualClock(now)
  await new CommandHandler({ eventStore: sqlite, clock, maxRetries: 3 }).execute(creditLimitAggregate, 'l1', {
    type: 'CreateCreditLimit', creditLimitId: 'l1', organizationId: 'o1', debtorId: 'p1', currency: 'COP', maxAmount: '5000000.00',
    expirationDate: '2026-12-31', today: '2026-01-15', now,
  }, context)
  // Two handlers, as two instances on one log: within one, commands on a stream take turns and never decide on the same state.
  const gated = gatedAppends(sqlite, 2)
  const commands = new CommandHandler({ eventStore: gated, clock, maxRetries: 3 })
  const otherInstance = new CommandHandler({ eventStore: gated, clock, maxRetries: 3 })
  const outcomes = await Promise.allSettled([
    commands.execute(creditLimitAggregate, 'l1', reserve('c1'), context),
    otherInstance.execute(creditLimitAggregate, 'l1', reserve('c2'), context),
  ])
  t.equal(outcomes.filter((o) => o.status === 'fulfilled').length, 1, 'one reservation is written')
  const refusal = outcomes.find((o) => o.status === 'rejected')
  t.ok(refusal?.status === 'rejected' && refusal.reason instanceof AppError && refusal.reason.code === 'CREDIT_LIMIT_EXCEEDED', 'the other is refused by the limit')
  const { state } = await commands.load(creditLimitAggregate, 'l1')
  t.equal(Object.keys(state.exposures).length, 1)
})

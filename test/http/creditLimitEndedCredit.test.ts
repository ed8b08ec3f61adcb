import t, { type Test } from 'tap'
import type { CommandContext, CommandHandler } from '../../src/commands/handler.js'
import { creditLimitAggregate } from '../../src/commands/creditLimit.js'
import { disburseCredit } from '../../src/commands/lending.js'
import type { Runtime } from '../../src/runtime.js'
import { AppError } from '../../src/shared/errors.js'
import { newId } from '../../src/shared/ids.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { tempDir } from '../helpers/config.js'
import { createDebtor, lending } from '../helpers/lending.js'

/**
 * A disbursement checks the credit while it is Aprobado, then reserves its
 * principal on the limit stream, then disburses. A cancellation may commit
 * anywhere in between, and the service may stop anywhere: whatever happens,
 * a credit that ended without disbursement must hold nothing of the limit.
 */

type Execute = CommandHandler['execute']
interface Seen { type: string; creditId?: string; check?: boolean }

/**
 * Runs `before` ahead of every command of the runtime (the HTTP workflows and the
 * process managers share one handler), and `after` once it succeeded.
 */
const instrument = (runtime: Runtime, hooks: {
  before?: (command: Seen, context: CommandContext) => Promise<void> | void
  after?: (command: Seen, context: CommandContext) => void
}) => {
  const commands = runtime.commands
  const original: Execute = commands.execute.bind(commands)
  const wrapped = async (aggregate: never, id: string, command: never, context: CommandContext) => {
    await hooks.before?.(command, context)
    const result = await original(aggregate, id, command, context)
    hooks.after?.(command, context)
    return result
  }
  commands.execute = wrapped as unknown as Execute
  return () => { commands.execute = original }
}

const signal = () => {
  let resolve = () => {}
  const promise = new Promise<void>((r) => { resolve = r })
  return { promise, resolve }
}

const isEndOf = (creditId: string, command: Seen, context: CommandContext, by: 'process' | 'workflow') =>
  (command.type === 'ReleaseCreditLimit' || command.type === 'CloseCreditExposure') && command.creditId === creditId
  && (by === 'process' ? typeof context.causationId === 'string' : context.causationId == null)

const setup = async (t: Test, svc: TestApp) => {
  const l = await lending(svc)
  const creditLineId = await l.createLine()
  const debtorId = await createDebtor(svc.runtime, svc.organizationId)
  const limitResponse = await l.call('POST', '/v1/creditor/credit-limits', { debtorId, maxAmount: '1500000.00', currency: 'COP', expirationDate: '2099-12-31' })
  t.equal(limitResponse.statusCode, 201)
  const limitId: string = limitResponse.json().creditLimit.creditLimitId
  const approvedCredit = async () => {
    const credit = await l.requestCredit({ creditLineId, debtorId, principal: '1000000.00' })
    t.equal((await l.call('POST', `/v1/credits/${credit.ID}/approve`, {})).statusCode, 200)
    return credit.ID
  }
  const usedAmount = async (): Promise<string> => (await l.call('GET', `/v1/creditor/credit-limits/${limitId}`)).json().creditLimit.usedAmount
  return { l, creditLineId, debtorId, limitId, approvedCredit, usedAmount }
}

t.test('a cancellation handled before the disbursement\'s reservation lands leaves the credit holding nothing, though the service stops before the disbursement ends', async (t) => {
  const dataDir = tempDir()
  const a = await createTestApp(t, { config: { dataDir, readStoreSnapshot: false } })
  const { l, creditLineId, debtorId, limitId, approvedCredit } = await setup(t, a)
  const creditId = await approvedCredit()

  const atReserve = signal()
  const reserve = signal()
  const reserved = signal()
  const endHandled = signal()
  instrument(a.runtime, {
    async before(command) {
      if (command.type === 'ReserveCreditLimit' && command.creditId === creditId && command.check === true) {
        atReserve.resolve()
        await reserve.promise
      }
      if (command.type === 'DisburseCredit') await new Promise(() => {}) // the service stops here, before the workflow's own release
    },
    after(command, context) {
      if (command.type === 'ReserveCreditLimit' && command.creditId === creditId) reserved.resolve()
      if (isEndOf(creditId, command, context, 'process')) endHandled.resolve()
    },
  })
  void l.call('POST', `/v1/credits/${creditId}/disburse`, { method: 'bank_transfer' })
  await atReserve.promise
  t.equal((await l.call('POST', `/v1/credits/${creditId}/cancel`, { reason: 'changed mind' })).statusCode, 200, 'the cancellation wins')
  await endHandled.promise
  reserve.resolve()
  await reserved.promise
  await a.close()

  const b = await createTestApp(t, { config: { dataDir, readStoreSnapshot: false } })
  const lb = await lending(b)
  const { state, position } = await b.runtime.commands.load(creditLimitAggregate, limitId)
  t.equal(state.exposures[creditId], '0', 'the limit stream counts nothing for the cancelled credit')
  await b.runtime.settle(position)
  t.equal((await lb.call('GET', `/v1/credits/${creditId}`)).json().data.credit.state, 'Anulado')
  const limit = (await lb.call('GET', `/v1/creditor/credit-limits/${limitId}`)).json().creditLimit
  t.match(limit, { usedAmount: '0.00', availableAmount: '1500000.00' })
  const next = await lb.call('POST', '/v1/credits', { creditLineId, debtorId, principal: '1000000.00' })
  t.equal(next.statusCode, 201, 'a later credit that fits the limit is accepted')
  if (next.statusCode !== 201) return
  const nextId: string = next.json().data.credit.ID
  await lb.call('POST', `/v1/credits/${nextId}/approve`, {})
  t.equal((await lb.call('POST', `/v1/credits/${nextId}/disburse`, { method: 'bank_transfer' })).statusCode, 200, 'and disbursed')
})

for (const order of ['the cancellation is handled before the reservation lands', 'the reservation lands before the cancellation'] as const) {
  t.test(`when a disbursement that lost to a cancellation cannot release its reservation itself, the credit still ends holding nothing (${order})`, async (t) => {
    const svc = await createTestApp(t)
    const { l, limitId, approvedCredit, usedAmount } = await setup(t, svc)
    const creditId = await approvedCredit()
    const endFirst = order === 'the cancellation is handled before the reservation lands'

    const paused = signal()
    const resume = signal()
    const endHandled = signal()
    instrument(svc.runtime, {
      async before(command, context) {
        const pauseHere = endFirst ? command.type === 'ReserveCreditLimit' && command.creditId === creditId && command.check === true : command.type === 'DisburseCredit'
        if (pauseHere) {
          paused.resolve()
          await resume.promise
        }
        // A busy limit stream: the workflow's own release keeps losing the race.
        if (isEndOf(creditId, command, context, 'workflow')) throw new AppError('CONCURRENCY_CONFLICT', 'simulated: the limit stream kept changing')
      },
      after(command, context) {
        if (isEndOf(creditId, command, context, 'process')) endHandled.resolve()
      },
    })
    const warnings: object[] = []
    const now = svc.runtime.clock.now().toISOString()
    const disbursement = disburseCredit(svc.runtime.commands, {
      creditId, organizationId: svc.organizationId, method: 'bank_transfer', reference: '', taxes: [], by: 'test', now,
      log: { warn: (details) => { warnings.push(details) } },
    }, { organizationId: svc.organizationId, actorId: 'test', correlationId: newId(), causationId: null })
    await paused.promise
    t.equal((await l.call('POST', `/v1/credits/${creditId}/cancel`, { reason: 'changed mind' })).statusCode, 200, 'the cancellation wins')
    if (endFirst) await endHandled.promise
    resume.resolve()
    await t.rejects(disbursement, { code: 'INVALID_TRANSITION' }, 'the disbursement answers why it failed, not why its release did')
    t.match(warnings, [{ creditId }], 'the failed release is logged')

    await endHandled.promise
    const { state, position } = await svc.runtime.commands.load(creditLimitAggregate, limitId)
    t.equal(state.exposures[creditId], '0', 'the limit stream counts nothing for the cancelled credit')
    await svc.runtime.settle(position)
    t.equal(await usedAmount(), '0.00')
  })
}

t.test('a credit that ends without ever being approved adds nothing to the limit stream', async (t) => {
  const svc = await createTestApp(t)
  const { l, creditLineId, debtorId, limitId } = await setup(t, svc)
  const cancelled = (await l.requestCredit({ creditLineId, debtorId, principal: '1000000.00' })).ID
  const rejected = (await l.requestCredit({ creditLineId, debtorId, principal: '1000000.00' })).ID
  const handled = new Set<string>()
  const both = signal()
  instrument(svc.runtime, {
    after(command, context) {
      for (const creditId of [cancelled, rejected]) if (isEndOf(creditId, command, context, 'process')) handled.add(creditId)
      if (handled.size === 2) both.resolve()
    },
  })
  t.equal((await l.call('POST', `/v1/credits/${cancelled}/cancel`, { reason: 'duplicate' })).statusCode, 200)
  t.equal((await l.call('POST', `/v1/credits/${rejected}/reject`, { reason: 'score' })).statusCode, 200)
  await both.promise
  const types: string[] = []
  for await (const event of svc.runtime.history(`creditLimit-${limitId}`)) types.push(event.type)
  t.same(types, ['CreditLimitCreated'], 'no disbursement can be on its way for them, so nothing is closed')
})

import t from 'tap'
import { pino } from 'pino'
import { creditLimitAggregate, creditLimitIdOf } from '../../src/commands/creditLimit.js'
import { CommandHandler } from '../../src/commands/handler.js'
import { profileAggregate } from '../../src/commands/profile.js'
import { scoringConfigurationAggregate } from '../../src/commands/scoringConfiguration.js'
import { taxAggregate } from '../../src/commands/tax.js'
import { taxApplications } from '../../src/commands/taxation.js'
import type { ScoringModelDefinition } from '../../src/events/scoringModel.js'
import { SqliteEventStore } from '../../src/events/sqlite.js'
import { creditLimitsProjection } from '../../src/projections/creditLimits.js'
import { MemoryReadStore } from '../../src/projections/memoryStore.js'
import type { Projection } from '../../src/projections/projection.js'
import type { ReadStore } from '../../src/projections/readStore.js'
import { ProjectionRunner } from '../../src/projections/runner.js'
import { scoringModelsProjection } from '../../src/projections/scoringModels.js'
import { taxesProjection } from '../../src/projections/taxes.js'
import { ManualClock } from '../../src/shared/clock.js'

const logger = pino({ level: 'silent' })
const projections: Projection[] = [scoringModelsProjection, taxesProjection, creditLimitsProjection]
const context = { organizationId: 'o1', actorId: 'a', correlationId: 'c' }

const snapshot = async (store: ReadStore) => {
  const out: Record<string, unknown[]> = {}
  for (const projection of projections) {
    for (const spec of projection.collections) out[spec.name] = await store.collection(spec).find({}, { sort: { _id: 1 } })
  }
  return out
}

const definition: ScoringModelDefinition = {
  name: 'Basic', description: '', category: 'consumer', metadata: {}, penalties: [], bonuses: [],
  variables: [{ field: 'age', weight: 1, type: 'numeric', ranges: [{ min: 18, max: 99, score: 100 }], categories: [] }],
  thresholds: { approve: 70, review: 50, reject: 30 },
}

/** A history touching every event these read models handle. */
const seed = async (commands: CommandHandler, clock: ManualClock) => {
  const now = () => clock.now().toISOString()
  const step = () => clock.advance(1000)
  const model = (modelId: string, isDefault: boolean) => ({
    type: 'CreateScoringModel' as const, configId: 'c1', organizationId: 'o1', modelId, version: '1', definition, validFrom: now(), isActive: true, isDefault, now: now(),
  })
  await commands.execute(scoringConfigurationAggregate, 'c1', model('m1', true), context)
  step()
  await commands.execute(scoringConfigurationAggregate, 'c1', model('m2', true), context)
  await commands.execute(scoringConfigurationAggregate, 'c1', { type: 'ReviseScoringModel', modelId: 'm1', version: '2', definition, validFrom: now(), isActive: false, now: now() }, context)
  await commands.execute(taxAggregate, 't1', { type: 'CreateTax', taxId: 't1', organizationId: 'o1', isActive: true, now: now(),
    fields: { name: 'IVA', description: '', percentage: '19', type: 'VAT', appliesTo: ['PAYMENT'], minimumAmount: '0' } }, context)
  await commands.execute(taxAggregate, 't1', { type: 'UpdateTax', changes: { percentage: '16' }, now: now() }, context)
  const rate = { taxId: 't1', organizationId: 'o1', name: 'IVA', type: 'VAT' as const, isActive: true, percentage: '16', appliesTo: ['PAYMENT' as const], minimumAmount: '0' }
  await commands.appendRaw('order-1', taxApplications([rate], { appliesTo: 'PAYMENT', subjectId: '1', base: '1000', currency: 'COP' }, now()), 'no_stream', context)
  await commands.execute(taxAggregate, 't1', { type: 'DeactivateTax', now: now() }, context)
  await commands.execute(profileAggregate, 'p1', { type: 'CreateProfile', profileId: 'p1', organizationId: 'o1', ownerId: 'u', profileType: 'natural',
    natural: { firstName: 'Ana', lastName: 'Gómez', documentType: 'CC', documentNumber: '1' }, legal: null, copiedFrom: null, now: now() }, context)
  const limitId = creditLimitIdOf('o1', 'p1', 'COP')
  const reserve = (creditId: string, amount: string) => ({
    type: 'ReserveCreditLimit' as const, creditLimitId: limitId, organizationId: 'o1', debtorId: 'p1', currency: 'COP', creditId, amount, check: true,
    today: '2026-01-15', now: now(),
  })
  // An exposure before the limit exists, counted once the limit is set.
  await commands.execute(creditLimitAggregate, limitId, reserve('cr1', '30'), context)
  await commands.execute(creditLimitAggregate, limitId, { type: 'CreateCreditLimit', creditLimitId: limitId, organizationId: 'o1', debtorId: 'p1',
    currency: 'COP', maxAmount: '100', expirationDate: '2026-01-20', today: '2026-01-15', now: now() }, context)
  await commands.execute(creditLimitAggregate, limitId, reserve('cr2', '50'), context)
  await commands.execute(creditLimitAggregate, limitId, { type: 'ReleaseCreditLimit', creditId: 'cr1', remaining: '10', reason: 'payment', now: now() }, context)
  await commands.execute(creditLimitAggregate, limitId, { type: 'ReleaseCreditLimit', creditId: 'cr2', remaining: '0', reason: 'paid', now: now() }, context)
  await commands.execute(profileAggregate, 'p1', { type: 'UpdateProfile', natural: { lastName: 'Gómez Díaz' }, now: now() }, context)
  await commands.execute(creditLimitAggregate, limitId, { type: 'ChangeCreditLimit', maxAmount: '200', status: 'inactive', today: '2026-01-15', now: now() }, context)
  await commands.execute(creditLimitAggregate, limitId, { type: 'ExpireCreditLimit', today: '2026-01-21', now: now() }, context)
  await commands.execute(creditLimitAggregate, limitId, { type: 'ChangeCreditLimit', expirationDate: '2026-06-30', today: '2026-01-21', now: now() }, context)
}

t.test('scoring models, taxes and credit limits rebuild to the same documents, and a redelivery changes nothing', async (t) => {
  const eventStore = new SqliteEventStore({ file: ':memory:' })
  const readStore = new MemoryReadStore()
  const runner = new ProjectionRunner(eventStore, readStore, projections, { logger })
  t.teardown(async () => { await runner.stop(); await eventStore.close() })
  await runner.start()
  const clock = new ManualClock('2026-01-15T12:00:00.000Z')
  await seed(new CommandHandler({ eventStore, clock, maxRetries: 1 }), clock)
  t.ok(await runner.waitFor(await eventStore.headPosition(), 2000))
  const live = await snapshot(readStore)
  t.match(live['scoring_models'], [{ _id: 'm1', isDefault: false, isActive: false, version: '2' }, { _id: 'm2', isDefault: true }])
  t.match(live['taxes'], [{ _id: 't1', percentage: '16', isActive: false, usageCount: 1 }])
  t.match(live['credit_limits'], [{ maxAmount: '200', usedAmount: '10', status: 'active', expirationDate: '2026-06-30', debtorInfo: { name: 'Ana Gómez Díaz' } }])
  t.match(live['credit_exposures'], [{ _id: 'cr1', outstandingPrincipal: '10' }, { _id: 'cr2', outstandingPrincipal: '0' }])

  for await (const event of eventStore.readAll()) {
    for (const projection of projections) await projection.project(readStore, event, event.position)
  }
  t.same(await snapshot(readStore), live, 'every event delivered again: no change')
  await runner.rebuild()
  t.same(await snapshot(readStore), live, 'rebuilt from zero')
  await runner.rebuild(['creditLimits'])
  t.same(await snapshot(readStore), live, 'one projection rebuilt again')
})

import t from 'tap'
import { scoreReasons, scoringModelInForce } from '../../src/commands/automaticScoring.js'
import { CommandHandler } from '../../src/commands/handler.js'
import { scoringConfigurationAggregate, type ScoringConfigurationCommand } from '../../src/commands/scoringConfiguration.js'
import { evaluateScoringModel } from '../../src/commands/scoringEvaluation.js'
import type { ScoringModelDefinition } from '../../src/events/scoringModel.js'
import { SqliteEventStore } from '../../src/events/sqlite.js'
import { ManualClock } from '../../src/shared/clock.js'

const definition = (approve: number): ScoringModelDefinition => ({
  name: 'Basic', description: '', category: 'consumer', metadata: {},
  variables: [
    { field: 'age', weight: 0.6, type: 'numeric', ranges: [{ min: 18, max: 40, score: 80 }], categories: [] },
    { field: 'employmentType', weight: 0.4, type: 'categorical', ranges: [], categories: [{ value: 'formal', score: 100 }] },
  ],
  thresholds: { approve, review: 40, reject: 10 },
  penalties: [{ condition: 'age < 21', penalty: 15, description: 'very young' }],
  bonuses: [{ condition: 'hasEmail', bonus: 2.5, description: 'reachable' }],
})

t.test('the model in force: the default, active, and its latest version whose validFrom has come', async (t) => {
  const eventStore = new SqliteEventStore({ file: ':memory:' })
  t.teardown(() => eventStore.close())
  const commands = new CommandHandler({ eventStore, clock: new ManualClock('2026-01-01T00:00:00.000Z'), maxRetries: 1 })
  const run = (command: ScoringConfigurationCommand) => commands.execute(scoringConfigurationAggregate, 'c1', command, { organizationId: 'o1', actorId: 'a', correlationId: 'x' })
  const events = async () => (await commands.load(scoringConfigurationAggregate, 'c1', { withEvents: true })).events
  const now = '2026-01-01T00:00:00.000Z'
  await run({ type: 'CreateScoringModel', configId: 'c1', organizationId: 'o1', modelId: 'm1', version: '1', definition: definition(70), validFrom: now, isActive: true, isDefault: false, now })
  t.equal(scoringModelInForce(await events(), now), null, 'no default yet')
  await run({ type: 'ChangeScoringModelStatus', modelId: 'm1', isDefault: true, now })
  await run({ type: 'ReviseScoringModel', modelId: 'm1', version: '2', definition: definition(75), validFrom: '2026-02-01T00:00:00.000Z', now })
  t.match(scoringModelInForce(await events(), '2026-01-31T23:59:59.999Z'), { modelId: 'm1', version: '1', versionNumber: 1, definition: { thresholds: { approve: 70 } } })
  t.match(scoringModelInForce(await events(), '2026-02-01T00:00:00.000Z'), { version: '2', versionNumber: 2, definition: { thresholds: { approve: 75 } } })
  t.equal(scoringModelInForce(await events(), '2025-12-31T23:59:59.999Z'), null, 'before any version takes effect')
  await run({ type: 'ChangeScoringModelStatus', modelId: 'm1', isActive: false, now })
  t.equal(scoringModelInForce(await events(), '2026-03-01T00:00:00.000Z'), null, 'an inactive default scores nothing')
  await run({ type: 'CreateScoringModel', configId: 'c1', organizationId: 'o1', modelId: 'm2', version: 'a', definition: definition(60), validFrom: now, isActive: true, isDefault: true, now })
  t.match(scoringModelInForce(await events(), now), { modelId: 'm2', version: 'a' }, 'a new default takes over')
  await run({ type: 'ChangeScoringModelStatus', modelId: 'm2', isDefault: false, now })
  t.equal(scoringModelInForce(await events(), now), null, 'the default cleared')
})

t.test('reasons explain the score line by line', async (t) => {
  // 0.6 × 80 = 48; no employment type: 0; penalty −15; bonus +2.5 → 35.5, below review (40): reject
  const result = evaluateScoringModel(definition(70), { age: 19, hasEmail: true })
  t.same(scoreReasons(result), [
    'age = 19: 80 × 0.6 = 48',
    'employmentType: the debtor has no value for this field, 0',
    'penalty −15: very young (age < 21)',
    'bonus +2.5: reachable (hasEmail)',
    'score 35.5: reject (approve from 70, review from 40)',
  ])
  t.equal(scoreReasons(evaluateScoringModel(definition(70), { age: 50, employmentType: 'informal' }))[0], 'age = 50: the value is in no range, 0')
})

import t from 'tap'
import { scoringConfigurationAggregate } from '../../src/commands/scoringConfiguration.js'
import type { ScoringModelCreated, ScoringModelDefinition } from '../../src/events/scoringModel.js'
import { scenario } from '../helpers/deciders.js'

const now = '2026-03-01T10:00:00.000Z'
const configuration = scenario(scoringConfigurationAggregate)
const definition: ScoringModelDefinition = {
  name: 'Basic', description: '', category: 'consumer',
  variables: [{ field: 'age', weight: 1, type: 'numeric', ranges: [{ min: 18, max: 99, score: 100 }], categories: [] }],
  thresholds: { approve: 70, review: 50, reject: 30 }, penalties: [], bonuses: [], metadata: {},
}
const ids = { configId: 'c1', organizationId: 'o1' }
const create = (modelId: string, isDefault = false) => ({
  type: 'CreateScoringModel' as const, ...ids, modelId, version: '1', definition, validFrom: now, isActive: true, isDefault, now,
})
const created = (modelId: string): ScoringModelCreated => ({ type: 'ScoringModelCreated', data: {
  ...ids, modelId, versionNumber: 1, version: '1', definition, validFrom: now, isActive: true, createdAt: now,
} })
const madeDefault = (modelId: string | null, previousModelId: string | null) =>
  ({ type: 'DefaultScoringModelChanged' as const, data: { ...ids, modelId, previousModelId, at: now } })

t.test('creating a default model records the model and the new default in one decision', async (t) => {
  configuration.given().when(create('m1')).then(t, [created('m1')])
  configuration.given().when(create('m1', true)).then(t, [created('m1'), madeDefault('m1', null)])
  configuration.given(created('m1'), madeDefault('m1', null)).when(create('m2', true)).then(t, [created('m2'), madeDefault('m2', 'm1')])
  configuration.given(created('m1')).when(create('m1')).thenRefused(t, 'ALREADY_EXISTS')
})

t.test('a creation under an Idempotency-Key records the Key on its model; one that finds the model made decides nothing', async (t) => {
  const idempotency = { key: 'k1', requestHash: 'h1' }
  const keyed = created('m1')
  keyed.data.idempotency = idempotency
  configuration.given().when({ ...create('m1'), idempotency }).then(t, [keyed])
  t.same(configuration.given(keyed).state.models.get('m1')?.idempotency, idempotency)
  configuration.given(created('m1')).when({ ...create('m1', true), idempotency }).thenNothing(t, 'the caller compares its request with the one recorded')
})

t.test('a configuration belongs to one organization', async (t) => {
  configuration.given(created('m1')).when({ ...create('m2'), organizationId: 'o2' }).thenRefused(t, 'NOT_FOUND')
})

t.test('an invalid definition is refused by the decider, whatever the entry point', async (t) => {
  configuration.given().when({ ...create('m1'), definition: { ...definition, thresholds: { approve: 10, review: 50, reject: 30 } } }).thenRefused(t, 'VALIDATION_ERROR')
  configuration.given().when({ ...create('m1'), definition: { ...definition, penalties: [{ condition: 'age <', penalty: 1, description: '' }] } })
    .thenRefused(t, 'VALIDATION_ERROR')
})

t.test('a revision is a new numbered version with an unused label', async (t) => {
  const revise = { type: 'ReviseScoringModel' as const, modelId: 'm1', version: '2', definition, validFrom: now, now }
  configuration.given(created('m1')).when(revise).then(t, [{ type: 'ScoringModelRevised', data: {
    ...ids, modelId: 'm1', versionNumber: 2, version: '2', definition, validFrom: now, createdAt: now,
  } }])
  configuration.given(created('m1')).when({ ...revise, version: '1' }).thenRefused(t, 'SCORING_MODEL_VERSION_EXISTS')
  configuration.given(created('m1')).when({ ...revise, modelId: 'm9' }).thenRefused(t, 'NOT_FOUND')
  const deactivatedDefault = configuration.given(created('m1')).when({ ...revise, isActive: false, isDefault: true })
  deactivatedDefault.then(t, [
    { type: 'ScoringModelRevised', data: { ...ids, modelId: 'm1', versionNumber: 2, version: '2', definition, validFrom: now, createdAt: now } },
    { type: 'ScoringModelDeactivated', data: { ...ids, modelId: 'm1', at: now } },
    madeDefault('m1', null),
  ], 'flags given with a revision apply with it')
})

t.test('status changes: only what differs, and clearing the default leaves none', async (t) => {
  const change = (flags: { isActive?: boolean; isDefault?: boolean }) => ({ type: 'ChangeScoringModelStatus' as const, modelId: 'm1', now, ...flags })
  configuration.given(created('m1')).when(change({ isActive: true })).thenNothing(t)
  configuration.given(created('m1')).when(change({ isActive: false })).then(t, [{ type: 'ScoringModelDeactivated', data: { ...ids, modelId: 'm1', at: now } }])
  configuration.given(created('m1')).when(change({ isDefault: false })).thenNothing(t, 'a model that is not the default stays so')
  configuration.given(created('m1'), madeDefault('m1', null)).when(change({ isDefault: false })).then(t, [madeDefault(null, 'm1')])
  configuration.given(created('m1'), madeDefault('m1', null)).when(change({ isDefault: true })).thenNothing(t)
  const state = configuration.given(created('m1'), created('m2'), madeDefault('m1', null), madeDefault('m2', 'm1')).state
  t.equal(state.defaultModelId, 'm2')
  t.same(state.models.get('m1'), { versions: ['1'], isActive: true })
})

import t from 'tap'
import { EVALUATION_STEP_BUDGET } from '../../src/commands/scoringConditions.js'
import { streamName } from '../../src/events/streams.js'
import { schemaVersionOf } from '../../src/events/upcasters.js'
import { newId } from '../../src/shared/ids.js'
import { consumerModel, scoringModelApi } from '../helpers/scoring.js'

const numbers = (n: number) => `[${Array.from({ length: n }, (_, i) => i).join(',')}]`
/** The audit's condition: lists of `n` nested 7 deep, n^7 iterations (n = 12: 8.3 s; n = 22: about 10 minutes). */
const nested = (n: number) => {
  const names = 'abcdefg'.split('')
  return names.reduceRight((body, name) => `${numbers(n)}.all(${name}, ${body})`, `${names.join(' + ')} >= 0`)
}

t.test('a condition too costly to evaluate is a 400 at the condition, on creation and on update', async (t) => {
  const { base, call } = await scoringModelApi(t)
  const created = await call({ method: 'POST', url: base, payload: { ...consumerModel, penalties: [{ condition: nested(12), penalty: 1, description: 'slow' }] } })
  t.equal(created.statusCode, 400)
  t.equal(created.json().data.code, 'VALIDATION_ERROR')
  const [error] = created.json().data.errors
  t.match(error, { field: 'body.penalties.0.condition', message: /^is too costly to evaluate: up to \d+ steps, more than 25000 .*\(line 1, column \d+\)$/, line: 1 })
  t.equal(nested(12)[error.position], '[', 'at the macro whose cost is over the budget')

  const id = (await call({ method: 'POST', url: base, payload: consumerModel })).json().data.ID
  const updated = await call({ method: 'PUT', url: `${base}/${id}`, payload: { ...consumerModel, version: '2.0', bonuses: [{ condition: nested(22), bonus: 1, description: 'slower' }] } })
  t.equal(updated.statusCode, 400)
  t.match(updated.json().data.errors, [{ field: 'body.bonuses.0.condition', message: /too costly to evaluate/ }])
  t.equal((await call({ method: 'GET', url: `${base}/${id}?version=2.0` })).statusCode, 404, 'no version was recorded')
})

t.test('a costly condition recorded before the check is evaluated within its budget: it does not hold, and says why', async (t) => {
  const { svc, clock, configId, base, call } = await scoringModelApi(t)
  const id = (await call({ method: 'POST', url: base, payload: consumerModel })).json().data.ID
  // as an earlier release recorded it: the event log is never rewritten
  const { name, description, category, variables, thresholds, bonuses, metadata } = consumerModel
  const definition = { name, description, category, variables, thresholds, metadata, bonuses, penalties: [{ condition: nested(22), penalty: 30, description: 'recorded before the check' }] }
  const at = clock.now().toISOString()
  const appended = await svc.runtime.eventStore.append(streamName('scoringConfiguration', configId), [{
    id: newId(), type: 'ScoringModelRevised',
    data: { configId, organizationId: svc.organizationId, modelId: id, versionNumber: 2, version: '2.0', definition, validFrom: at, createdAt: at },
    metadata: { organizationId: svc.organizationId, actorId: null, correlationId: newId(), causationId: null, occurredAt: at, schemaVersion: schemaVersionOf('ScoringModelRevised') },
  }], 'any')
  await svc.runtime.settle(appended.position)
  const loaded = await call({ method: 'GET', url: `${base}/${id}?version=2.0` })
  t.equal(loaded.statusCode, 200)
  t.equal(loaded.json().data.penalties[0].condition, nested(22), 'the model loads as recorded')

  const evaluated = await call({ method: 'POST', url: `${base}/${id}/evaluate`, payload: { fields: { age: 35, monthlyIncome: '4500000.00', employmentType: 'formal' }, version: '2.0' } })
  t.equal(evaluated.statusCode, 200)
  const result = evaluated.json().data
  t.match(result.penalties[0], { applied: false, amount: 30, error: `evaluation exceeded its budget of ${EVALUATION_STEP_BUDGET} steps` })
  t.match(result, { baseScore: 74, totalPenalty: 0, totalBonus: 5, score: 79, decision: 'approve' }, 'the penalty does not hold, like any condition that cannot be evaluated')
})

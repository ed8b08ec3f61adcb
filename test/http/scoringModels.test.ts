import t from 'tap'
import { newId } from '../../src/shared/ids.js'
import { createOrganization, createProfile, memberToken } from '../helpers/organizations.js'
import { consumerModel, scoringModelApi } from '../helpers/scoring.js'

t.test('creating a scoring model answers exactly the interface\'s response', async (t) => {
  const { svc, configId, base, call } = await scoringModelApi(t)
  const created = await call({ method: 'POST', url: base, payload: consumerModel })
  t.equal(created.statusCode, 201)
  const body = created.json()
  t.same(Object.keys(body).sort(), ['data', 'message'])
  t.same(Object.keys(body.data).sort(), ['ID', 'accessUrl', 'category', 'configId', 'createdAt', 'entityId', 'isActive', 'isDefault', 'name', 'validFrom', 'version'].sort())
  t.match(body.data, {
    name: 'Consumer basic', version: '1.0', category: 'consumer', configId, entityId: svc.organizationId, isActive: true, isDefault: true,
    createdAt: '2026-01-15T12:00:00.000Z', validFrom: '2026-01-15T12:00:00.000Z',
  })
  t.equal(body.data.accessUrl, `http://localhost:${svc.config.port}${base}/${body.data.ID}`)
  t.equal(created.headers['location'], body.data.accessUrl)
  const one = await call({ method: 'GET', url: `${base}/${body.data.ID}` })
  t.equal(one.statusCode, 200, 'readable at once')
  t.match(one.json().data, { description: 'Age, income and employment', versionNumber: 1, metadata: { owner: 'risk' }, penalties: consumerModel.penalties })
  t.same(one.json().data.variables[0].ranges, consumerModel.variables[0]?.ranges)
})

t.test('only name, version, category, variables and thresholds are required; the rest has defaults', async (t) => {
  const { base, call, clock } = await scoringModelApi(t)
  const { name, version, category, variables, thresholds } = consumerModel
  const created = await call({ method: 'POST', url: base, payload: { name, version, category, variables, thresholds } })
  t.equal(created.statusCode, 201)
  t.match(created.json().data, { isActive: true, isDefault: false, validFrom: clock.now().toISOString() })
  const one = (await call({ method: 'GET', url: `${base}/${created.json().data.ID}` })).json().data
  t.same([one.description, one.penalties, one.bonuses, one.metadata], ['', [], [], {}])
  for (const missing of ['name', 'version', 'category', 'variables', 'thresholds']) {
    const payload: Record<string, unknown> = { name, version, category, variables, thresholds }
    delete payload[missing]
    const response = await call({ method: 'POST', url: base, payload })
    t.equal(response.statusCode, 400, `${missing} is required`)
    t.equal(response.json().data.errors[0].field, `body.${missing}`)
  }
  const badCategory = await call({ method: 'POST', url: base, payload: { ...consumerModel, category: 'lottery' } })
  t.equal(badCategory.statusCode, 400)
})

t.test('both organization headers are required, Config-Organization-ID wins and must match the path', async (t) => {
  const { svc, base, configId, call } = await scoringModelApi(t)
  const noConfigHeader = await svc.call({ method: 'GET', url: base, token: svc.adminToken, headers: { 'organization-id': svc.organizationId } })
  t.equal(noConfigHeader.statusCode, 400)
  t.equal(noConfigHeader.json().data.errors[0].field, 'headers.config-organization-id')
  const noLegacy = await svc.call({ method: 'GET', url: base, token: svc.adminToken, headers: { 'config-organization-id': svc.organizationId } })
  t.equal(noLegacy.statusCode, 400)
  t.equal(noLegacy.json().data.errors[0].field, 'headers.organization-id')

  const other = await createOrganization(svc, 'Other lender')
  const legacyDiffers = await call({ method: 'GET', url: base, headers: { 'organization-id': other.id } })
  t.equal(legacyDiffers.statusCode, 200, 'the legacy header is ignored when Config-Organization-ID is given')
  const mismatch = await call({ method: 'GET', url: base, headers: { 'config-organization-id': other.id } })
  t.equal(mismatch.statusCode, 400)
  t.match(mismatch.json().data, { code: 'ORGANIZATION_MISMATCH', pathOrganizationId: svc.organizationId, headerOrganizationId: other.id })

  const foreignConfig = await call({ method: 'GET', url: `/v1/organization/${svc.organizationId}/config/${other.defaultConfigId}/scoring-model` })
  t.equal(foreignConfig.statusCode, 404, 'another organization\'s configuration is not this one\'s')
  const unknownConfig = await call({ method: 'GET', url: `/v1/organization/${svc.organizationId}/config/${newId()}/scoring-model` })
  t.equal(unknownConfig.statusCode, 404)
  t.equal((await call({ method: 'GET', url: base })).statusCode, 200, configId)
})

t.test('the caller must be allowed to configure an active organization', async (t) => {
  const { svc, base, call, as } = await scoringModelApi(t)
  const analyst = await memberToken(svc, svc.organizationId, 'analyst')
  t.equal((await as(analyst, { method: 'GET', url: base })).statusCode, 200, 'analysts read models')
  const refused = await as(analyst, { method: 'POST', url: base, payload: consumerModel })
  t.equal(refused.statusCode, 403)
  t.match(refused.json().data, { code: 'FORBIDDEN', permission: 'WriteScoringModel' })

  const other = await createOrganization(svc, 'Other lender')
  const outsider = await memberToken(svc, other.id, 'administrator')
  const notMember = await as(outsider, { method: 'POST', url: base, payload: consumerModel })
  t.equal(notMember.statusCode, 403)
  t.equal(notMember.json().data.code, 'ORGANIZATION_FORBIDDEN')

  const writer = await memberToken(svc, svc.organizationId, ['WriteScoringModel'])
  t.equal((await as(writer, { method: 'POST', url: base, payload: consumerModel })).statusCode, 201, 'WriteScoringModel is enough to create')
  t.equal((await call({ method: 'GET', url: base })).statusCode, 200)
})

t.test('a model of another organization is a 404 everywhere', async (t) => {
  const { svc, base, call } = await scoringModelApi(t)
  const other = await createOrganization(svc, 'Other lender')
  const otherHeaders = { 'config-organization-id': other.id, 'organization-id': other.id }
  const otherBase = `/v1/organization/${other.id}/config/${other.defaultConfigId}/scoring-model`
  const foreign = (await call({ method: 'POST', url: otherBase, headers: otherHeaders, payload: consumerModel })).json().data.ID
  t.equal((await call({ method: 'GET', url: `${base}/${foreign}` })).statusCode, 404)
  t.equal((await call({ method: 'PUT', url: `${base}/${foreign}`, payload: { ...consumerModel, version: '2.0' } })).statusCode, 404)
  t.equal((await call({ method: 'PATCH', url: `${base}/${foreign}`, payload: { isActive: false } })).statusCode, 404)
  t.equal((await call({ method: 'POST', url: `${base}/${foreign}/evaluate`, payload: { fields: { age: 30 } } })).statusCode, 404)
  t.same((await call({ method: 'GET', url: base })).json().data, [], 'not listed either')
})

t.test('invalid models are refused with every problem listed', async (t) => {
  const { base, call } = await scoringModelApi(t)
  const refuse = async (change: Record<string, unknown>, field: string, message: RegExp) => {
    const response = await call({ method: 'POST', url: base, payload: { ...consumerModel, ...change } })
    t.equal(response.statusCode, 400, `${field} refused`)
    const errors: Array<{ field: string; message: string }> = response.json().data.errors
    t.ok(errors.some((e) => e.field === field && message.test(e.message)), `${field}: ${JSON.stringify(errors)}`)
  }
  const [age, income, employment] = consumerModel.variables
  await refuse({ variables: [{ ...age, ranges: [{ min: 30, max: 20, score: 1 }] }, income, employment] }, 'body.variables.0.ranges.0', /greater than max/)
  await refuse({ variables: [{ ...age, ranges: [{ min: 18, max: 30, score: 1 }, { min: 30, max: 40, score: 2 }] }, income, employment] }, 'body.variables.0.ranges.1', /overlaps range 0/)
  await refuse({ variables: [{ ...age, ranges: [] }, income, employment] }, 'body.variables.0.ranges', /at least one range/)
  await refuse({ variables: [{ ...age, weight: 0.4 }, income, employment] }, 'body.variables', /add up to 1, they add up to 1.1/)
  await refuse({ variables: [age, income, { ...employment, categories: [{ value: 'formal', score: 1 }, { value: 'formal', score: 2 }] }] }, 'body.variables.2.categories.1.value', /duplicate/)
  await refuse({ variables: [age, income, { field: 'hasEmployer', weight: 0.2, type: 'boolean', categories: [{ value: 'yes', score: 1 }] }] }, 'body.variables.2.categories.0.value', /"true" and "false"/)
  await refuse({ variables: [age, income, { ...employment, type: 'numeric', ranges: [{ min: 0, max: 1, score: 1 }], categories: [] }] }, 'body.variables.2.type', /cannot read employmentType/)
  await refuse({ variables: [{ ...age, weight: 0.5 }, { ...age, weight: 0.5 }] }, 'body.variables.1.field', /scored twice/)
  await refuse({ thresholds: { approve: 40, review: 50, reject: 30 } }, 'body.thresholds', /reject <= review <= approve/)
  await refuse({ variables: [{ ...age, field: 'shoeSize' }, income, employment] }, 'body.variables.0.field', /^must be one of .*monthlyIncome/)
  // Sums of points this large overflowed a double: the evaluation answered `"score": null`.
  await refuse({ bonuses: [{ condition: 'age > 0', bonus: 1.7e308 }] }, 'body.bonuses.0.bonus', /<= 1000000000/)
  await refuse({ penalties: [{ condition: 'age > 0', penalty: 1e9 + 1 }] }, 'body.penalties.0.penalty', /<= 1000000000/)
  await refuse({ variables: [{ ...age, ranges: [{ min: 0, max: 150, score: -1.7e308 }] }, income, employment] }, 'body.variables.0.ranges.0.score', />= -1000000000/)
  await refuse({ thresholds: { approve: 2e9, review: 50, reject: 30 } }, 'body.thresholds.approve', /<= 1000000000/)
})

t.test('points at the bounds give an exact, finite score', async (t) => {
  const { base, call } = await scoringModelApi(t)
  const [age, income, employment] = consumerModel.variables
  const model = {
    ...consumerModel, thresholds: { approve: 1e9, review: -1e9, reject: -1e9 },
    variables: [{ ...age, ranges: [{ min: 0, max: 150, score: 1e9 }] }, income, employment],
    bonuses: Array.from({ length: 50 }, () => ({ condition: 'age > 0', bonus: 1e9 })),
  }
  const created = await call({ method: 'POST', url: base, payload: model })
  t.equal(created.statusCode, 201)
  const result = (await call({ method: 'POST', url: `${base}/${created.json().data.ID}/evaluate`, payload: { fields: { age: 30 } } })).json().data
  t.match(result, { baseScore: 300_000_000, totalBonus: 50_000_000_000, score: 50_300_000_000, decision: 'approve' })
})

t.test('a condition that does not parse is a 400 with the position of the error', async (t) => {
  const { base, call } = await scoringModelApi(t)
  const refuse = async (condition: string, expected: { position: number; line: number; column: number; message: RegExp }, where = 'penalties') => {
    const list = where === 'penalties' ? { penalties: [{ condition, penalty: 5, description: 'x' }] } : { bonuses: [{ condition, bonus: 5, description: 'x' }] }
    const response = await call({ method: 'POST', url: base, payload: { ...consumerModel, penalties: [], bonuses: [], ...list } })
    t.equal(response.statusCode, 400, condition)
    const error = response.json().data.errors[0]
    t.equal(error.field, `body.${where}.0.condition`)
    t.match(error, { position: expected.position, line: expected.line, column: expected.column, message: expected.message }, condition)
  }
  await refuse('age <', { position: 5, line: 1, column: 6, message: /Unexpected token: EOF/ })
  await refuse('age < 21 &&& true', { position: 11, line: 1, column: 12, message: /Unexpected character/ })
  await refuse('age < 21 &&\n  salary > 3', { position: 14, line: 2, column: 3, message: /Unknown variable: salary/ }, 'bonuses')
  await refuse('age + 1', { position: 0, line: 1, column: 1, message: /must be a boolean expression/ })
  await refuse('employmentType + 1 > 0', { position: 0, line: 1, column: 1, message: /no such overload/ })
  await refuse('age > 1 && occupation.matches("(a+)+$")', { position: 11, line: 1, column: 12, message: /matches\(\) is not allowed/ })
  await refuse('process.exit(1) == null', { position: 0, line: 1, column: 1, message: /Unknown variable: process/ })
})

t.test('an update creates a new version; earlier versions stay readable', async (t) => {
  const { base, call, clock } = await scoringModelApi(t)
  const id = (await call({ method: 'POST', url: base, payload: consumerModel })).json().data.ID
  clock.advance(60_000)
  const revised = await call({ method: 'PUT', url: `${base}/${id}`, payload: { ...consumerModel, version: '1.1', thresholds: { approve: 75, review: 55, reject: 30 } } })
  t.equal(revised.statusCode, 200)
  t.match(revised.json().data, { ID: id, version: '1.1', validFrom: '2026-01-15T12:01:00.000Z', createdAt: '2026-01-15T12:00:00.000Z' })
  const latest = (await call({ method: 'GET', url: `${base}/${id}` })).json().data
  t.match(latest, { versionNumber: 2, thresholds: { approve: 75 } })
  t.same(latest.versions.map((v: { version: string }) => v.version), ['1.0', '1.1'])
  const first = (await call({ method: 'GET', url: `${base}/${id}?version=1.0` })).json().data
  t.match(first, { version: '1.0', versionNumber: 1, thresholds: { approve: 70 } })
  t.equal((await call({ method: 'GET', url: `${base}/${id}?version=9.9` })).statusCode, 404)
  const reused = await call({ method: 'PUT', url: `${base}/${id}`, payload: consumerModel })
  t.equal(reused.statusCode, 409)
  t.equal(reused.json().data.code, 'SCORING_MODEL_VERSION_EXISTS')
  t.equal((await call({ method: 'PUT', url: `${base}/${newId()}`, payload: { ...consumerModel, version: '3' } })).statusCode, 404)
})

t.test('one default model per configuration: setting it on one clears it on the other', async (t) => {
  const { base, call } = await scoringModelApi(t)
  const first = (await call({ method: 'POST', url: base, payload: consumerModel })).json().data.ID
  const second = (await call({ method: 'POST', url: base, payload: { ...consumerModel, name: 'Second' } })).json().data
  t.equal(second.isDefault, true)
  const defaults = async () => (await call({ method: 'GET', url: `${base}?isDefault=true` })).json().data.map((m: { ID: string }) => m.ID)
  t.same(await defaults(), [second.ID])
  const patched = await call({ method: 'PATCH', url: `${base}/${first}`, payload: { isDefault: true } })
  t.equal(patched.json().data.isDefault, true)
  t.same(await defaults(), [first])
  await call({ method: 'PUT', url: `${base}/${second.ID}`, payload: { ...consumerModel, version: '2', isDefault: true } })
  t.same(await defaults(), [second.ID], 'a new version may take the default too')
  await call({ method: 'PATCH', url: `${base}/${second.ID}`, payload: { isDefault: false } })
  t.same(await defaults(), [], 'clearing leaves the configuration without a default')
  const concurrent = await Promise.all([first, second.ID].map((id) => call({ method: 'PATCH', url: `${base}/${id}`, payload: { isDefault: true } })))
  t.ok(concurrent.every((r) => r.statusCode === 200))
  t.equal((await defaults()).length, 1, 'concurrent claims still leave one default')
  const deactivated = await call({ method: 'PATCH', url: `${base}/${first}`, payload: { isActive: false } })
  t.equal(deactivated.json().data.isActive, false)
  t.equal((await call({ method: 'PATCH', url: `${base}/${first}`, payload: {} })).statusCode, 400, 'an empty change is refused')
})

t.test('listing: pagination bounds and filters', async (t) => {
  const { base, call, clock } = await scoringModelApi(t)
  for (const model of [
    { name: 'A', isDefault: false }, { name: 'B', category: 'microcredit', isDefault: false, isActive: false }, { name: 'C', isDefault: true },
  ]) {
    await call({ method: 'POST', url: base, payload: { ...consumerModel, ...model } })
    clock.advance(1000)
  }
  const names = async (query: string) => (await call({ method: 'GET', url: `${base}?${query}` })).json().data.map((m: { name: string }) => m.name)
  t.same(await names(''), ['A', 'B', 'C'])
  t.same(await names('isActive=false'), ['B'])
  t.same(await names('isActive=true'), ['A', 'C'])
  t.same(await names('isDefault=true'), ['C'])
  t.same(await names('category=microcredit'), ['B'])
  t.same(await names('limit=2&page=2'), ['C'])
  t.same(await names('limit=2&page=3'), [])
  const paged = await call({ method: 'GET', url: `${base}?limit=2&page=2` })
  t.same(paged.json().pagination, { current_page: 2, total_pages: 2, total_items: 3, items_per_page: 2 })
  t.equal((await call({ method: 'GET', url: `${base}?limit=100` })).statusCode, 200)
  for (const bad of ['page=0', 'limit=0', 'limit=101', 'isActive=perhaps', 'category=lottery', 'sort=name']) {
    t.equal((await call({ method: 'GET', url: `${base}?${bad}` })).statusCode, 400, `${bad} refused`)
  }
})

t.test('evaluation of a profile: hand-checked score, decision and breakdown', async (t) => {
  const { svc, base, call } = await scoringModelApi(t)
  const id = (await call({ method: 'POST', url: base, payload: consumerModel })).json().data.ID
  const ana = await createProfile(svc, svc.organizationId, { natural: {
    firstName: 'Ana', lastName: 'Gómez', documentType: 'CC', documentNumber: '1020', birthDate: '1990-04-12',
    monthlyIncome: '4500000.00', employmentType: 'formal',
  } })
  const response = await call({ method: 'POST', url: `${base}/${id}/evaluate`, payload: { profileId: ana } })
  t.equal(response.statusCode, 200)
  const result = response.json().data
  // age 35 → 80 × 0.3 = 24; income 4 500 000 → 60 × 0.5 = 30; formal → 100 × 0.2 = 20; base 74; bonus +5 → 79 ≥ 70
  t.match(result, { modelId: id, version: '1.0', profileId: ana, score: 79, baseScore: 74, totalPenalty: 0, totalBonus: 5, decision: 'approve' })
  t.same(result.variables.map((v: { field: string; value: unknown; score: number; contribution: number }) => [v.field, v.value, v.score, v.contribution]),
    [['age', 35, 80, 24], ['monthlyIncome', '4500000.00', 60, 30], ['employmentType', 'formal', 100, 20]])
  t.same(result.variables[0].matchedBy, { min: 26, max: 40 })
  t.same(result.penalties.map((p: { applied: boolean }) => p.applied), [false])
  t.same(result.bonuses.map((b: { applied: boolean }) => b.applied), [true])

  const bruno = await createProfile(svc, svc.organizationId, { natural: {
    firstName: 'Bruno', lastName: 'Martínez', documentType: 'CC', documentNumber: '7986', birthDate: '2006-01-30',
    monthlyIncome: '1300000.00', employmentType: 'informal',
  } })
  const young = (await call({ method: 'POST', url: `${base}/${id}/evaluate`, payload: { profileId: bruno } })).json().data
  // age 19 (turns 20 on 30 January) → 50 × 0.3 = 15; income → 20 × 0.5 = 10; informal → 40 × 0.2 = 8; base 33; penalty −15 → 18 < 50
  t.match(young, { score: 18, baseScore: 33, totalPenalty: 15, totalBonus: 0, decision: 'reject' })
  t.equal(young.variables[0].value, 19)
})

t.test('evaluation by fields: range edges, misses, missing fields and the thresholds', async (t) => {
  const { base, call } = await scoringModelApi(t)
  const id = (await call({ method: 'POST', url: base, payload: consumerModel })).json().data.ID
  const evaluate = async (fields: object) => (await call({ method: 'POST', url: `${base}/${id}/evaluate`, payload: { fields } })).json().data
  // 25 is the top of the first age range (50 × 0.3 = 15), 26 the bottom of the second (80 × 0.3 = 24)
  t.equal((await evaluate({ age: 25 })).baseScore, 15)
  t.equal((await evaluate({ age: 26 })).baseScore, 24)
  const tooYoung = await evaluate({ age: 17 })
  t.match(tooYoung.variables[0], { matched: false, score: 0, contribution: 0, reason: 'the value is in no range' })
  t.match(tooYoung, { totalPenalty: 15, score: -15, decision: 'reject' }, '17 < 21 still costs the penalty')
  // 1 999 999.99 is the top of the first income range; 1 999 999.995 falls between ranges
  t.equal((await evaluate({ monthlyIncome: '1999999.99' })).variables[1].score, 20)
  t.equal((await evaluate({ monthlyIncome: '1999999.995' })).variables[1].matched, false)
  const unemployed = await evaluate({ employmentType: 'unemployed' })
  t.match(unemployed.variables[2], { matched: false, reason: 'the value is in no category' })
  const nothing = await evaluate({})
  t.ok(nothing.variables.every((v: { reason: string }) => v.reason === 'the debtor has no value for this field'))
  t.match(nothing.penalties[0], { applied: false, error: /Unknown variable: age/ }, 'a condition over a missing field does not apply')
  // 41..65 → 100 × 0.3 = 30; ≥ 5 000 000 → 100 × 0.5 = 50; independent → 70 × 0.2 = 14; base 94, no bonus (not formal)
  t.match(await evaluate({ age: 41, monthlyIncome: '5000000', employmentType: 'independent' }), { score: 94, decision: 'approve' })
  // age 26 → 24, income 2 000 000 → 60 × 0.5 = 30, informal → 8: 62, between review (50) and approve (70)
  t.match(await evaluate({ age: 26, monthlyIncome: '2000000', employmentType: 'informal' }), { score: 62, decision: 'review' })
  // age 18 → 15, income 0 → 10, informal 8 = 33, penalty 15 → 18: reject
  t.match(await evaluate({ age: 18, monthlyIncome: '0', employmentType: 'informal' }), { score: 18, decision: 'reject' })
  const bad = await call({ method: 'POST', url: `${base}/${id}/evaluate`, payload: { fields: { shoeSize: 42 } } })
  t.equal(bad.statusCode, 400)
  const both = await call({ method: 'POST', url: `${base}/${id}/evaluate`, payload: { fields: {}, profileId: newId() } })
  t.equal(both.statusCode, 400)
  const neither = await call({ method: 'POST', url: `${base}/${id}/evaluate`, payload: {} })
  t.equal(neither.statusCode, 400)
  t.equal((await call({ method: 'POST', url: `${base}/${id}/evaluate`, payload: { profileId: newId() } })).statusCode, 404)
})

t.test('evaluation uses the version in force, and refuses profiles of other organizations', async (t) => {
  const { svc, base, clock, as } = await scoringModelApi(t)
  let token = svc.adminToken
  const call = (options: { method: 'GET' | 'POST' | 'PUT'; url: string; payload?: object }) => as(token, options)
  const later = async (to: string) => {
    clock.set(to)
    token = await svc.clientToken(svc.config.adminClientId ?? '', svc.config.adminClientSecret ?? '')
  }
  const id = (await call({ method: 'POST', url: base, payload: { ...consumerModel, validFrom: '2026-02-01T00:00:00-05:00' } })).json().data.ID
  const early = await call({ method: 'POST', url: `${base}/${id}/evaluate`, payload: { fields: { age: 30 } } })
  t.equal(early.statusCode, 409)
  t.equal(early.json().data.code, 'SCORING_MODEL_NOT_IN_FORCE')
  const named = await call({ method: 'POST', url: `${base}/${id}/evaluate`, payload: { fields: { age: 30 }, version: '1.0' } })
  t.equal(named.statusCode, 200, 'a named version can be tried before it takes effect')
  await later('2026-02-01T05:00:00.000Z')
  t.equal((await call({ method: 'POST', url: `${base}/${id}/evaluate`, payload: { fields: { age: 30 } } })).json().data.version, '1.0')
  await call({ method: 'PUT', url: `${base}/${id}`, payload: { ...consumerModel, version: '2.0', validFrom: '2026-03-01T00:00:00Z' } })
  t.equal((await call({ method: 'POST', url: `${base}/${id}/evaluate`, payload: { fields: { age: 30 } } })).json().data.version, '1.0', 'v2 not yet')
  await later('2026-03-01T00:00:00.000Z')
  t.equal((await call({ method: 'POST', url: `${base}/${id}/evaluate`, payload: { fields: { age: 30 } } })).json().data.version, '2.0')

  const other = await createOrganization({ ...svc, adminToken: token }, 'Other lender')
  const foreign = await createProfile(svc, other.id, { natural: { firstName: 'X', lastName: 'Y', documentType: 'CC', documentNumber: '1' } })
  t.equal((await call({ method: 'POST', url: `${base}/${id}/evaluate`, payload: { profileId: foreign } })).statusCode, 404)
  const withToken = { ...svc, adminToken: token }
  const reader = await memberToken(withToken, svc.organizationId, ['ReadScoringModel'])
  const forbidden = await as(reader, { method: 'POST', url: `${base}/${id}/evaluate`, payload: { fields: {} } })
  t.equal(forbidden.statusCode, 403, 'evaluating needs WriteAnalysis')
  const own = await createProfile(svc, svc.organizationId, { natural: { firstName: 'X', lastName: 'Y', documentType: 'CC', documentNumber: '2', birthDate: '1980-01-01' } })
  const blind = await as(await memberToken(withToken, svc.organizationId, ['WriteAnalysis']), { method: 'POST', url: `${base}/${id}/evaluate`, payload: { fields: { age: 30 } } })
  t.match([blind.statusCode, blind.json().data.permission], [403, 'ReadScoringModel'],
    'the answer shows the model (thresholds, matched ranges, conditions): reading it is needed too')
  const analyst = await memberToken(withToken, svc.organizationId, ['WriteAnalysis', 'ReadScoringModel'])
  t.equal((await as(analyst, { method: 'POST', url: `${base}/${id}/evaluate`, payload: { fields: { age: 30 } } })).statusCode, 200)
  const profileRefused = await as(analyst, { method: 'POST', url: `${base}/${id}/evaluate`, payload: { profileId: own } })
  t.match([profileRefused.statusCode, profileRefused.json().data.permission], [403, 'ReadProfile'], 'scoring a profile shows its data: ReadProfile too')
  const profileReader = await memberToken(withToken, svc.organizationId, ['WriteAnalysis', 'ReadScoringModel', 'ReadProfile'])
  const hidden = await as(profileReader, { method: 'POST', url: `${base}/${id}/evaluate`, payload: { profileId: own } })
  t.match([hidden.statusCode, hidden.json().data.code], [404, 'NOT_FOUND'], 'a profile the caller may not see (neither theirs nor shared) is not scored: 404 as GET /profiles/{id}')
  const readerId: unknown = JSON.parse(Buffer.from(profileReader.split('.')[1] ?? '', 'base64url').toString()).sub
  const theirs = await createProfile(svc, svc.organizationId, { natural: { firstName: 'X', lastName: 'Z', documentType: 'CC', documentNumber: '3', birthDate: '1980-01-01' } }, String(readerId))
  t.equal((await as(profileReader, { method: 'POST', url: `${base}/${id}/evaluate`, payload: { profileId: theirs } })).json().data.fields.age, 46, 'their own profile is scored')
  t.equal((await call({ method: 'POST', url: `${base}/${id}/evaluate`, payload: { profileId: own } })).json().data.fields.age, 46, 'an administrator scores any profile of the organization')
})

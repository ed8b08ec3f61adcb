import t from 'tap'
import { creditLineAggregate, creditLineRequestHash } from '../../src/commands/creditLine.js'
import type { CreditLineConfiguration } from '../../src/events/creditLine.js'
import { AppError } from '../../src/shared/errors.js'
import { scenario } from '../helpers/deciders.js'

const now = '2026-03-01T10:00:00.000Z'
const line = scenario(creditLineAggregate)
const configuration: CreditLineConfiguration = {
  name: 'Consumo', description: '', principalMin: '500000.00', principalMax: '20000000.00', principalDefault: '1000000.00', timeMin: 6, timeMax: 36,
  timeDefault: 12, rate: '24.5', rateType: 'FIXED', entityConfigID: 'cfg', currency: 'COP', jurisdictionCode: 'CO', jurisdiction: { code: 'CO', name: 'Colombia' },
  gatewayMethods: [], disbursementMethods: [], availableDays: 0, conditions: [], benefits: [], active: true, provider: 'manual',
  requireDistinctApprover: false, onOrderWebhooks: [], onDeliveredWebhooks: [],
}
const create = { type: 'CreateCreditLine' as const, creditLineId: 'l1', organizationId: 'o1', configuration, now }
const created = { type: 'CreditLineCreated' as const, data: { creditLineId: 'l1', organizationId: 'o1', configuration, createdAt: now } }

const fieldsRefused = (changes: Partial<CreditLineConfiguration>) => {
  try {
    creditLineAggregate.decide({ ...create, configuration: { ...configuration, ...changes } }, creditLineAggregate.initialState())
    return []
  } catch (error) {
    if (!(error instanceof AppError)) throw error
    const errors = error.details['errors']
    return Array.isArray(errors) ? errors.map((e: { field: string }) => e.field) : []
  }
}

t.test('a valid configuration creates the line', async (t) => {
  line.given().when(create).then(t, [created])
})

t.test('a line created under a Key records it; a second creation under a Key meets the line without a refusal, one without a Key is refused', async (t) => {
  const idempotency = { key: 'consumo-2026', requestHash: 'h1' }
  const keyed = { ...created, data: { ...created.data, idempotency } }
  line.given().when({ ...create, idempotency }).then(t, [keyed])
  line.given(keyed).when({ ...create, idempotency }).thenNothing(t, 'a concurrent duplicate lost the race: nothing decided')
  line.given(keyed).when(create).thenRefused(t, 'ALREADY_EXISTS')
  t.same(creditLineAggregate.evolve(creditLineAggregate.initialState(), keyed).idempotency, idempotency)
  t.same(creditLineAggregate.evolve(creditLineAggregate.initialState(), keyed).configuration, configuration, 'the Key is not part of the configuration')
})

t.test('a creation request\'s hash is the configuration as recorded: amounts and rate by value, field order aside', async (t) => {
  const hash = creditLineRequestHash(configuration)
  t.equal(creditLineRequestHash({ ...configuration, principalMin: '500000', rate: '24.50' }), hash)
  const reordered = Object.fromEntries(Object.entries(configuration).reverse()) as unknown as CreditLineConfiguration
  t.equal(creditLineRequestHash(reordered), hash)
  t.not(creditLineRequestHash({ ...configuration, rate: '24.6' }), hash)
  t.not(creditLineRequestHash({ ...configuration, onOrderWebhooks: ['w1'] }), hash)
  t.equal(creditLineRequestHash({ ...configuration, onOrderWebhooks: ['w1', 'w2'] }), creditLineRequestHash({ ...configuration, onOrderWebhooks: ['w2', 'w1', 'w2'] }),
    'webhook links as sets')
  t.not(creditLineRequestHash({ ...configuration, gatewayMethods: [['cash']] }), hash)
})

t.test('bounds: min ≤ default ≤ max for principal and term, positive amounts in the minor unit', async (t) => {
  t.same(fieldsRefused({ principalDefault: '400000.00' }), ['body.principalDefault'])
  t.same(fieldsRefused({ principalMax: '900000.00' }), ['body.principalMax'])
  t.same(fieldsRefused({ principalMin: '0' }), ['body.principalMin'])
  t.same(fieldsRefused({ principalMin: '500000.001' }), ['body.principalMin'])
  t.same(fieldsRefused({ timeDefault: 5 }), ['body.timeDefault'])
  t.same(fieldsRefused({ timeMax: 10 }), ['body.timeMax'])
  t.same(fieldsRefused({ timeMin: 0 }), ['body.timeMin'])
})

t.test('rate a non-negative decimal, currency ISO 4217, jurisdiction consistent', async (t) => {
  t.same(fieldsRefused({ rate: '-1' }), ['body.rate'])
  t.same(fieldsRefused({ rate: '1e3' }), ['body.rate'])
  t.same(fieldsRefused({ rate: '0' }), [], 'a zero rate is allowed')
  t.same(fieldsRefused({ currency: 'ABC' }), ['body.currency'])
  t.same(fieldsRefused({ jurisdiction: { code: 'PE', name: 'Perú' } }), ['body.jurisdiction.code'])
  t.same(fieldsRefused({ currency: 'JPY', principalMin: '500000', principalMax: '20000000', principalDefault: '1000000' }), [])
  t.same(fieldsRefused({ currency: 'JPY', principalMin: '500000.5', principalMax: '20000000', principalDefault: '1000000.25' }),
    ['body.principalMin', 'body.principalDefault'], 'JPY has no decimals')
})

t.test('an update carries only what changed and keeps the whole configuration valid', async (t) => {
  line.given(created).when({ type: 'UpdateCreditLine', changes: { rate: '24.5', active: false }, now })
    .then(t, [{ type: 'CreditLineUpdated', data: { creditLineId: 'l1', organizationId: 'o1', changes: { active: false }, updatedAt: now } }])
  line.given(created).when({ type: 'UpdateCreditLine', changes: { name: 'Consumo' }, now }).thenNothing(t)
  line.given(created).when({ type: 'UpdateCreditLine', changes: { principalMax: '600000.00' }, now }).thenRefused(t, 'VALIDATION_ERROR')
  line.given().when({ type: 'UpdateCreditLine', changes: { name: 'x' }, now }).thenRefused(t, 'NOT_FOUND')
  line.given(created).when(create).thenRefused(t, 'ALREADY_EXISTS')
})

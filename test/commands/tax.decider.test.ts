import t from 'tap'
import { taxAggregate } from '../../src/commands/tax.js'
import { taxApplications } from '../../src/commands/taxation.js'
import type { TaxCreated, TaxFields, TaxRate } from '../../src/events/tax.js'
import { scenario } from '../helpers/deciders.js'

const now = '2026-03-01T10:00:00.000Z'
const tax = scenario(taxAggregate)
const fields: TaxFields = { name: 'IVA', description: 'Impuesto al valor agregado', percentage: '19', type: 'VAT', appliesTo: ['FEE', 'PAYMENT'], minimumAmount: '0' }
const create = { type: 'CreateTax' as const, taxId: 't1', organizationId: 'o1', isActive: true, fields, now }
const created: TaxCreated = { type: 'TaxCreated', data: { taxId: 't1', organizationId: 'o1', ...fields, isActive: true, createdAt: now } }

t.test('a tax is created with its fields (and its Key, which a repeat under it meets without a refusal); percentages and minimums are checked', async (t) => {
  tax.given().when(create).then(t, [created])
  tax.given(created).when(create).thenRefused(t, 'ALREADY_EXISTS')
  const idempotency = { key: 'iva-2026', requestHash: 'h1' }
  tax.given().when({ ...create, idempotency }).then(t, [{ ...created, data: { ...created.data, idempotency } }])
  tax.given({ ...created, data: { ...created.data, idempotency } }).when({ ...create, idempotency }).thenNothing(t)
  t.same(taxAggregate.evolve(taxAggregate.initialState(), { ...created, data: { ...created.data, idempotency } }).fields, fields, 'the Key is not a field of the tax')
  for (const percentage of ['-0.0001', '100.0001', '1.23456']) {
    tax.given().when({ ...create, fields: { ...fields, percentage } }).thenRefused(t, 'VALIDATION_ERROR', `percentage ${percentage} refused`)
  }
  for (const percentage of ['0', '100', '0.414', '2.5']) {
    t.equal(taxAggregate.decide({ ...create, fields: { ...fields, percentage } }, taxAggregate.initialState()).length, 1, `percentage ${percentage} accepted`)
  }
  tax.given().when({ ...create, fields: { ...fields, appliesTo: [] } }).thenRefused(t, 'VALIDATION_ERROR')
  tax.given().when({ ...create, fields: { ...fields, appliesTo: ['FEE', 'FEE'] } }).thenRefused(t, 'VALIDATION_ERROR')
  tax.given().when({ ...create, fields: { ...fields, minimumAmount: '-1' } }).thenRefused(t, 'VALIDATION_ERROR')
  tax.given().when({ ...create, fields: { ...fields, name: '   ' } }).thenRefused(t, 'VALIDATION_ERROR')
})

t.test('an update carries only the fields whose value changes', async (t) => {
  tax.given(created).when({ type: 'UpdateTax', changes: { percentage: '19.0', name: 'IVA' }, now }).thenNothing(t, '19.0 is 19')
  tax.given(created).when({ type: 'UpdateTax', changes: { appliesTo: ['PAYMENT', 'FEE'] }, now }).thenNothing(t, 'applies_to in another order is the same set')
  tax.given(created).when({ type: 'UpdateTax', changes: { percentage: '5', appliesTo: ['FEE', 'PAYMENT'] }, now })
    .then(t, [{ type: 'TaxUpdated', data: { taxId: 't1', organizationId: 'o1', changes: { percentage: '5' }, updatedAt: now } }])
  tax.given(created).when({ type: 'UpdateTax', changes: { percentage: '101' }, now }).thenRefused(t, 'VALIDATION_ERROR')
  tax.given().when({ type: 'UpdateTax', changes: { name: 'x' }, now }).thenRefused(t, 'NOT_FOUND')
  tax.given(created).when({ type: 'UpdateTax', changes: { name: 'IVA general' }, isActive: false, now }).then(t, [
    { type: 'TaxUpdated', data: { taxId: 't1', organizationId: 'o1', changes: { name: 'IVA general' }, updatedAt: now } },
    { type: 'TaxDeactivated', data: { taxId: 't1', organizationId: 'o1', at: now } },
  ], 'fields and activity change in one decision')
  tax.given(created).when({ type: 'UpdateTax', changes: {}, isActive: true, now }).thenNothing(t)
})

t.test('activation and deactivation happen only when the state differs', async (t) => {
  const deactivated = { type: 'TaxDeactivated' as const, data: { taxId: 't1', organizationId: 'o1', at: now } }
  tax.given(created).when({ type: 'ActivateTax', now }).thenNothing(t)
  tax.given(created).when({ type: 'DeactivateTax', now }).then(t, [deactivated])
  tax.given(created, deactivated).when({ type: 'DeactivateTax', now }).thenNothing(t)
  tax.given(created, deactivated).when({ type: 'ActivateTax', now }).then(t, [{ type: 'TaxActivated', data: { taxId: 't1', organizationId: 'o1', at: now } }])
  tax.given().when({ type: 'ActivateTax', now }).thenRefused(t, 'NOT_FOUND')
})

t.test('the taxation rule: active taxes of the kind, from the minimum, rounded to the currency', async (t) => {
  const rate = (taxId: string, percentage: string, appliesTo: TaxRate['appliesTo'], minimumAmount = '0', isActive = true): TaxRate =>
    ({ taxId, organizationId: 'o1', name: taxId, type: 'VAT', isActive, percentage, appliesTo, minimumAmount })
  const taxes = [
    rate('vat', '19', ['PAYMENT', 'FEE']),
    rate('ica', '0.414', ['PAYMENT']),
    rate('retention', '2.5', ['PAYMENT'], '1000000'),
    rate('off', '10', ['PAYMENT'], '0', false),
    rate('credit', '1', ['CREDIT']),
  ]
  const applied = taxApplications(taxes, { appliesTo: 'PAYMENT', subjectId: 'order-1', base: '12345.67', currency: 'COP' }, now)
  // 12 345.67 × 19 % = 2 345.6773 → 2 345.68; × 0.414 % = 51.1110738 → 51.11; below the retention minimum; inactive and CREDIT taxes skipped
  t.same(applied.map((e) => [e.data.taxId, e.data.amount]), [['vat', '2345.68'], ['ica', '51.11']])
  t.match(applied[0]?.data, { appliesTo: 'PAYMENT', subjectId: 'order-1', base: '12345.67', percentage: '19', currency: 'COP', appliedAt: now })
  const atMinimum = taxApplications(taxes, { appliesTo: 'PAYMENT', subjectId: 'o', base: '1000000', currency: 'COP' }, now)
  t.same(atMinimum.map((e) => [e.data.taxId, e.data.amount]), [['vat', '190000.00'], ['ica', '4140.00'], ['retention', '25000.00']], 'the minimum is inclusive')
  t.same(taxApplications(taxes, { appliesTo: 'PAYMENT', subjectId: 'o', base: '0.01', currency: 'JPY' }, now), [], 'a tax that rounds to zero is not applied')
  t.same(taxApplications(taxes, { appliesTo: 'FEE', subjectId: 'f', base: '100', currency: 'JPY' }, now).map((e) => e.data.amount), ['19'])
})

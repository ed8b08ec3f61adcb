import t from 'tap'
import { createTestApp } from '../helpers/app.js'
import { exportFile } from '../helpers/exportFiles.js'
import { lending } from '../helpers/lending.js'

t.test('payments and disbursements carry the taxes recorded on each order\'s collection costs and each credit\'s principal', async (t) => {
  const svc = await createTestApp(t)
  const l = await lending(svc)
  const tax = async (payload: object) => {
    const created = await l.call('POST', '/v1/taxes', payload)
    if (created.statusCode !== 201) throw new Error(`tax: ${created.statusCode} ${created.body}`)
  }
  await tax({ name: 'IVA', type: 'VAT', percentage: 19, applies_to: ['FEE', 'PAYMENT'] })
  await tax({ name: 'ICA; "Bogotá"', type: 'OTHER', percentage: 0.414, applies_to: ['PAYMENT'] })
  await tax({ name: 'Retención', type: 'RETENTION', percentage: 11, applies_to: ['PAYMENT'] })
  await tax({ name: 'Timbre', type: 'OTHER', percentage: 0.5, applies_to: ['CREDIT'] })
  const credit = await l.disbursedCredit()
  const taxed = await l.call('POST', `/v1/payables/${credit.ID}/installments/zero/orders`, { Key: 'taxed', CollectionCosts: '12345.67' })
  const untaxed = await l.call('POST', `/v1/payables/${credit.ID}/installments/zero/orders`, { Key: 'untaxed' })
  t.equal(taxed.statusCode, 201, taxed.body)
  t.equal(untaxed.statusCode, 201, untaxed.body)
  await svc.runtime.settle(await svc.runtime.eventStore.headPosition())

  const payments = await exportFile(svc.runtime, svc.organizationId, { type: 'payments' })
  const byKey = (key: string) => payments.rows.find((row) => row['idempotency_key'] === key)
  // The worked example of docs/taxes.md: 2,345.68 and 51.11 on 12,345.67; the retention (1,358.02) is withheld, summed apart.
  t.match(byKey('taxed'), { collection_costs: '12345.67', taxes: '2396.79', withholdings: '1358.02' })
  t.same(JSON.parse(byKey('taxed')?.['tax_detail'] ?? ''), [
    { name: 'IVA', type: 'VAT', percentage: '19', base: '12345.67', amount: '2345.68' },
    { name: 'ICA; "Bogotá"', type: 'OTHER', percentage: '0.414', base: '12345.67', amount: '51.11' },
    { name: 'Retención', type: 'RETENTION', percentage: '11', base: '12345.67', amount: '1358.02' },
  ], 'each tax, its name as given')
  t.match(byKey('untaxed'), { taxes: '0.00', withholdings: '0.00', tax_detail: '[]' })
  t.same(payments.header.slice(-4), ['updated_at', 'taxes', 'withholdings', 'tax_detail'], 'added at the end: the columns before keep their places')

  const disbursements = await exportFile(svc.runtime, svc.organizationId, { type: 'disbursements' })
  const row = disbursements.rows.find((r) => r['credit_id'] === credit.ID)
  const detail: Array<{ name: string; base: string; amount: string }> = JSON.parse(row?.['tax_detail'] ?? '')
  t.match(detail, [{ name: 'Timbre', type: 'OTHER', percentage: '0.5', base: row?.['principal'] }])
  t.equal(row?.['taxes'], detail[0]?.amount, 'the one tax on the principal')
  t.not(row?.['taxes'], '0.00')
  t.equal(row?.['withholdings'], '0.00')
  t.same(disbursements.header.slice(-4), ['state', 'taxes', 'withholdings', 'tax_detail'])
})

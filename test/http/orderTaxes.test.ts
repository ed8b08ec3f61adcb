import t, { type Test } from 'tap'
import { creditsProjection } from '../../src/projections/credits.js'
import { paymentOrdersProjection } from '../../src/projections/paymentOrders.js'
import { taxesProjection } from '../../src/projections/taxes.js'
import { createTestApp } from '../helpers/app.js'
import { createOrganization, lending } from '../helpers/lending.js'

const setup = async (t: Test) => {
  const svc = await createTestApp(t, { config: { processesEnabled: false } })
  const lend = await lending(svc)
  const createTax = async (body: object, organizationId = svc.organizationId) => {
    const response = await svc.call({ method: 'POST', url: '/v1/taxes', token: svc.adminToken, organizationId, payload: { type: 'VAT', ...body } })
    if (response.statusCode !== 201) throw new Error(response.body)
    const id: string = response.json().data.id
    return id
  }
  const usage = async () => Object.fromEntries((await lend.call('GET', '/v1/taxes')).json().data
    .map((tax: { name: string; usage_count: number }) => [tax.name, tax.usage_count]))
  return { svc, lend, createTax, usage }
}

t.test('taxes on PAYMENT and FEE apply to an order\'s collection costs, show on the order and count in usage_count', async (t) => {
  const { svc, lend, createTax, usage } = await setup(t)
  const iva = await createTax({ name: 'IVA', percentage: 19, applies_to: ['FEE', 'PAYMENT'] })
  const ica = await createTax({ name: 'ICA', percentage: 0.414, type: 'OTHER', applies_to: ['PAYMENT'] })
  const fee = await createTax({ name: 'Comisión', percentage: 4, type: 'OTHER', applies_to: ['FEE'] })
  await createTax({ name: 'Retención', percentage: 2.5, type: 'RETENTION', applies_to: ['PAYMENT'], minimum_amount: 1000000 })
  await createTax({ name: 'Inactivo', percentage: 10, applies_to: ['PAYMENT'], is_active: false })
  const other = await createOrganization(svc, 'Other lender')
  await createTax({ name: 'Ajeno', percentage: 50, applies_to: ['PAYMENT', 'FEE'] }, other)

  const credit = await lend.disbursedCredit()
  const installment = credit.installments[0]?.ID
  const orders = `/v1/payables/${credit.ID}/installments/${installment}/orders`
  const created = await lend.call('POST', orders, { CollectionCosts: '12345.67', Key: 'k-1' })
  t.equal(created.statusCode, 201)
  const order = (await lend.call('GET', `${orders}/${created.json().order.ID}`)).json()
  // 12 345.67 × 19 % = 2 345.6773 → 2 345.68 (IVA names FEE and PAYMENT: once); × 0.414 % = 51.1110738 → 51.11; the FEE-only
  // commission × 4 % = 493.8268 → 493.83; below the retention's minimum; the inactive tax and another organization's do not apply.
  t.same(order.Taxes, [
    { TaxID: iva, Name: 'IVA', Type: 'VAT', AppliesTo: 'PAYMENT', Base: '12345.67', Percentage: '19', Amount: '2345.68', Currency: 'COP' },
    { TaxID: ica, Name: 'ICA', Type: 'OTHER', AppliesTo: 'PAYMENT', Base: '12345.67', Percentage: '0.414', Amount: '51.11', Currency: 'COP' },
    { TaxID: fee, Name: 'Comisión', Type: 'OTHER', AppliesTo: 'FEE', Base: '12345.67', Percentage: '4', Amount: '493.83', Currency: 'COP' },
  ])
  t.equal(order.CollectionCosts, '12345.67', 'the order keeps its collection costs as given')
  t.same(await usage(), { IVA: 1, ICA: 1, 'Comisión': 1, 'Retención': 0, Inactivo: 0 })

  const again = await lend.call('POST', orders, { CollectionCosts: '12345.67', Key: 'k-1' })
  t.equal(again.statusCode, 200, 'the same request again')
  t.same(await usage(), { IVA: 1, ICA: 1, 'Comisión': 1, 'Retención': 0, Inactivo: 0 }, 'is not taxed again')

  const plain = await lend.call('POST', orders, {})
  t.same((await lend.call('GET', `${orders}/${plain.json().order.ID}`)).json().Taxes, [], 'no collection costs, no taxes')
  const listed = (await lend.call('GET', orders)).json().data
  t.same(listed.map((o: { Taxes: unknown[] }) => o.Taxes.length), [3, 0], 'the list shows them too')

  const big = await lend.call('POST', `/v1/payables/${credit.ID}/installments/zero/orders`, { CollectionCosts: '1000000.00' })
  const bigOrder = (await lend.call('GET', `/v1/payables/${credit.ID}/installments/zero/orders/${big.json().order.ID}`)).json()
  t.same(bigOrder.Taxes.map((tax: { Name: string; Amount: string }) => [tax.Name, tax.Amount]), [
    ['IVA', '190000.00'], ['ICA', '4140.00'], ['Retención', '25000.00'], ['Comisión', '40000.00'],
  ], 'from the minimum amount on, inclusive')
})

t.test('taxes on CREDIT apply to the principal at disbursement and show on the credit', async (t) => {
  const { svc, lend, createTax, usage } = await setup(t)
  const stamp = await createTax({ name: 'Timbre', percentage: 0.5, type: 'OTHER', applies_to: ['CREDIT'] })
  await createTax({ name: 'IVA', percentage: 19, applies_to: ['FEE', 'PAYMENT'] })
  const credit = await lend.disbursedCredit()
  const shown = (await lend.call('GET', `/v1/credits/${credit.ID}`)).json().data.credit
  t.match(shown.taxes, [{ taxId: stamp, name: 'Timbre', type: 'OTHER', appliesTo: 'CREDIT', base: '1000000.00', percentage: '0.5', amount: '5000.00', currency: 'COP' }])
  t.equal(shown.taxes.length, 1)
  t.same(await usage(), { Timbre: 1, IVA: 0 })
  const requested = await lend.requestCredit({ creditLineId: await lend.createLine(), debtorId: shown.debtorId })
  t.same(requested['taxes'], [], 'nothing is taxed before the disbursement')

  const collections = [creditsProjection, paymentOrdersProjection, taxesProjection].flatMap((p) => p.collections)
  const snapshot = async () => Object.fromEntries(await Promise.all(collections.map(async (spec) =>
    [spec.name, await svc.runtime.readStore.collection(spec).find({}, { sort: { _id: 1 } })] as const)))
  await lend.call('POST', `/v1/payables/${credit.ID}/installments/zero/orders`, { CollectionCosts: '5000.00' })
  const live = await snapshot()
  await svc.runtime.projections.rebuild(['credits', 'paymentOrders', 'taxes'])
  t.same(await snapshot(), live, 'the read models rebuild from the log to the same taxes and counts')
})

import t from 'tap'
import { loadDemo } from '../../src/demo/index.js'
import { creditStates } from '../../src/shared/lending.js'
import { createTestApp } from '../helpers/app.js'

t.test('the demo loads credits in every state with schedules and payment orders, and loading it again changes nothing', async (t) => {
  const svc = await createTestApp(t, { config: { processesEnabled: false } })
  const state = await loadDemo(svc.runtime)
  const head = await svc.runtime.eventStore.headPosition()
  await loadDemo(svc.runtime)
  t.equal(await svc.runtime.eventStore.headPosition(), head, 'a second run appends nothing')
  await svc.runtime.settle(head)
  const call = (url: string) => svc.call({ method: 'GET', url, token: svc.adminToken, organizationId: state.organizationId })
  const listed = (await call('/v1/credits?limit=100')).json().data as Array<{ ID: string; state: string; installmentsCount: number; daysPastDue: number }>
  t.same([...new Set(listed.map((c) => c.state))].sort(), [...creditStates].sort(), 'every credit state is represented')
  t.ok(listed.every((c) => c.installmentsCount > 0), 'every credit has a schedule')
  t.ok(listed.some((c) => c.state === 'Desembolsado' && c.daysPastDue > 0), 'a disbursed credit is in arrears')
  const ana = (await call(`/v1/credits/${state.ids['credit.ana-desembolsado']}`)).json().data.credit
  t.equal(ana.installmentsPaid, 2)
  const third = ana.installments[2]
  t.equal(third.status, 'partial')
  const orders = (await call(`/v1/payables/${ana.ID}/installments/${third.ID}/orders`)).json().data as Array<{ Status: string }>
  t.same(orders.map((o) => o.Status), ['completed', 'failed', 'pending'])
  const paid = (await call(`/v1/credits/${state.ids['credit.caribe-pagado']}`)).json().data.credit
  t.match(paid, { state: 'Pagado', balances: { outstandingTotal: '0.00' } })
  const products = await svc.call({ method: 'GET', url: '/v1/products?currency=COP' })
  t.ok(products.json().data.products.length >= 2, 'active demo lines are on the public marketplace')
})

import t from 'tap'
import { loadDemo } from '../../src/demo/index.js'
import { creditLinesProjection } from '../../src/projections/creditLines.js'
import { creditsProjection } from '../../src/projections/credits.js'
import { paymentOrdersProjection } from '../../src/projections/paymentOrders.js'
import { createTestApp } from '../helpers/app.js'

const lendingCollections = [creditLinesProjection, creditsProjection, paymentOrdersProjection].flatMap((p) => p.collections)

t.test('rebuilding the lending read models from the log gives the same documents, twice', async (t) => {
  const svc = await createTestApp(t, { config: { processesEnabled: false } })
  await loadDemo(svc.runtime)
  const { readStore, projections } = svc.runtime
  await svc.runtime.settle(await svc.runtime.eventStore.headPosition())
  const snapshot = async () => Object.fromEntries(await Promise.all(lendingCollections.map(async (spec) =>
    [spec.name, await readStore.collection(spec).find({}, { sort: { _id: 1 } })] as const)))
  const live = await snapshot()
  t.equal((live['credit_installments'] ?? []).length, 96, 'installments are their own documents')
  t.equal((live['payment_orders'] ?? []).length, 9)
  await projections.rebuild(['creditLines', 'credits', 'paymentOrders'])
  t.same(await snapshot(), live, 'first rebuild')
  await projections.rebuild(['credits'])
  t.same(await snapshot(), live, 'second rebuild')
})

import t from 'tap'
import { loadDemo } from '../../src/demo/index.js'
import { creditMovementsProjection, type CreditMovementDoc } from '../../src/projections/creditMovements.js'
import { createTestApp } from '../helpers/app.js'

t.test('credit movements: one per disbursement and per payment applied, the same after rebuilding twice', async (t) => {
  const svc = await createTestApp(t, { config: { processesEnabled: false } })
  const demo = await loadDemo(svc.runtime)
  const { readStore, projections } = svc.runtime
  await svc.runtime.settle(await svc.runtime.eventStore.headPosition())
  const [spec] = creditMovementsProjection.collections
  if (spec === undefined) throw new Error('no collection')
  const snapshot = () => readStore.collection<CreditMovementDoc>(spec).find({}, { sort: { _id: 1 } })
  const live = await snapshot()
  t.equal(live.filter((m) => m.kind === 'disbursement').length, 3)
  t.equal(live.filter((m) => m.kind === 'payment').length, 6, 'the six approved orders')
  const payoff = live.find((m) => m.target === 'zero')
  t.match(payoff, { creditId: demo.ids['credit.caribe-pagado'], debtorId: demo.ids['profile.caribe-logistica'], settles: true, principal: '13849800.11' },
    'a payment names the debtor of its credit')
  t.ok(live.filter((m) => m.target !== 'zero').every((m) => !m.settles))
  t.match(live.find((m) => m.collectionCosts === '35000.00'), { kind: 'payment', amount: '5990892.24', interest: '1800000.00', principal: '4190892.24' })
  const ana = await svc.runtime.queries.creditMovements.ofCredit(demo.ids['credit.ana-desembolsado'] ?? '', '2026-12-31T00:00:00Z')
  t.same(ana.map((m) => m.kind), ['disbursement', 'payment', 'payment', 'payment'], 'a credit\'s movements, oldest first')
  await projections.rebuild(['creditMovements'])
  t.same(await snapshot(), live, 'first rebuild')
  await projections.rebuild(['creditMovements'])
  t.same(await snapshot(), live, 'second rebuild')
})

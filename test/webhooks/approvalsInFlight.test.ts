import t from 'tap'
import type { CreditState } from '../../src/events/creditState.js'
import type { PaymentOrderApproved } from '../../src/events/paymentOrder.js'
import { ApprovalsInFlight } from '../../src/webhooks/approvalsInFlight.js'

const approval = (creditId: string, orderId: string) => ({ creditId, orderId }) as PaymentOrderApproved['data']
const orders = (list: ReadonlyArray<{ orderId: string }>) => list.map((a) => a.orderId)
const noneApplied = () => false

t.test('an approval finds the earlier approvals of its credit not yet applied, in the order they were taken', async (t) => {
  const approvals = new ApprovalsInFlight()
  for (const [credit, order] of [['c1', 'o1'], ['c2', 'p1'], ['c1', 'o2'], ['c1', 'o3'], ['c1', 'o4']] as const) approvals.take(approval(credit, order))
  t.same(orders(approvals.pendingBefore('c1', 'o3', noneApplied)), ['o1', 'o2'])
  t.same(orders(approvals.pendingBefore('c1', 'o1', noneApplied)), [])
  t.same(orders(approvals.pendingBefore('c2', 'p1', noneApplied)), [], 'another credit\'s approvals are not its own')
  t.same(orders(approvals.pendingBefore('c1', 'unknown', noneApplied)), [], 'an order never taken has none')
  t.same(orders(approvals.pendingBefore('c1', 'o4', (id) => id === 'o1' || id === 'o2')), ['o3'], 'those the credit applied are not applied again')
  t.same(orders(approvals.pendingBefore('c1', 'o4', (id) => id === 'o2')), ['o3'], 'the applier goes in order: the walk stops at the last applied')
  approvals.take(approval('c1', 'o1'))
  t.same(orders(approvals.pendingBefore('c1', 'o3', noneApplied)), ['o1', 'o2'], 'taken again (a redelivered batch), it keeps its place')
})

t.test('only the last `capacity` approvals are kept, oldest out first', async (t) => {
  const approvals = new ApprovalsInFlight(3)
  for (let i = 1; i <= 10; i++) approvals.take(approval('c1', `o${i}`))
  t.same(orders(approvals.pendingBefore('c1', 'o10', noneApplied)), ['o8', 'o9'])
  t.same(orders(approvals.pendingBefore('c1', 'o7', noneApplied)), [], 'forgotten')
  approvals.take(approval('c2', 'p1'))
  approvals.take(approval('c2', 'p2'))
  t.same(orders(approvals.pendingBefore('c1', 'o10', noneApplied)), [], 'c1\'s older entries left as c2\'s came')
  t.same(orders(approvals.pendingBefore('c2', 'p2', noneApplied)), ['p1'])
  approvals.take(approval('c1', 'o8'))
  approvals.take(approval('c1', 'o11'))
  t.same(orders(approvals.pendingBefore('c1', 'o11', noneApplied)), ['o8'], 'a forgotten order taken again is taken anew')
})

t.test('an approval starts from the credit its predecessor rendered, on its document or one showing no later approval', async (t) => {
  const approvals = new ApprovalsInFlight(4)
  const base = { appliedOrders: [] } as unknown as CreditState
  const newer = { appliedOrders: ['o1'] } as unknown as CreditState
  const afterO1 = { appliedOrders: ['o1'] } as unknown as CreditState
  for (const order of ['o1', 'o2', 'o3']) approvals.take(approval('c1', order))
  const start = (orderId: string, doc: CreditState) => {
    const { from, pending } = approvals.renderFrom('c1', orderId, doc, (id) => doc.appliedOrders.includes(id))
    return { from, pending: orders(pending) }
  }
  approvals.rendered('c1', 'o1', base, afterO1)
  t.same(start('o2', base), { from: afterO1, pending: [] }, 'the next approval of the credit, on the same document')
  t.equal(start('o2', base).from, afterO1, 'the very rendering, not a copy')
  t.equal(start('o2', newer).from, afterO1, 'the read model caught up with the rendering (it applied o1): the rendering still holds')
  const afterO2 = { appliedOrders: ['o1', 'o2'] } as unknown as CreditState
  approvals.rendered('c1', 'o2', base, afterO2)
  t.equal(start('o3', newer).from, afterO2, 'the read model applied o1 of the o1, o2 the rendering holds: the rendering still holds')
  t.same(start('o3', afterO2), { from: afterO2, pending: [] }, 'the read model applied o2 itself: nothing pending either way')
  const unrelated = { appliedOrders: ['x9'] } as unknown as CreditState
  t.same(start('o3', unrelated), { from: unrelated, pending: ['o1', 'o2'] }, 'a document whose last applied order is not one taken: start again from it')
  approvals.rendered('c1', 'o1', base, afterO1)
  t.same(start('o2', afterO2), { from: afterO2, pending: [] }, 'the read model is past the rendering: start from the document')
  t.same(start('o3', base), { from: base, pending: ['o1', 'o2'] }, 'not the approval just before: o2 was not rendered yet')
  t.same(start('o1', base), { from: base, pending: [] }, 'an approval is not its own predecessor')
  for (const order of ['p1', 'p2', 'p3', 'p4']) approvals.take(approval('c2', order))
  approvals.rendered('c1', 'o3', base, afterO1)
  t.same(start('o4', base), { from: base, pending: [] }, 'a credit whose approvals were all forgotten keeps no rendering')
})

import t from 'tap'
import { ManualClock } from '../../src/shared/clock.js'
import { createTestApp } from '../helpers/app.js'
import { exportFile } from '../helpers/exportFiles.js'
import { lending } from '../helpers/lending.js'

t.test('payments: processing_time_ms is empty while an order is undecided, the milliseconds to its decision once decided', async (t) => {
  const clock = new ManualClock('2026-01-05T15:00:00.000Z')
  const svc = await createTestApp(t, { clock, config: { accessTokenTtl: 86_400 } })
  const l = await lending(svc)
  const credit = await l.disbursedCredit()
  const [first, second, third] = credit.installments
  const orders = (installmentId: string) => `/v1/payables/${credit.ID}/installments/${installmentId}/orders`
  const create = async (installmentId: string) => (await l.call('POST', orders(installmentId), { Key: `k-${installmentId}` })).json().order.ID
  const approved = await create(first!.ID)
  const failed = await create(second!.ID)
  const pending = await create(third!.ID)
  clock.advance(1500)
  t.equal((await l.call('POST', `${orders(first!.ID)}/${approved}/approve`)).statusCode, 200)
  clock.advance(500)
  t.equal((await l.call('POST', `${orders(second!.ID)}/${failed}/reject`, { reason: 'cheque devuelto' })).statusCode, 200)
  await svc.runtime.settle(await svc.runtime.eventStore.headPosition())

  const { rows } = await exportFile(svc.runtime, svc.organizationId, { type: 'payments' })
  const time = (orderId: string) => rows.find((r) => r['order_id'] === orderId)?.['processing_time_ms']
  t.same([time(approved), time(failed), time(pending)], ['1500', '2000', ''])
})

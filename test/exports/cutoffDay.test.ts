import t from 'tap'
import { ManualClock } from '../../src/shared/clock.js'
import { createTestApp } from '../helpers/app.js'
import { exportFile } from '../helpers/exportFiles.js'
import { createDebtor, lending } from '../helpers/lending.js'

t.test('a cut-off at midnight counts arrears to the day it names, as one a millisecond earlier does', async (t) => {
  const clock = new ManualClock('2026-01-28T10:00:00.000Z')
  const svc = await createTestApp(t, { clock, config: { accessTokenTtl: 86_400 } })
  const l = await lending(svc)
  const creditLineId = await l.createLine({ timeMin: 1 })
  const debtorId = await createDebtor(svc.runtime, svc.organizationId)
  const requested = await l.requestCredit({ creditLineId, debtorId, firstDueDate: '2026-02-28', term: 3 })
  t.equal((await l.call('POST', `/v1/credits/${requested.ID}/approve`, {})).statusCode, 200)
  const disbursed = await l.call('POST', `/v1/credits/${requested.ID}/disburse`, { method: 'bank_transfer' })
  t.equal(disbursed.json().data.credit.installments[0].dueDate, '2026-02-28')
  clock.set('2026-03-05T10:00:00.000Z')

  const cutAt = async (before: string) => {
    const cutoff = await exportFile(svc.runtime, svc.organizationId, { type: 'receivables-cutoff', before })
    const bureau = await exportFile(svc.runtime, svc.organizationId, { type: 'credit-bureau-a', after: '2026-02-01T00:00:00Z', before })
    const installments = await exportFile(svc.runtime, svc.organizationId, { type: 'installments-cutoff', before })
    const { cutoff_date, days_past_due, installments_overdue, overdue_total } = cutoff.rows[0] ?? {}
    return { cutoff_date, days_past_due, installments_overdue, overdue_total, DIAS_MORA: bureau.rows[0]?.['DIAS_MORA'], first_installment_days: installments.rows[0]?.['days_past_due'] }
  }
  const lastMillisecond = await cutAt('2026-02-28T23:59:59.999Z')
  t.same(lastMillisecond, { cutoff_date: '2026-02-28', days_past_due: '0', installments_overdue: '0', overdue_total: '0.00', DIAS_MORA: '0', first_installment_days: '0' }, 'due on the cut day: not late yet')
  t.same(await cutAt('2026-03-01T00:00:00Z'), lastMillisecond, 'midnight covers the same day and the same payments')
  const nextDay = await cutAt('2026-03-02T00:00:00Z')
  t.match(nextDay, { cutoff_date: '2026-03-01', days_past_due: '1', installments_overdue: '1', DIAS_MORA: '1', first_installment_days: '1' })
})

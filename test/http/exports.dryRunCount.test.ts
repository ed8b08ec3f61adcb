import t from 'tap'
import type { InstallmentDoc } from '../../src/projections/credits.js'
import type { ReadDocument } from '../../src/projections/readStore.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { postExport } from '../helpers/exports.js'

const ROWS = 2500

/** Installment documents put straight into the read store: enough rows for a count to take several thousand-row steps. */
const withInstallments = async (svc: TestApp): Promise<void> => {
  const docs = svc.runtime.readStore.collection<InstallmentDoc & ReadDocument>({ name: 'credit_installments' })
  for (let i = 0; i < ROWS; i++) {
    const id = `00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`
    await docs.put({
      _id: id, installmentId: id, organizationId: svc.organizationId, creditId: `c${i % 100}`, creditLineId: 'l', debtorId: 'd', number: 1,
      dueDate: '2026-01-01', principal: '1.00', interest: '0.00', amount: '1.00', paidPrincipal: '0', paidInterest: '0', paidAt: null, currency: 'COP',
      creditState: 'Desembolsado', paidAmount: '0.00', outstanding: '1.00', status: 'pending', disbursedAt: null,
    })
  }
}

t.test('a reports dry run gives other work the event loop while it counts', async (t) => {
  const svc = await createTestApp(t)
  await withInstallments(svc)
  let turns = 0
  let timer: NodeJS.Immediate
  const turn = () => {
    turns += 1
    timer = setImmediate(turn)
  }
  timer = setImmediate(turn)
  const counted = await postExport(svc, { type: 'reports', columns: ['installments.id'] }, { url: '/v1/exports?dryRun=true' })
  clearImmediate(timer)
  t.same(counted.json(), { itemCount: ROWS, overflowed: false, softWarn: false })
  t.ok(turns > ROWS / 1000, `the loop turned ${turns} times: at least once per thousand rows`)
})

t.test('a reports count stops once its signal aborts (the caller went away)', async (t) => {
  const svc = await createTestApp(t)
  await withInstallments(svc)
  const reports = svc.runtime.exports.dataSets.get('reports')
  if (reports?.count == null) throw new Error('the reports data set counts')
  const context = { organizationId: svc.organizationId, queries: svc.runtime.queries, requestedAt: new Date().toISOString() }
  t.equal(await reports.count({ type: 'reports', columns: ['installments.id'] }, { ...context, signal: new AbortController().signal }), ROWS)
  await t.rejects(reports.count({ type: 'reports', columns: ['installments.id'] }, { ...context, signal: AbortSignal.abort() }), { name: 'AbortError' })
})

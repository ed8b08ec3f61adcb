import { parse } from 'csv-parse/sync'
import t from 'tap'
import { blobPeriod } from '../../src/exports/blobs.js'
import { csvStream } from '../../src/exports/csv.js'
import { ManualClock } from '../../src/shared/clock.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { exportFile, total } from '../helpers/exportFiles.js'
import { lending, nextEvent, type Lending } from '../helpers/lending.js'

const ordersOf = (creditId: string) => `/v1/payables/${creditId}/installments/zero/orders`

/** Approves a whole-balance order and waits until its application is projected. */
const approve = async (svc: TestApp, l: Lending, creditId: string, orderId: string): Promise<void> => {
  const applied = nextEvent(svc.runtime, 'CreditPaymentApplied', (e) => e.type === 'CreditPaymentApplied' && e.data.orderId === orderId)
  const approved = await l.call('POST', `${ordersOf(creditId)}/${orderId}/approve`)
  if (approved.statusCode !== 200) throw new Error(`approve: ${approved.statusCode} ${approved.body}`)
  await applied
  await svc.runtime.settle(await svc.runtime.eventStore.headPosition())
}

const monthlyBlob = async (svc: TestApp, producedAt: string): Promise<Array<Record<string, string>>> => {
  const producer = svc.runtime.exports.blobs.get('monthly')
  if (producer === undefined) throw new Error('no monthly producer')
  const opened = producer.open({
    organizationId: svc.organizationId, queries: svc.runtime.queries, period: blobPeriod('monthly', new Date(producedAt)), signal: new AbortController().signal,
  })
  let text = ''
  for await (const chunk of csvStream(opened.header, opened.batches)) text += String(chunk)
  const [header = [], ...rows]: string[][] = parse(text)
  return rows.map((cells) => Object.fromEntries(header.map((name, i) => [name, cells[i] ?? ''])))
}

/**
 * A credit paid off on 2026-01-20 by a zero order, and a second zero order (`late`'s body) approved on 2026-02-10: both
 * dated the disbursement day, so the payoff is the principal alone (no interest accrued yet). The clock ends on 2026-03-01.
 */
const paidOffThenPaidAgain = async (t: Parameters<typeof createTestApp>[0], late: Record<string, string>) => {
  const clock = new ManualClock('2026-01-05T15:00:00.000Z')
  const svc = await createTestApp(t, { clock, config: { accessTokenTtl: 90 * 86_400 } })
  const l = await lending(svc)
  const credit = await l.disbursedCredit()
  const payoff = (await l.call('POST', ordersOf(credit.ID), { Key: 'z1' })).json().order.ID
  const duplicate = (await l.call('POST', ordersOf(credit.ID), { Key: 'z2', ...late })).json().order.ID
  clock.set('2026-01-20T10:00:00.000Z')
  await approve(svc, l, credit.ID, payoff)
  clock.set('2026-02-10T10:00:00.000Z')
  await approve(svc, l, credit.ID, duplicate)
  clock.set('2026-03-01T00:25:00.000Z')
  return { svc, credit }
}

t.test('a credit paid off before the period with money received in it is in the subledgers and the monthly close, so 2595 and 4195 reconcile with ledger-a', async (t) => {
  const { svc, credit } = await paidOffThenPaidAgain(t, { CollectionCosts: '2500.00' })

  const february = { after: '2026-02-01T00:00:00Z', before: '2026-03-01T00:00:00Z' }
  const file = (type: string) => exportFile(svc.runtime, svc.organizationId, { type, ...february })
  const journal = (await file('ledger-a')).rows
  const credited = (code: string) => total(journal.filter((r) => r['account_code'] === code), 'credit')
  t.same([credited('2595'), credited('4195')], ['1000000.00', '2500.00'], 'the duplicate is in the journal')

  const individual = await file('ledger-a-individual')
  t.match(individual.rows, [{
    credit_id: credit.ID, opening_balance: '0.00', disbursed: '0.00', principal_collected: '0.00', unapplied: '1000000.00', collection_costs: '2500.00',
    closing_balance: '0.00', movements: '1',
  }])
  t.equal(individual.rows.length, 1)
  t.equal(individual.count, 1, 'the count ahead agrees')
  const clients = await file('ledger-a-clients')
  t.equal(clients.rows.length, 1)
  t.match(clients.rows, [{ credits: '1', unapplied: '1000000.00', collection_costs: '2500.00', movements: '1' }])
  t.same([total(individual.rows, 'unapplied'), total(individual.rows, 'collection_costs')], [credited('2595'), credited('4195')])

  const close = await monthlyBlob(svc, '2026-03-01T00:25:00.000Z')
  t.equal(close.length, 1)
  t.match(close, [{ month: '2026-02', credit_id: credit.ID, unapplied: '1000000.00', collection_costs: '2500.00', state_at_close: 'Pagado', balance: '0.00' }])

  const march = await exportFile(svc.runtime, svc.organizationId, { type: 'ledger-a-individual', after: '2026-03-01T00:00:00Z' })
  t.same([march.rows, march.count], [[], 0], 'a paid-off credit with nothing moving in the period stays out')
  t.same((await file('debtors-credit-active')).rows, [], 'the active-debtor file still lists only credits owed something in the period')
  t.match((await file('debtors-credit-active-invoicing-a')).rows, [{ CREDITOS_ACTIVOS: '0', INTERESES: '0.00', GASTOS_COBRANZA: '2500.00', TOTAL: '2500.00' }],
    'the collection costs received after the payoff are invoiced in their period')
})

t.test('money received after a payoff with nothing to invoice (no collection costs) leaves its debtor out of the invoicing file', async (t) => {
  const { svc, credit } = await paidOffThenPaidAgain(t, {})
  const february = { after: '2026-02-01T00:00:00Z', before: '2026-03-01T00:00:00Z' }
  t.match((await exportFile(svc.runtime, svc.organizationId, { type: 'ledger-a-individual', ...february })).rows, [{ credit_id: credit.ID, unapplied: '1000000.00' }],
    'the subledger has the money, owed back to the debtor')
  t.same((await exportFile(svc.runtime, svc.organizationId, { type: 'debtors-credit-active-invoicing-a', ...february })).rows, [], 'nothing of it is income to invoice')
})

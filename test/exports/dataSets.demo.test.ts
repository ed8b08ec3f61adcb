import t from 'tap'
import { creditAggregate } from '../../src/commands/credit.js'
import { disburseCredit, requestCredit } from '../../src/commands/lending.js'
import { loadDemo, type DemoState } from '../../src/demo/index.js'
import { ManualClock } from '../../src/shared/clock.js'
import { money } from '../../src/shared/money.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { exportFile, total } from '../helpers/exportFiles.js'

/**
 * Every data set over the demo: credits in every state, orders in every
 * status, natural and legal debtors. Expected figures come from the credit
 * API (the same read models seen another way) and from the demo's own story.
 */

const LOADED = '2026-03-10T12:00:00.000Z'
/** An hour after the demo was loaded: the export's "now". */
const NOW = '2026-03-10T13:00:00.000Z'

interface ApiCredit {
  ID: string
  state: string
  principal: string
  debtorId: string
  disbursedAt: string | null
  daysPastDue: number
  installmentsPaid: number
  balances: { outstandingPrincipal: string; outstandingInterest: string; outstandingTotal: string; paidTotal: string }
  installments: Array<{ ID: string; number: number; dueDate: string; paidAmount: string; outstanding: string; status: string; daysPastDue: number }>
}

let svc: TestApp
let demo: DemoState
let clock: ManualClock

t.before(async () => {
  clock = new ManualClock(LOADED)
  svc = await createTestApp(t, { clock, config: { processesEnabled: false } })
  demo = await loadDemo(svc.runtime)
  await svc.runtime.settle(await svc.runtime.eventStore.headPosition())
  clock.set(NOW)
})

const id = (key: string) => demo.ids[key] ?? ''
const file = (body: object) => exportFile(svc.runtime, demo.organizationId, body)
const credit = async (creditId: string): Promise<ApiCredit> =>
  (await svc.call({ method: 'GET', url: `/v1/credits/${creditId}`, token: svc.adminToken, organizationId: demo.organizationId })).json().data.credit
const allCredits = async (): Promise<ApiCredit[]> => {
  const listed = (await svc.call({ method: 'GET', url: '/v1/credits?limit=100', token: svc.adminToken, organizationId: demo.organizationId })).json().data
  return Promise.all(listed.map((c: { ID: string }) => credit(c.ID)))
}
const by = (rows: Array<Record<string, string>>, column: string, value: string) => rows.find((r) => r[column] === value)

t.test('receivables: every credit requested in the period, with the balances the credit API shows', async (t) => {
  const { header, rows, count } = await file({ type: 'receivables' })
  t.same(header.slice(0, 8), ['credit_id', 'credit_line_id', 'credit_line_name', 'debtor_id', 'debtor_type', 'portfolio', 'state', 'currency'])
  const credits = await allCredits()
  t.equal(rows.length, credits.length)
  t.equal(count, rows.length, 'the count ahead is the row count')
  t.same(new Set(rows.map((r) => r['state'])), new Set(['Solicitado', 'Aprobado', 'Rechazado', 'Anulado', 'Desembolsado', 'Pagado']))
  for (const c of credits) {
    const row = by(rows, 'credit_id', c.ID)
    t.match(row, {
      state: c.state, principal: c.principal, outstanding_principal: c.balances.outstandingPrincipal, outstanding_total: c.balances.outstandingTotal,
      paid_total: c.balances.paidTotal, installments_paid: String(c.installmentsPaid), days_past_due: String(c.daysPastDue),
    }, c.ID)
  }
  t.match(by(rows, 'credit_id', id('credit.ana-desembolsado')), { days_past_due: '33', risk_category: 'B', portfolio: 'consumo', unapplied: '0.00' })
  t.match(by(rows, 'credit_id', id('credit.andes-desembolsado')), { risk_category: 'A', portfolio: 'comercial', debtor_type: 'legal' })
  t.match(by(rows, 'credit_id', id('credit.bruno-rechazado')), { rejection_reason: 'Capacidad de pago insuficiente', risk_category: '' })
  for (const key of ['credit.ana-solicitado', 'credit.carmen-aprobado', 'credit.bruno-rechazado', 'credit.carmen-anulado']) {
    t.match(by(rows, 'credit_id', id(key)), { outstanding_principal: '0.00', outstanding_interest: '0.00', outstanding_total: '0.00', next_due_date: '' },
      `${key}: nothing lent, nothing owed`)
  }
  const recent = await file({ type: 'receivables', after: '2026-02-01T00:00:00Z', before: '2026-03-08T00:00:00Z' })
  t.same(recent.rows.map((r) => r['credit_id']).sort(), [id('credit.bruno-rechazado'), id('credit.carmen-aprobado'), id('credit.carmen-anulado')].sort(),
    'after is inclusive, before exclusive, on the request time')
})

t.test('installments: installments of disbursed credits due in the period, as the installments API shows them', async (t) => {
  const period = { after: '2025-12-01T00:00:00Z', before: '2026-04-01T00:00:00Z' }
  const { header, rows, count } = await file({ type: 'installments', ...period })
  t.same(header, ['installment_id', 'credit_id', 'credit_line_id', 'debtor_id', 'credit_state', 'number', 'due_date', 'currency', 'principal', 'interest',
    'amount', 'paid_principal', 'paid_interest', 'paid_amount', 'outstanding', 'status', 'paid_at', 'days_past_due', 'waived_interest'])
  const expected = (await allCredits()).filter((c) => c.disbursedAt !== null)
    .flatMap((c) => c.installments.filter((i) => i.dueDate >= '2025-12-01' && i.dueDate < '2026-04-01'))
  t.equal(rows.length, expected.length)
  t.equal(count, rows.length)
  for (const i of expected) {
    t.match(by(rows, 'installment_id', i.ID), { due_date: i.dueDate, paid_amount: i.paidAmount, outstanding: i.outstanding, status: i.status,
      days_past_due: String(i.daysPastDue) }, i.ID)
  }
  t.match(rows.find((r) => r['credit_id'] === id('credit.ana-desembolsado') && r['number'] === '3'),
    { status: 'partial', paid_amount: '50000.00', paid_interest: '46893.04', paid_principal: '3106.96', days_past_due: '33' })
  t.notOk(rows.some((r) => r['credit_id'] === id('credit.carmen-aprobado')), 'undisbursed credits have no collectible installments')
})

t.test('credit bureau formats A and B: obligations active in the period, as they stood at its end', async (t) => {
  const a = await file({ type: 'credit-bureau-a' })
  t.same(a.header.slice(0, 12), ['TIPO_IDENTIFICACION', 'NUMERO_IDENTIFICACION', 'NOMBRE_COMPLETO', 'NUMERO_OBLIGACION', 'FECHA_CORTE', 'FECHA_APERTURA',
    'FECHA_VENCIMIENTO', 'CALIDAD_DEUDOR', 'TIPO_CARTERA', 'PERIODICIDAD', 'NOVEDAD', 'VALOR_INICIAL'])
  t.equal(a.rows.length, 3, 'the two disbursed credits and the one paid off')
  t.equal(a.count, 3)
  t.match(by(a.rows, 'NUMERO_OBLIGACION', id('credit.ana-desembolsado')), {
    TIPO_IDENTIFICACION: '1', NUMERO_IDENTIFICACION: '1020304050', NOMBRE_COMPLETO: 'Ana Gómez Restrepo', FECHA_CORTE: '2026-03-10', NOVEDAD: '06',
    DIAS_MORA: '33', CALIFICACION: 'B', VALOR_INICIAL: '3000000', SALDO_DEUDA: '2583990', SALDO_MORA: '511898', CUOTAS_CANCELADAS: '2',
    CUOTAS_EN_MORA: '2', FECHA_ULTIMO_PAGO: '2026-02-08', TELEFONO: '573001234567', MONEDA: '1',
  })
  t.match(by(a.rows, 'NUMERO_OBLIGACION', id('credit.caribe-pagado')), { TIPO_IDENTIFICACION: '2', NOVEDAD: '05', SALDO_DEUDA: '0', TIPO_CARTERA: 'COMERCIAL' })
  const b = await file({ type: 'credit-bureau-b' })
  t.equal(b.rows.length, 3)
  t.match(by(b.rows, 'NUMERO_OBLIGACION', id('credit.ana-desembolsado')), {
    TIPO_PERSONA: '1', TIPO_DOCUMENTO: '01', PRIMER_APELLIDO: 'Gómez', SEGUNDO_APELLIDO: 'Restrepo', NOMBRES: 'Ana', ESTADO_OBLIGACION: '02',
    EDAD_MORA: '02', SALDO_CAPITAL: '2541410.61', SALDO_INTERESES: '42579.62', VALOR_MORA: '511898.00',
  })
  t.match(by(b.rows, 'NUMERO_OBLIGACION', id('credit.andes-desembolsado')), {
    TIPO_PERSONA: '2', TIPO_DOCUMENTO: '02', NUMERO_DOCUMENTO: '900123456', DIGITO_VERIFICACION: '8', RAZON_SOCIAL: 'Andes Coffee Export S.A.S.',
    ESTADO_OBLIGACION: '01', EDAD_MORA: '00',
  })
  const february = await file({ type: 'credit-bureau-b', before: '2026-02-01T00:00:00Z' })
  t.match(by(february.rows, 'NUMERO_OBLIGACION', id('credit.caribe-pagado')), { FECHA_CORTE: '2026-01-31', ESTADO_OBLIGACION: '01', SALDO_CAPITAL: '13849800.11', CUOTAS_PAGADAS: '1' },
    'before its payoff the paid credit was current')
  const march = await file({ type: 'credit-bureau-a', after: '2026-03-01T00:00:00Z' })
  t.notOk(by(march.rows, 'NUMERO_OBLIGACION', id('credit.caribe-pagado')), 'a credit paid off before the period is not reported')
})

t.test('payments: orders created in the period, narrowed by every filter', async (t) => {
  const all = await file({ type: 'payments' })
  t.same(all.header.slice(0, 10), ['order_id', 'created_at', 'credit_id', 'credit_line_id', 'installment_id', 'installment_number', 'type', 'provider', 'method', 'status'])
  t.equal(all.rows.length, 9)
  t.same(new Set(all.rows.map((r) => r['status'])), new Set(['completed', 'failed', 'pending']))
  t.match(all.rows.find((r) => r['idempotency_key'] === 'andes-cuota-1'), { collection_costs: '35000.00', total_charged: '6025892.24', applied_amount: '5990892.24' })
  // The demo configures its taxes after its orders: none was taxed (test/exports/taxColumns.test.ts has taxed ones).
  t.ok(all.rows.every((r) => r['taxes'] === '0.00' && r['tax_detail'] === '[]'), 'no taxes recorded on the demo\'s orders')
  t.match(all.rows.find((r) => r['idempotency_key'] === 'ana-cuota-3-rechazada'), { status: 'failed', error_message: 'Soporte de pago ilegible', applied_amount: '' })
  const cases: Array<[object, number]> = [
    [{ status: ['completed'] }, 6],
    [{ provider: ['sandbox'] }, 1],
    [{ orderType: ['payment'] }, 9],
    [{ debtorId: id('profile.ana') }, 5],
    [{ creditId: id('credit.caribe-pagado') }, 2],
    [{ creditLineId: [id('creditLine.capital-trabajo')], status: ['pending'] }, 1],
    [{ minAmount: '100000', maxAmount: '300000.00' }, 3],
  ]
  for (const [filters, expected] of cases) {
    const narrowed = await file({ type: 'payments', filters })
    t.equal(narrowed.rows.length, expected, JSON.stringify(filters))
    t.equal(narrowed.count, expected, `count of ${JSON.stringify(filters)}`)
  }
  t.equal((await file({ type: 'payments', after: '2026-03-01T00:00:00Z' })).rows.length, 3, 'the period applies to the creation time')
})

t.test('ledger A: balanced journal entries; the portfolio account carries what debtors owe', async (t) => {
  const { header, rows } = await file({ type: 'ledger-a' })
  t.same(header, ['entry_id', 'entry_date', 'entry_type', 'line', 'account_code', 'account_name', 'debit', 'credit', 'currency', 'credit_id', 'debtor_id',
    'credit_line_id', 'reference', 'description', 'recorded_at'])
  const entries = new Set(rows.map((r) => r['entry_id'] ?? ''))
  t.equal(entries.size, 9, 'three disbursements and six payments applied')
  for (const entry of entries) {
    const lines = rows.filter((r) => r['entry_id'] === entry)
    t.equal(total(lines, 'debit'), total(lines, 'credit'), `${entry} balances`)
  }
  const portfolio = rows.filter((r) => r['account_code'] === '1405')
  const disbursed = (await allCredits()).filter((c) => c.disbursedAt !== null)
  const owed = total(disbursed.map((c) => ({ owed: c.balances.outstandingPrincipal })), 'owed')
  t.equal(money(total(portfolio, 'debit')).minus(total(portfolio, 'credit')).toFixed(2), owed, 'debits minus credits of 1405 = principal owed on disbursed credits')
  t.match(rows.find((r) => r['account_code'] === '4195'), { credit: '35000.00', credit_id: id('credit.andes-desembolsado') }, 'collection costs are income')
  t.equal(total(rows.filter((r) => r['account_code'] === '4102'), 'credit'), '2386055.61',
    'interest collected: 153308.61 + 1800000.00 + 432747.00 (caribe: 225000.00 with its first installment, 207747.00 accrued by its payoff; the rest forgiven)')
  const january = await file({ type: 'ledger-a', after: '2026-01-01T00:00:00Z', before: '2026-02-01T00:00:00Z' })
  t.same([...new Set(january.rows.map((r) => r['entry_date']))].sort(), ['2026-01-05', '2026-01-29'])
})

t.test('ledger A by credit and by debtor: opening and closing principal, and what moved in between', async (t) => {
  const period = { after: '2026-02-01T00:00:00Z' }
  const individual = await file({ type: 'ledger-a-individual', ...period })
  t.same(individual.header, ['credit_id', 'credit_line_id', 'debtor_id', 'debtor_type', 'portfolio', 'currency', 'opening_balance', 'disbursed',
    'principal_collected', 'interest_collected', 'collection_costs', 'unapplied', 'closing_balance', 'movements', 'last_movement_at'])
  t.equal(individual.rows.length, 3)
  t.equal(individual.count, 3)
  const cutoff = await file({ type: 'receivables-cutoff', before: '2026-02-01T00:00:00Z' })
  for (const row of individual.rows) {
    t.equal(row['opening_balance'], by(cutoff.rows, 'credit_id', row['credit_id'] ?? '')?.['outstanding_principal'], 'opening = the cut-off at the start')
    t.equal(row['closing_balance'], (await credit(row['credit_id'] ?? '')).balances.outstandingPrincipal, 'closing = what is owed now')
  }
  t.match(by(individual.rows, 'credit_id', id('credit.caribe-pagado')), { opening_balance: '13849800.11', principal_collected: '13849800.11', closing_balance: '0.00', movements: '1' })
  const clients = await file({ type: 'ledger-a-clients', ...period })
  t.same(clients.header.slice(0, 4), ['debtor_id', 'debtor_type', 'credits', 'currency'])
  t.equal(clients.rows.length, 3, 'one line per debtor and currency')
  for (const row of clients.rows) {
    const theirs = individual.rows.filter((r) => r['debtor_id'] === row['debtor_id'])
    for (const column of ['opening_balance', 'principal_collected', 'interest_collected', 'closing_balance']) t.equal(row[column], total(theirs, column), column)
  }
})

t.test('disbursements: credits disbursed in the period, how and on what terms', async (t) => {
  const { header, rows, count } = await file({ type: 'disbursements' })
  t.same(header.slice(0, 9), ['credit_id', 'credit_line_id', 'credit_line_name', 'debtor_id', 'debtor_type', 'portfolio', 'disbursed_at', 'method', 'reference'])
  t.equal(rows.length, 3)
  t.equal(count, 3)
  for (const row of rows) {
    const c = await credit(row['credit_id'] ?? '')
    t.match(row, { disbursed_at: c.disbursedAt, principal: c.principal, method: 'bank_transfer', reference: `TRF-${c.ID.slice(0, 8)}`, days_to_disburse: '0' })
    t.match(row, { taxes: '0.00', withholdings: '0.00', tax_detail: '[]' }, 'the demo configures no tax on principals')
  }
  t.equal((await file({ type: 'disbursements', after: '2026-01-01T00:00:00Z' })).rows.length, 1)
})

t.test('quantitative scoring: every requested credit with its variables; score columns hold what the credit read model holds', async (t) => {
  const before = await file({ type: 'quantitative-scoring' })
  t.same(before.header.slice(9, 16), ['monthly_income', 'installment_to_income', 'age_years', 'years_in_business', 'employment_type', 'economic_activity', 'scored'])
  t.equal(before.rows.length, 7)
  t.ok(before.rows.every((r) => r['scored'] === 'false' && r['score'] === ''), 'no credit of the demo has been scored')
  t.match(by(before.rows, 'credit_id', id('credit.ana-solicitado')), { monthly_income: '4500000.00', installment_to_income: '0.0416', age_years: '35', employment_type: 'formal' })
  t.match(by(before.rows, 'credit_id', id('credit.andes-desembolsado')), { years_in_business: '13', economic_activity: '4631', age_years: '' })
  await svc.runtime.execute(creditAggregate, id('credit.ana-solicitado'), {
    type: 'RecordCreditScore', scoringModelId: 'model-1', version: '1', versionNumber: 1, score: '712.5', decision: 'review', reasons: ['income, verified', 'age'], now: NOW,
  }, { organizationId: demo.organizationId, actorId: null, correlationId: 'scoring-test', causationId: null })
  const after = await file({ type: 'quantitative-scoring' })
  t.match(by(after.rows, 'credit_id', id('credit.ana-solicitado')), {
    scored: 'true', scoring_model_id: 'model-1', score: '712.5', decision: 'review', reasons: 'income, verified | age', scored_at: NOW,
  })
})

t.test('csv-a: one layout per typeFile, each starting with record type, id and date; the debtors file names no one', async (t) => {
  const credits = await file({ type: 'csv-a', typeFile: 'credits' })
  t.same(credits.header.slice(0, 3), ['record_type', 'record_id', 'record_date'])
  t.equal(credits.rows.length, 7)
  t.ok(credits.rows.every((r) => r['record_type'] === 'CRE'))
  const installments = await file({ type: 'csv-a', typeFile: 'installments', after: '2025-12-01T00:00:00Z', before: '2026-04-01T00:00:00Z' })
  const plain = await file({ type: 'installments', after: '2025-12-01T00:00:00Z', before: '2026-04-01T00:00:00Z' })
  t.same(installments.rows.map((r) => r['record_id']), plain.rows.map((r) => r['installment_id']), 'the same installments as the installments export')
  const payments = await file({ type: 'csv-a', typeFile: 'payments' })
  t.equal(payments.rows.length, 9)
  t.equal(payments.count, 9)
  const debtors = await file({ type: 'csv-a', typeFile: 'debtors' })
  t.equal(debtors.rows.length, 5)
  t.same(debtors.header, ['record_type', 'record_id', 'record_date', 'debtor_type', 'city_dane_code', 'department_dane_code', 'monthly_income',
    'employment_type', 'economic_activity', 'birth_year', 'active'])
  t.notOk(debtors.text.includes('Gómez') || debtors.text.includes('1020304050'), 'no names or documents')
})

t.test('receivables and installments at a cut-off: the portfolio as it stood then', async (t) => {
  const now = await file({ type: 'receivables-cutoff' })
  t.equal(now.rows.length, 2, 'owed now: the two Desembolsado credits')
  for (const row of now.rows) {
    const c = await credit(row['credit_id'] ?? '')
    t.match(row, { outstanding_principal: c.balances.outstandingPrincipal, days_past_due: String(c.daysPastDue), cutoff_date: '2026-03-10' })
  }
  const january = await file({ type: 'receivables-cutoff', before: '2026-02-01T00:00:00Z' })
  t.equal(january.rows.length, 3, 'the paid credit was still owed at the end of January')
  t.match(by(january.rows, 'credit_id', id('credit.ana-desembolsado')), { outstanding_principal: '2544517.57', installments_paid: '2', days_past_due: '0', cutoff_date: '2026-01-31' })
  t.match(by(january.rows, 'credit_id', id('credit.caribe-pagado')), { principal_collected: '1150199.89', interest_collected: '225000.00' })
  const schedules = await file({ type: 'installments-cutoff', before: '2026-01-01T00:00:00Z' })
  t.equal(schedules.rows.length, 24, 'Ana\'s 12 and Caribe\'s 12 installments; Andes was not disbursed yet')
  t.same(schedules.rows.filter((r) => r['status'] === 'paid').map((r) => `${r['credit_id']}#${r['number']}`), [`${id('credit.ana-desembolsado')}#1`])
  const current = await file({ type: 'installments-cutoff' })
  for (const c of [await credit(id('credit.ana-desembolsado')), await credit(id('credit.andes-desembolsado'))]) {
    for (const i of c.installments) t.match(by(current.rows, 'installment_id', i.ID), { status: i.status, outstanding: i.outstanding, days_past_due: String(i.daysPastDue) })
  }
})

t.test('orders accounting: completed orders as money received, linked to their ledger entry', async (t) => {
  const { header, rows, count } = await file({ type: 'orders-accounting' })
  t.same(header.slice(0, 4), ['order_id', 'completed_at', 'value_date', 'credit_id'])
  t.equal(rows.length, 6)
  t.equal(count, 6)
  const ledger = new Set((await file({ type: 'ledger-a' })).rows.map((r) => r['entry_id']))
  t.ok(rows.every((r) => ledger.has(r['ledger_entry_id'])), 'each names its ledger-a entry')
  t.match(rows.find((r) => r['collection_costs'] === '35000.00'), { total_received: '6025892.24', applied_principal: '4190892.24', applied_interest: '1800000.00', bank_account: '1110' })
})

t.test('debtors: the master file of profiles created in the period', async (t) => {
  const { header, rows, count } = await file({ type: 'debtors' })
  t.same(header.slice(0, 7), ['debtor_id', 'debtor_type', 'active', 'document_type', 'document_number', 'verification_digit', 'name'])
  t.equal(rows.length, 5)
  t.equal(count, 5)
  t.match(by(rows, 'debtor_id', id('profile.andes-coffee')), {
    debtor_type: 'legal', document_type: 'NIT', verification_digit: '8', business_name: 'Andes Coffee Export S.A.S.', legal_representative_name: 'Luis Herrera',
    tax_id: '900123456-7', economic_activity: '4631',
  })
  t.match(by(rows, 'debtor_id', id('profile.ana')), { phone: `'+573001234567`, birth_date: '1990-04-12', monthly_income: '4500000.00' }, 'a leading + is neutralised for spreadsheets')
  t.equal((await file({ type: 'debtors', after: NOW })).rows.length, 0)
})

t.test('active debtors and their invoicing file: one row per debtor and currency with a credit active in the period', async (t) => {
  const active = await file({ type: 'debtors-credit-active' })
  t.equal(active.rows.length, 3)
  t.match(by(active.rows, 'debtor_id', id('profile.ana')), { active_credits: '1', outstanding_principal: '2541410.61', max_days_past_due: '33', risk_category: 'B', currency: 'COP' })
  t.equal((await file({ type: 'debtors-credit-active', after: '2026-03-01T00:00:00Z' })).rows.length, 2, 'Caribe paid off in February')
  const invoicing = await file({ type: 'debtors-credit-active-invoicing-a', after: '2026-02-01T00:00:00Z' })
  t.same(invoicing.header.slice(0, 5), ['TIPO_PERSONA', 'TIPO_DOCUMENTO', 'NUMERO_DOCUMENTO', 'DV', 'RAZON_SOCIAL'])
  t.match(by(invoicing.rows, 'NUMERO_DOCUMENTO', '1020304050'), { TIPO_PERSONA: '2', TIPO_DOCUMENTO: '13', INTERESES: '46893.04', TOTAL: '46893.04', PERIODO_DESDE: '2026-02-01', PERIODO_HASTA: '2026-03-10' })
  t.match(by(invoicing.rows, 'NUMERO_DOCUMENTO', '900123456'), { TIPO_PERSONA: '1', TIPO_DOCUMENTO: '31', DV: '8', INTERESES: '1800000.00', GASTOS_COBRANZA: '35000.00', TOTAL: '1835000.00' })
  t.match(by(invoicing.rows, 'NUMERO_DOCUMENTO', '901987654'), { INTERESES: '207747.00', RESPONSABILIDAD_FISCAL: 'R-99-PN' }, 'the payoff\'s accrued interest only')
})

t.test('reports: chosen columns of joined sources, one row per item, filtered in the store or row by row', async (t) => {
  const joined = await file({ type: 'reports', columns: ['installments.number', 'credits.state', 'debtors.name', 'creditLines.name'], filters: { 'installments.status': ['paid', 'partial'] } })
  t.same(joined.header, ['installments.number', 'credits.state', 'debtors.name', 'creditLines.name'])
  t.same(joined.rows.map((r) => `${r['debtors.name']} #${r['installments.number']} ${r['credits.state']} ${r['creditLines.name']}`).sort(), [
    'Ana Gómez Restrepo #1 Desembolsado Crédito de consumo', 'Ana Gómez Restrepo #2 Desembolsado Crédito de consumo',
    'Ana Gómez Restrepo #3 Desembolsado Crédito de consumo', 'Andes Coffee Export S.A.S. #1 Desembolsado Capital de trabajo PYME',
    'Caribe Logística Ltda. #1 Pagado Capital de trabajo PYME', 'Caribe Logística Ltda. #2 Pagado Capital de trabajo PYME',
  ], 'installments paid or partly paid, due before now (the period applies to the due date)')
  const wholeSchedule = await file({ type: 'reports', columns: ['installments.id'], filters: { 'installments.creditId': id('credit.caribe-pagado') }, before: '2027-01-01T00:00:00Z' })
  t.equal(wholeSchedule.rows.length, 12)
  t.equal(joined.count, joined.rows.length)
  const legal = await file({ type: 'reports', columns: ['credits.id', 'credits.outstandingPrincipal'], filters: { 'debtors.type': 'legal', 'credits.state': 'Desembolsado' } })
  t.same(legal.rows, [{ 'credits.id': id('credit.andes-desembolsado'), 'credits.outstandingPrincipal': '115809107.76' }], 'a filter on a joined source')
  const debtors = await file({ type: 'reports', columns: ['debtors.name', 'debtors.documentType'], after: '2026-01-01T00:00:00Z' })
  t.equal(debtors.rows.length, 5, 'debtors alone: one row per debtor')
  const lines = await file({ type: 'reports', columns: ['creditLines.name', 'creditLines.active'], filters: { 'creditLines.currency': 'USD' } })
  t.same(lines.rows, [{ 'creditLines.name': 'Crédito en dólares', 'creditLines.active': 'false' }])
})

t.test('every data set exports its own organization\'s records only', async (t) => {
  const other = svc.organizationId
  t.not(other, demo.organizationId)
  const extra: Record<string, object> = { 'csv-a': { typeFile: 'credits' }, 'reports': { columns: ['credits.id'] } }
  for (const dataSet of svc.runtime.exports.dataSets.types) {
    const theirs = await exportFile(svc.runtime, other, { type: dataSet, ...extra[dataSet] })
    t.equal(theirs.rows.length, 0, `${dataSet}: nothing of the demo organization`)
  }
})

t.test('refinance: whole-balance payoffs, matched with a new credit of the debtor disbursed nearby', async (t) => {
  const before = await file({ type: 'refinance' })
  t.same(before.header.slice(0, 4), ['credit_id', 'debtor_id', 'debtor_type', 'credit_line_id'])
  t.equal(before.rows.length, 1)
  t.equal(before.count, 1)
  t.match(before.rows[0], { credit_id: id('credit.caribe-pagado'), payoff_principal: '13849800.11', installments_prepaid: '10', refinanced: 'false', new_credit_id: '' })
  const context = { organizationId: demo.organizationId, actorId: 'test', correlationId: 'refinance-test', causationId: null }
  const newCredit = '9a3f4c1e-0000-4000-8000-000000000001'
  await requestCredit(svc.runtime.commands, {
    creditId: newCredit, organizationId: demo.organizationId, creditLineId: id('creditLine.capital-trabajo'), debtorId: id('profile.caribe-logistica'),
    principal: '25000000.00', term: 18, now: NOW,
  }, context)
  await svc.runtime.commands.execute(creditAggregate, newCredit, { type: 'ApproveCredit', by: 'test', now: NOW }, context)
  const disbursed = await disburseCredit(svc.runtime.commands, { creditId: newCredit, organizationId: demo.organizationId, method: 'bank_transfer', reference: 'TRF-NEW', taxes: [], by: 'test', now: NOW }, context)
  await svc.runtime.settle(disbursed.position)
  const after = await file({ type: 'refinance' })
  t.match(after.rows[0], { refinanced: 'true', new_credit_id: newCredit, new_credit_principal: '25000000.00', new_credit_term_months: '18', days_between: '10' })
})

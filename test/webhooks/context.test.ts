import t from 'tap'
import { creditAggregate, type CreditCommand } from '../../src/commands/credit.js'
import type { CreditState } from '../../src/events/creditState.js'
import type { PaymentOrderApproved } from '../../src/events/paymentOrder.js'
import type { ProfileDoc } from '../../src/projections/profiles.js'
import { emptyTemplateContext } from '../../src/templates/context.js'
import { templateContextOf } from '../../src/webhooks/context.js'
import { withPaymentApplied } from '../../src/webhooks/source.js'

const trigger = { Type: 'CreditDisbursed', OriginalType: 'CreditDisbursed', EventID: 'e-1', LogID: '', OccurredAt: '2026-03-01T10:00:00.000Z', SendID: 's-1' }
const credit = { ...creditAggregate.initialState(), status: 'Aprobado' as const, creditId: 'c-1', organizationId: 'o-1', debtorId: 'p-1', currency: 'COP' }

const legalProfile: ProfileDoc = {
  _id: 'p-1', organizationId: 'o-1', ownerId: 'u', type: 'legal', active: true, isCopy: false, copiedFrom: null, natural: null, cityId: null,
  legal: {
    businessName: 'Ferretería El Tornillo S.A.S.', documentType: 'NIT', documentNumber: '900123456', taxId: '900123456-7',
    legalRepresentative: { firstName: 'Luis', lastName: 'Pérez', documentType: 'CC', documentNumber: '79000111' },
    RutFileID: 'f-rut', ShareholderStructureFileID: 'f-shares',
  },
  files: {}, sharedWith: [], deactivationReason: null, createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z',
}

t.test('a legal debtor maps to .Legal with its representative and file ids; .Natural stays zero-valued', async (t) => {
  const context = templateContextOf({ credit, debtor: legalProfile, order: null, organization: { id: 'o-1', name: 'Prestamos S.A.' }, trigger, at: new Date('2026-03-01T10:00:00Z') })
  const empty = emptyTemplateContext()
  t.match(context.Credit, { ID: 'c-1', Status: 'Aprobado', DebtorID: 'p-1', FirstDueDate: '', Installments: [] })
  t.match(context.Credit.Debtor, { ID: 'p-1', Type: 'legal', Name: 'Ferretería El Tornillo S.A.S.', DocumentType: 'NIT', DocumentNumber: '900123456' })
  t.match(context.Credit.Debtor.Legal, {
    TaxID: '900123456-7', LegalRepresentative: { FirstName: 'Luis', LastName: 'Pérez', Email: '' }, RutFileID: 'f-rut',
    ShareholderStructureFileID: 'f-shares', FinancialStatementsFileID: '', MonthlyIncome: '0',
  })
  t.same(context.Credit.Debtor.Natural, empty.Credit.Debtor.Natural)
  t.same(Object.keys(context.Credit.Debtor.Legal).sort(), Object.keys(empty.Credit.Debtor.Legal).sort(), 'exactly the fields of the schema')
  t.same(context.Order, empty.Order)
  t.same(context.Trigger, trigger)
  t.same(context.Organization, { ID: 'o-1', Name: 'Prestamos S.A.' })
})

t.test('a debtor missing from the read model is zero-valued but for its ID; a natural debtor\'s age counts at the render date', async (t) => {
  const missing = templateContextOf({ credit, debtor: null, order: null, organization: { id: 'o-1', name: '' }, trigger, at: new Date() })
  t.same(missing.Credit.Debtor, { ...emptyTemplateContext().Credit.Debtor, ID: 'p-1' })
  const natural: ProfileDoc = {
    ...legalProfile, type: 'natural', legal: null,
    natural: { firstName: 'Ana', middleName: 'María', lastName: 'Gómez', documentType: 'CC', documentNumber: '1020', birthDate: '1990-03-02', WorkCertificateFileID: 'f-9' },
  }
  const render = (at: string) => templateContextOf({ credit, debtor: natural, order: null, organization: { id: 'o-1', name: '' }, trigger, at: new Date(at) }).Credit.Debtor
  t.match(render('2026-03-01T12:00:00Z'), { Name: 'Ana María Gómez', Natural: { Age: 35, WorkCertificateFileID: 'f-9', IdentityDocumentFrontFileID: '' } })
  t.equal(render('2026-03-02T12:00:00Z').Natural.Age, 36)
})

t.test('an approval renders the credit with its payment applied, whether or not the payment applier has run', async (t) => {
  const fold = (state: CreditState, command: CreditCommand) => creditAggregate.decide(command, state).reduce(creditAggregate.evolve, state)
  const now = '2026-01-10T00:00:00.000Z'
  const commands: CreditCommand[] = [
    { type: 'RequestCredit', creditId: 'c-1', organizationId: 'o-1', creditLineId: 'l-1', creditLineName: 'Consumo', debtorId: 'p-1', principal: '1000000',
      term: 2, rate: '12', rateType: 'FIXED_NOMINAL', currency: 'COP', availableDays: 0, requestedFirstDueDate: null,
      bounds: { principalMin: '1', principalMax: '99999999', timeMin: 1, timeMax: 48 }, now },
    { type: 'ApproveCredit', by: 'u', now },
    { type: 'DisburseCredit', method: 'bank_transfer', reference: 'r', allowedMethods: [], taxes: [], by: 'u', now },
  ]
  const disbursed = commands.reduce(fold, creditAggregate.initialState())
  const first = disbursed.installments[0]!
  const approval: PaymentOrderApproved['data'] = {
    orderId: 'order-1', organizationId: 'o-1', creditId: 'c-1', creditLineId: 'l-1', installmentId: first.installmentId, installmentNumber: 1,
    amount: first.amount, collectionCosts: '0', currency: 'COP', provider: 'manual', createdAt: now, approverId: 'u', approvedBy: 'principal',
    paymentReference: '', processingTime: 0, completedAt: '2026-02-01T00:00:00.000Z',
  }
  const render = (credit: CreditState) => templateContextOf({ credit, debtor: null, order: null, organization: { id: 'o-1', name: '' }, trigger, at: new Date(now) }).Credit

  const pending = withPaymentApplied(disbursed, approval)
  t.match(render(pending), { InstallmentsPaid: 1, Installments: [{ Status: 'paid', Outstanding: '0.00' }, { Status: 'pending' }] })
  t.equal(render(pending).OutstandingBalance, disbursed.installments[1]!.amount)
  const applied = fold(disbursed, { type: 'ApplyPayment', orderId: 'order-1', installmentId: first.installmentId, installmentNumber: 1, amount: first.amount, collectionCosts: '0', valueDate: approval.completedAt, orderedAt: approval.createdAt, now: approval.completedAt })
  t.equal(withPaymentApplied(applied, approval), applied, 'already applied: the credit as the read model has it')
  t.same(render(withPaymentApplied(applied, approval)), render(pending))
  t.equal(withPaymentApplied(disbursed, { ...approval, installmentId: 'no-such-installment' }), disbursed, 'an order the credit refuses changes nothing')

  const overdue = (at: string, credit: CreditState = disbursed) =>
    templateContextOf({ credit, debtor: null, order: null, organization: { id: 'o-1', name: '' }, trigger, at: new Date(at) }).Credit.Installments
  const due = first.dueDate
  const dayAfter = (days: number) => new Date(Date.parse(`${due}T12:00:00Z`) + days * 86_400_000).toISOString()
  t.equal(overdue(dayAfter(0))[0], overdue(dayAfter(0))[0], 'the same installment on the same day and status: the context made before')
  t.equal(overdue(dayAfter(0))[0]?.DaysPastDue, 0)
  t.equal(overdue(dayAfter(3))[0]?.DaysPastDue, 3, 'another day: counted again for the same installment')
  t.equal(overdue(dayAfter(3), { ...disbursed, status: 'Pagado' })[0]?.DaysPastDue, 0, 'another credit status: counted again')
  t.match(overdue(dayAfter(3), pending)[0], { Status: 'paid', DaysPastDue: 0, Outstanding: '0.00' }, 'a replaced installment: made anew')
  t.ok(Object.isFrozen(overdue(dayAfter(3))[0]), 'kept contexts are frozen: renders share them')

  t.same(render(disbursed).Installments.map((i) => i.WaivedInterest), ['0.00', '0.00'], 'nothing forgiven before a payoff')
  const paidOff = fold(disbursed, {
    type: 'ApplyPayment', orderId: 'order-zero', installmentId: 'zero', installmentNumber: 0, amount: disbursed.principal, collectionCosts: '0',
    valueDate: now, orderedAt: now, now,
  })
  t.same(render(paidOff).Installments.map((i) => [i.WaivedInterest, i.Outstanding, i.Status]), disbursed.installments.map((i) => [i.interest, '0.00', 'paid']),
    'paid off on the disbursement day: each installment\'s interest shows forgiven, nothing owed')
})

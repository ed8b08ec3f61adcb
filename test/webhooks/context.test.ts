import t from 'tap'
import { creditAggregate } from '../../src/commands/credit.js'
import type { ProfileDoc } from '../../src/projections/profiles.js'
import { emptyTemplateContext } from '../../src/templates/context.js'
import { templateContextOf } from '../../src/webhooks/context.js'

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

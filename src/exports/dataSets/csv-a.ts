import type { CreditDoc, InstallmentDoc } from '../../projections/credits.js'
import type { OrderDoc } from '../../projections/paymentOrders.js'
import type { ProfileDoc } from '../../projections/profiles.js'
import { dayOf } from '../../shared/amortization.js'
import type { ExportBody } from '../catalogue.js'
import type { Column } from '../csv.js'
import { defineDataSet, type DataSetContext } from '../dataSets.js'
import { asCells, boolean, date, integer, money, text, type Cells } from '../lib/columns.js'
import { cityCodes, identityOf } from '../lib/identity.js'
import { collectibleDueIn, instantsIn, periodOf, type Period } from '../lib/period.js'
import { creditArrears, installmentArrears } from '../lib/positions.js'

type TypeFile = ExportBody<'csv-a'>['typeFile']

interface FileLayout<Row> {
  recordType: string
  /** What `record_date` is, and so what the period applies to. */
  recordDate: string
  columns: ReadonlyArray<Column<Row>>
  rows(period: Period, context: DataSetContext): AsyncIterable<Row>
  count(period: Period, context: DataSetContext): Promise<number>
}

/** The columns every file of format A starts with. */
const lead = <Row>(recordType: string, recordDate: string, id: (row: Row) => string, day: (row: Row) => string | null): Column<Row>[] => [
  text<Row>('record_type', 'CRE credit, CUO installment, PAG payment, DEU debtor', () => recordType),
  text<Row>('record_id', 'id of the record', id),
  date<Row>('record_date', recordDate, day),
]

interface Dated<T> {
  doc: T
  day: string
}

const credits: FileLayout<Dated<CreditDoc>> = {
  recordType: 'CRE', recordDate: 'request day of the credit',
  columns: [
    ...lead<Dated<CreditDoc>>('CRE', 'request day of the credit', (r) => r.doc._id, (r) => r.doc.requestedAt),
    text('credit_line_id', 'credit line id', (r: Dated<CreditDoc>) => r.doc.creditLineId),
    text('debtor_id', 'debtor (profile) id', (r: Dated<CreditDoc>) => r.doc.debtorId),
    text('state', 'credit state', (r: Dated<CreditDoc>) => r.doc.status),
    text('currency', 'ISO 4217 code', (r: Dated<CreditDoc>) => r.doc.currency),
    money('principal', 'amount lent', (r: Dated<CreditDoc>) => r.doc.principal),
    integer('term_months', 'installments', (r: Dated<CreditDoc>) => r.doc.term),
    money('annual_rate', 'annual rate, percent', (r: Dated<CreditDoc>) => r.doc.rate),
    text('rate_type', 'FIXED or FIXED_NOMINAL', (r: Dated<CreditDoc>) => r.doc.rateType),
    money('installment_amount', 'level monthly payment', (r: Dated<CreditDoc>) => r.doc.installmentAmount),
    date('disbursement_date', 'disbursement day', (r: Dated<CreditDoc>) => r.doc.disbursedAt),
    date('maturity_date', 'due date of the last installment', (r: Dated<CreditDoc>) => r.doc.maturityDate),
    money('outstanding_principal', 'principal owed', (r: Dated<CreditDoc>) => r.doc.outstandingPrincipal),
    money('outstanding_total', 'principal and interest owed', (r: Dated<CreditDoc>) => r.doc.outstandingTotal),
    integer('installments_paid', 'installments paid in full', (r: Dated<CreditDoc>) => r.doc.installmentsPaid),
    integer('days_past_due', 'arrears to the export day', (r: Dated<CreditDoc>) => creditArrears(r.doc, r.day)),
  ],
  async *rows(period, context) {
    const day = dayOf(context.requestedAt)
    for await (const doc of context.queries.credits.stream(context.organizationId, instantsIn('requestedAt', period))) yield { doc, day }
  },
  count: (period, context) => context.queries.credits.count(context.organizationId, instantsIn('requestedAt', period)),
}

const installments: FileLayout<Dated<InstallmentDoc>> = {
  recordType: 'CUO', recordDate: 'due day of the installment (disbursed credits)',
  columns: [
    ...lead<Dated<InstallmentDoc>>('CUO', 'due day of the installment', (r) => r.doc._id, (r) => r.doc.dueDate),
    text('credit_id', 'credit id', (r: Dated<InstallmentDoc>) => r.doc.creditId),
    integer('number', 'installment number', (r: Dated<InstallmentDoc>) => r.doc.number),
    text('currency', 'ISO 4217 code', (r: Dated<InstallmentDoc>) => r.doc.currency),
    money('amount', 'principal plus interest', (r: Dated<InstallmentDoc>) => r.doc.amount),
    money('principal', 'principal part', (r: Dated<InstallmentDoc>) => r.doc.principal),
    money('interest', 'interest part', (r: Dated<InstallmentDoc>) => r.doc.interest),
    money('paid_amount', 'paid on it', (r: Dated<InstallmentDoc>) => r.doc.paidAmount),
    money('outstanding', 'still owed on it', (r: Dated<InstallmentDoc>) => r.doc.outstanding),
    text('status', 'pending, partial or paid', (r: Dated<InstallmentDoc>) => r.doc.status),
    date('paid_date', 'day the last of it was paid', (r: Dated<InstallmentDoc>) => r.doc.paidAt),
    integer('days_past_due', 'arrears to the export day', (r: Dated<InstallmentDoc>) => installmentArrears(r.doc, r.day)),
  ],
  async *rows(period, context) {
    const day = dayOf(context.requestedAt)
    for await (const doc of context.queries.credits.streamInstallments(context.organizationId, collectibleDueIn(period))) yield { doc, day }
  },
  count: (period, context) => context.queries.credits.countInstallments(context.organizationId, collectibleDueIn(period)),
}

const payments: FileLayout<OrderDoc> = {
  recordType: 'PAG', recordDate: 'creation day of the payment order',
  columns: [
    ...lead<OrderDoc>('PAG', 'creation day of the payment order', (o) => o._id, (o) => o.createdAt),
    text('credit_id', 'credit id', (o: OrderDoc) => o.creditId),
    integer('installment_number', 'installment number (0: the whole balance)', (o: OrderDoc) => o.order?.installmentNumber),
    text('status', 'pending, processing, completed or failed', (o: OrderDoc) => o.status),
    text('provider', 'payment provider', (o: OrderDoc) => o.provider),
    text('method', 'payment method', (o: OrderDoc) => o.order?.method),
    text('currency', 'ISO 4217 code', (o: OrderDoc) => o.order?.currency),
    money('amount', 'amount', (o: OrderDoc) => o.order?.amount),
    money('collection_costs', 'collection costs', (o: OrderDoc) => o.order?.collectionCosts),
    date('completed_date', 'completion day', (o: OrderDoc) => o.completedAt),
    text('payment_reference', 'provider payment reference', (o: OrderDoc) => o.paymentReference),
  ],
  rows: (period, context) => context.queries.paymentOrders.stream(context.organizationId, instantsIn('createdAt', period)),
  count: (period, context) => context.queries.paymentOrders.count(context.organizationId, instantsIn('createdAt', period)),
}

const debtors: FileLayout<ProfileDoc> = {
  recordType: 'DEU', recordDate: 'creation day of the profile',
  columns: [
    ...lead<ProfileDoc>('DEU', 'creation day of the profile', (p) => p._id, (p) => p.createdAt),
    text('debtor_type', 'natural or legal', (p: ProfileDoc) => p.type),
    text('city_dane_code', 'DANE code of the municipality', (p: ProfileDoc) => cityCodes(p.cityId)?.daneCode),
    text('department_dane_code', 'DANE code of the department', (p: ProfileDoc) => cityCodes(p.cityId)?.departmentCode),
    money('monthly_income', 'monthly income', (p: ProfileDoc) => identityOf(p).monthlyIncome),
    text('employment_type', 'natural persons: employment', (p: ProfileDoc) => p.natural?.employmentType),
    text('economic_activity', 'companies: CIIU code', (p: ProfileDoc) => p.legal?.economicActivity),
    integer('birth_year', 'natural persons: year of birth', (p: ProfileDoc) => (p.natural?.birthDate === undefined ? null : Number(p.natural.birthDate.slice(0, 4)))),
    boolean('active', 'the profile is active', (p: ProfileDoc) => p.active),
  ],
  rows: (period, context) => context.queries.profiles.stream(context.organizationId, instantsIn('createdAt', period)),
  count: (period, context) => context.queries.profiles.count(context.organizationId, instantsIn('createdAt', period)),
}

interface ErasedLayout {
  columns: Column<Cells>[]
  rows(period: Period, context: DataSetContext): AsyncIterable<Cells>
  count(period: Period, context: DataSetContext): Promise<number>
}

const erased = <Row>(layout: FileLayout<Row>): ErasedLayout => {
  const { columns, cells } = asCells(layout.columns)
  return {
    columns,
    async *rows(period, context) {
      for await (const row of layout.rows(period, context)) yield cells(row)
    },
    count: layout.count,
  }
}

/** The four files of format A, by `typeFile`. */
export const csvALayouts: Record<TypeFile, ErasedLayout> = {
  credits: erased(credits), installments: erased(installments), payments: erased(payments), debtors: erased(debtors),
}

/**
 * Flat file A: a compact, code-oriented layout for loading a core or BI
 * system, one file per `typeFile`. Every file starts with `record_type`,
 * `record_id`, `record_date` (what the period applies to). The debtors file
 * is pseudonymous (ids, place, income, employment, no names or documents):
 * identities are in the debtors exports, which need ReadChildEntity.
 */
export const csvADataSet = defineDataSet({
  type: 'csv-a',
  description: 'flat file A: credits, installments, payments or debtors (typeFile)',
  columns: (body) => csvALayouts[body.typeFile].columns,
  rows: (body, context) => csvALayouts[body.typeFile].rows(periodOf(body, context.requestedAt), context),
  count: (body, context) => csvALayouts[body.typeFile].count(periodOf(body, context.requestedAt), context),
})

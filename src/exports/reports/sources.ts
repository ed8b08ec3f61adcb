import type { CreditLineDoc } from '../../projections/creditLines.js'
import type { CreditDoc, InstallmentDoc } from '../../projections/credits.js'
import type { OrderDoc } from '../../projections/paymentOrders.js'
import type { Permission } from '../../shared/permissions.js'
import type { ProfileDoc } from '../../projections/profiles.js'
import { atMinorUnit } from '../lib/columns.js'
import { cityCodes, identityOf } from '../lib/identity.js'
import { creditArrears, installmentArrears } from '../lib/positions.js'
import type { ReportColumnType, ReportSource } from '../reportSources.js'

/** What a report column reads besides its document: the day arrears are counted to (the export's request day). */
export interface ReportEnvironment {
  day: string
}

export interface SourceColumn<Doc> {
  name: string
  type: ReportColumnType
  description: string
  value(doc: Doc, environment: ReportEnvironment): unknown
  /** The stored field holding exactly the written value (text columns): filters on it go to the read store. */
  field?: string
}

export type SourceName = 'credits' | 'installments' | 'payments' | 'debtors' | 'creditLines'

/** The documents of one report row: its item and the items it belongs to (null where there is none). */
export interface ReportDocs {
  credits: CreditDoc | null
  installments: InstallmentDoc | null
  payments: OrderDoc | null
  debtors: ProfileDoc | null
  creditLines: CreditLineDoc | null
}

export interface SourceDefinition<N extends SourceName> {
  name: N
  description: string
  /** The field the report's period applies to when this source is the report's item, and whether it holds instants or days. */
  period: { field: string; kind: 'instant' | 'day' }
  columns: ReadonlyArray<SourceColumn<NonNullable<ReportDocs[N]>>>
}

const col = <Doc>(name: string, type: ReportColumnType, description: string, value: (doc: Doc, environment: ReportEnvironment) => unknown, field?: string): SourceColumn<Doc> =>
  ({ name, type, description, value, ...(field === undefined ? {} : { field }) })

const credits: SourceDefinition<'credits'> = {
  name: 'credits', description: 'credits, any state (the period applies to the request time)', period: { field: 'requestedAt', kind: 'instant' },
  columns: [
    col('id', 'string', 'credit id', (c) => c._id, '_id'),
    col('state', 'string', 'Solicitado, Aprobado, Rechazado, Anulado, Desembolsado or Pagado', (c) => c.status, 'status'),
    col('creditLineId', 'string', 'credit line id', (c) => c.creditLineId, 'creditLineId'),
    col('creditLineName', 'string', 'credit line name at request', (c) => c.creditLineName, 'creditLineName'),
    col('debtorId', 'string', 'debtor (profile) id', (c) => c.debtorId, 'debtorId'),
    col('currency', 'string', 'ISO 4217 code', (c) => c.currency, 'currency'),
    col('principal', 'decimal', 'amount lent', (c) => c.principal),
    col('term', 'integer', 'monthly installments', (c) => c.term),
    col('rate', 'decimal', 'annual rate, percent', (c) => c.rate),
    col('rateType', 'string', 'FIXED or FIXED_NOMINAL', (c) => c.rateType, 'rateType'),
    col('installmentAmount', 'decimal', 'level monthly payment', (c) => c.installmentAmount),
    col('totalInterest', 'decimal', 'interest over the schedule', (c) => c.totalInterest),
    col('totalAmount', 'decimal', 'principal plus interest', (c) => c.totalAmount),
    col('requestedAt', 'timestamp', 'request time', (c) => c.requestedAt),
    col('approvedAt', 'timestamp', 'approval time', (c) => c.approvedAt),
    col('rejectedAt', 'timestamp', 'rejection time', (c) => c.rejectedAt),
    col('cancelledAt', 'timestamp', 'cancellation time', (c) => c.cancelledAt),
    col('disbursedAt', 'timestamp', 'disbursement time', (c) => c.disbursedAt),
    col('disbursementMethod', 'string', 'disbursement method', (c) => c.disbursementMethod, 'disbursementMethod'),
    col('paidAt', 'timestamp', 'when nothing was owed any more', (c) => c.paidAt),
    col('firstDueDate', 'date', 'first due date', (c) => c.firstDueDate),
    col('maturityDate', 'date', 'last due date', (c) => c.maturityDate),
    col('installmentsCount', 'integer', 'installments in the schedule', (c) => c.installments.length),
    col('installmentsPaid', 'integer', 'installments paid in full', (c) => c.installmentsPaid),
    col('nextDueDate', 'date', 'oldest unpaid due date', (c) => c.nextDueDate),
    col('daysPastDue', 'integer', 'arrears to the export day (Desembolsado credits)', (c, env) => creditArrears(c, env.day)),
    col('outstandingPrincipal', 'decimal', 'principal owed', (c) => c.outstandingPrincipal),
    col('outstandingInterest', 'decimal', 'scheduled interest owed', (c) => c.outstandingInterest),
    col('outstandingTotal', 'decimal', 'principal and interest owed', (c) => c.outstandingTotal),
    col('paidTotal', 'decimal', 'principal and interest paid', (c) => c.paidTotal),
    col('unapplied', 'decimal', 'received beyond what was owed', (c) => atMinorUnit(c.unapplied, c.currency)),
    col('score', 'decimal', 'automatic score, when recorded', (c) => c.score?.score),
    col('scoreDecision', 'string', 'the scoring model\'s decision (approve, reject, review)', (c) => c.score?.decision),
  ],
}

const installments: SourceDefinition<'installments'> = {
  name: 'installments', description: 'installments of credits (the period applies to the due date)', period: { field: 'dueDate', kind: 'day' },
  columns: [
    col('id', 'string', 'installment id', (i) => i._id, '_id'),
    col('creditId', 'string', 'credit id', (i) => i.creditId, 'creditId'),
    col('number', 'integer', 'installment number', (i) => i.number),
    col('dueDate', 'date', 'due date', (i) => i.dueDate, 'dueDate'),
    col('currency', 'string', 'ISO 4217 code', (i) => i.currency, 'currency'),
    col('principal', 'decimal', 'principal part', (i) => i.principal),
    col('interest', 'decimal', 'interest part', (i) => i.interest),
    col('amount', 'decimal', 'principal plus interest', (i) => i.amount),
    col('paidAmount', 'decimal', 'paid on it', (i) => i.paidAmount),
    col('outstanding', 'decimal', 'still owed on it', (i) => i.outstanding),
    col('status', 'string', 'pending, partial or paid', (i) => i.status, 'status'),
    col('paidAt', 'timestamp', 'when the last of it was paid', (i) => i.paidAt),
    col('daysPastDue', 'integer', 'arrears to the export day', (i, env) => installmentArrears(i, env.day)),
  ],
}

const payments: SourceDefinition<'payments'> = {
  name: 'payments', description: 'payment orders (the period applies to the creation time)', period: { field: 'createdAt', kind: 'instant' },
  columns: [
    col('id', 'string', 'payment order id', (o) => o._id, '_id'),
    col('creditId', 'string', 'credit id', (o) => o.creditId, 'creditId'),
    col('installmentNumber', 'integer', 'installment number (0: the whole balance)', (o) => o.order?.installmentNumber),
    col('status', 'string', 'pending, processing, completed or failed', (o) => o.status, 'status'),
    col('provider', 'string', 'payment provider', (o) => o.provider, 'provider'),
    col('method', 'string', 'payment method', (o) => o.order?.method, 'order.method'),
    col('currency', 'string', 'ISO 4217 code', (o) => o.order?.currency, 'order.currency'),
    col('amount', 'decimal', 'amount', (o) => o.order?.amount),
    col('collectionCosts', 'decimal', 'collection costs', (o) => o.order?.collectionCosts),
    col('createdAt', 'timestamp', 'creation time', (o) => o.createdAt),
    col('completedAt', 'timestamp', 'completion time', (o) => o.completedAt),
    col('paymentReference', 'string', 'provider payment reference', (o) => o.paymentReference, 'paymentReference'),
    col('appliedAmount', 'decimal', 'applied to the installments', (o) => o.application?.appliedAmount),
    col('unappliedAmount', 'decimal', 'received beyond what was owed', (o) => o.application?.unappliedAmount),
  ],
}

const debtors: SourceDefinition<'debtors'> = {
  name: 'debtors', description: 'debtors (profiles; the period applies to the creation time)', period: { field: 'createdAt', kind: 'instant' },
  columns: [
    col('id', 'string', 'debtor (profile) id', (p) => p._id, '_id'),
    col('type', 'string', 'natural or legal', (p) => p.type, 'type'),
    col('documentType', 'string', 'CC, CE, TI, PP, PEP, PPT or NIT', (p) => identityOf(p).documentType),
    col('documentNumber', 'string', 'document number', (p) => identityOf(p).documentNumber),
    col('name', 'string', 'full name or business name', (p) => identityOf(p).fullName),
    col('email', 'string', 'e-mail', (p) => identityOf(p).email),
    col('phone', 'string', 'phone', (p) => identityOf(p).phone),
    col('cityDaneCode', 'string', 'DANE code of the municipality', (p) => cityCodes(p.cityId)?.daneCode),
    col('cityName', 'string', 'municipality', (p) => cityCodes(p.cityId)?.name),
    col('monthlyIncome', 'decimal', 'monthly income', (p) => identityOf(p).monthlyIncome),
    col('employmentType', 'string', 'natural persons: employment', (p) => p.natural?.employmentType),
    col('economicActivity', 'string', 'companies: CIIU code', (p) => p.legal?.economicActivity),
    col('active', 'boolean', 'the profile is active', (p) => p.active),
    col('createdAt', 'timestamp', 'creation time', (p) => p.createdAt),
  ],
}

const creditLines: SourceDefinition<'creditLines'> = {
  name: 'creditLines', description: 'credit lines (products; the period applies to the creation time)', period: { field: 'createdAt', kind: 'instant' },
  columns: [
    col('id', 'string', 'credit line id', (l) => l._id, '_id'),
    col('name', 'string', 'name', (l) => l.name, 'name'),
    col('currency', 'string', 'ISO 4217 code', (l) => l.currency, 'currency'),
    col('rate', 'decimal', 'annual rate, percent', (l) => l.rate),
    col('rateType', 'string', 'FIXED or FIXED_NOMINAL', (l) => l.rateType, 'rateType'),
    col('principalMin', 'decimal', 'smallest principal', (l) => l.principalMin),
    col('principalMax', 'decimal', 'largest principal', (l) => l.principalMax),
    col('timeMin', 'integer', 'shortest term, months', (l) => l.timeMin),
    col('timeMax', 'integer', 'longest term, months', (l) => l.timeMax),
    col('provider', 'string', 'default payment provider', (l) => l.provider, 'provider'),
    col('active', 'boolean', 'takes credit requests', (l) => l.active),
    col('createdAt', 'timestamp', 'creation time', (l) => l.createdAt),
  ],
}

export const reportSources = { credits, installments, payments, debtors, creditLines } as const

/**
 * Report columns a report may show (or filter on) only with a permission besides ExportReports: those naming a person
 * need ReadChildEntity, as the files that name people do; the automatic score needs ReadAnalysis, as on the credit.
 */
export const reportColumnPermissions: ReadonlyMap<string, Permission> = new Map([
  ...['debtors.documentType', 'debtors.documentNumber', 'debtors.name', 'debtors.email', 'debtors.phone'].map((column) => [column, 'ReadChildEntity'] as const),
  ['credits.score', 'ReadAnalysis'],
  ['credits.scoreDecision', 'ReadAnalysis'],
])

export const sourceNames: readonly SourceName[] = ['credits', 'installments', 'payments', 'debtors', 'creditLines']

export const isSourceName = (name: string): name is SourceName => Object.hasOwn(reportSources, name)

/** The sources as GET /exports/sources lists them. */
export const productReportSourceList: readonly ReportSource[] = sourceNames.map((name) => {
  const source: SourceDefinition<SourceName> = reportSources[name]
  return { name, description: source.description, columns: source.columns.map(({ name: column, type, description }) => ({ name: column, type, description })) }
})

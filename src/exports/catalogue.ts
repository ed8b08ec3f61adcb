import { Type, type Static, type TSchema } from 'typebox'
import { Value } from 'typebox/value'
import type { ExportParameters } from '../events/export.js'
import type { FieldError } from '../shared/errors.js'
import { MONEY_INPUT_PATTERN } from '../shared/money.js'
import type { Permission } from '../shared/permissions.js'

/** The interface's 19 export types: the discriminator of POST /exports. */
export const exportTypes = [
  'receivables', 'installments', 'credit-bureau-a', 'credit-bureau-b', 'payments', 'ledger-a', 'ledger-a-individual', 'ledger-a-clients',
  'disbursements', 'quantitative-scoring', 'refinance', 'csv-a', 'receivables-cutoff', 'installments-cutoff', 'orders-accounting', 'debtors',
  'debtors-credit-active', 'debtors-credit-active-invoicing-a', 'reports',
] as const

export type ExportType = (typeof exportTypes)[number]

export const isExportType = (value: string): value is ExportType => (exportTypes as readonly string[]).includes(value)

const Timestamp = (description: string) => Type.String({ format: 'date-time', description })
const After = Type.Optional(Timestamp('period start, inclusive (ISO 8601); default: the beginning of the records'))
const Before = Type.Optional(Timestamp('period end, exclusive (ISO 8601); default: the moment the export is requested. The types showing ' +
  'credits as they stood at the period\'s end (bureau formats, ledger-a-individual, ledger-a-clients, debtors-credit-active*) refuse a later one'))
const CutOff = Type.Optional(Timestamp('the cut-off: the portfolio as it stood at this moment, not later than the moment the export is ' +
  'requested (the default)'))
const Uuid = Type.String({ format: 'uuid' })
const Names = (description: string) => Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { minItems: 1, maxItems: 50, uniqueItems: true, description })

/**
 * An amount bound of a filter, written as every amount a request carries is (MoneyInput of src/http/schemas.ts):
 * a non-negative decimal string of at most 15 integer digits and 4 decimals.
 */
const AmountFilter = (description: string) =>
  Type.String({ pattern: MONEY_INPUT_PATTERN, description: `${description}; decimal string, at most 15 integer digits and 4 decimals`, examples: ['1500000.00'] })

/** `filters` of type `payments`: every field narrows the rows; absent fields do not filter. */
export const PaymentFilters = Type.Object({
  status: Type.Optional(Names('payment order statuses (e.g. pending, completed, failed)')),
  provider: Type.Optional(Names('payment providers')),
  orderType: Type.Optional(Names('order types (the order `Type` field)')),
  creditLineId: Type.Optional(Type.Array(Uuid, { minItems: 1, maxItems: 50, uniqueItems: true })),
  creditId: Type.Optional(Uuid),
  debtorId: Type.Optional(Uuid),
  minAmount: Type.Optional(AmountFilter('the smallest order amount, inclusive')),
  maxAmount: Type.Optional(AmountFilter('the largest order amount, inclusive; not below minAmount')),
}, { additionalProperties: false, description: 'payment filters' })

/** A report column: `source.column`, as listed by GET /exports/sources?type=reports. */
export const REPORT_COLUMN_PATTERN = '^[A-Za-z][A-Za-z0-9_]*\\.[A-Za-z][A-Za-z0-9_]*$'
const ReportColumn = Type.String({ pattern: REPORT_COLUMN_PATTERN, maxLength: 130 })

/** `filters` of type `reports`: a column → the value it must equal, or the values it may take. */
export const ReportFilters = Type.Record(
  Type.String({ pattern: REPORT_COLUMN_PATTERN }),
  Type.Union([Type.String({ maxLength: 200 }), Type.Array(Type.String({ maxLength: 200 }), { minItems: 1, maxItems: 100 })]),
  { maxProperties: 20, description: 'column → value or list of values (equality / membership)' },
)


const body = <T extends ExportType, P extends Record<string, TSchema>>(type: T, description: string, properties: P) =>
  Type.Object({ type: Type.Literal(type), ...properties }, { additionalProperties: false, title: type, description })

const period = { after: After, before: Before }
const cutOff = { before: CutOff }

/** The body each type accepts. Unknown fields are refused, so a misspelt filter never silently exports everything. */
export const exportBodySchemas = {
  'receivables': body('receivables', 'credits (receivables) requested in the period', period),
  'installments': body('installments', 'installments due in the period', period),
  'credit-bureau-a': body('credit-bureau-a', 'credit-bureau report, format A, of credits active in the period', period),
  'credit-bureau-b': body('credit-bureau-b', 'credit-bureau report, format B, of credits active in the period', period),
  'payments': body('payments', 'payment orders created in the period', { ...period, filters: Type.Optional(PaymentFilters) }),
  'ledger-a': body('ledger-a', 'accounting ledger A: movements in the period', period),
  'ledger-a-individual': body('ledger-a-individual', 'ledger A, one line per credit active in the period or with a movement in it', period),
  'ledger-a-clients': body('ledger-a-clients', 'ledger A, one line per debtor and currency, adding up its ledger-a-individual lines', period),
  'disbursements': body('disbursements', 'credits disbursed in the period', period),
  'quantitative-scoring': body('quantitative-scoring',
    'scoring cases: every credit requested in the period, scored or not, with its automatic score when it has one', period),
  'refinance': body('refinance', 'credits paid off by a whole-balance (`zero`) order in the period, refinanced or not ' +
    '(`refinanced`: a new credit of the debtor disbursed within 30 days of the payoff)', period),
  'csv-a': body('csv-a', 'flat file A; typeFile chooses which of its files', {
    ...period,
    typeFile: Type.Union([Type.Literal('credits'), Type.Literal('installments'), Type.Literal('payments'), Type.Literal('debtors')],
      { description: 'which file of format A' }),
  }),
  'receivables-cutoff': body('receivables-cutoff', 'credits as they stood at the cut-off', cutOff),
  'installments-cutoff': body('installments-cutoff', 'installments as they stood at the cut-off', cutOff),
  'orders-accounting': body('orders-accounting', 'payment orders for accounting, by completion in the period', period),
  'debtors': body('debtors', 'debtors (profiles) created in the period', period),
  'debtors-credit-active': body('debtors-credit-active', 'debtors with a credit active in the period (disbursed before its end, not paid off ' +
    'before its start), per debtor and currency, with what they owed at its end', period),
  'debtors-credit-active-invoicing-a': body('debtors-credit-active-invoicing-a',
    'debtors with a credit active in the period, or with interest or collection costs collected in it on one paid off before, invoicing format A, '
    + 'with what was collected in it', period),
  'reports': body('reports', 'a report of chosen columns', {
    ...period,
    format: Type.Optional(Type.Literal('consolidated', { default: 'consolidated', description: 'one row per item of the sources (the only format)' })),
    columns: Type.Array(ReportColumn, { minItems: 1, maxItems: 200, uniqueItems: true, description: '`source.column` names from GET /exports/sources?type=reports' }),
    filters: Type.Optional(ReportFilters),
  }),
} as const satisfies { [T in ExportType]: TSchema }

type Bodies = typeof exportBodySchemas
export type ExportBody<T extends ExportType = ExportType> = { [K in T]: Static<Bodies[K]> }[T]

const bodyUnion = Type.Union(exportTypes.map((type) => exportBodySchemas[type]))

/**
 * POST /exports: a oneOf discriminated by `type`, so a body is checked only
 * against its own type's schema and a field error names that field alone.
 */
export const ExportRequestBody = Type.Unsafe<ExportBody>({
  type: 'object',
  oneOf: exportTypes.map((type) => exportBodySchemas[type]),
  discriminator: { propertyName: 'type' },
  description: 'discriminated by `type`',
})

export const isBodyOf = <T extends ExportType>(type: T, value: ExportBody): value is ExportBody<T> => value.type === type

/**
 * Checks a body rebuilt from an event or from legacy query parameters, and a
 * request's body before its job is recorded (the runner checks its parameters
 * with this, so nothing accepted fails there). `part` names where the fields
 * came from in the errors.
 */
export const parseExportBody = (raw: unknown, part: 'body' | 'query' = 'body'): { body: ExportBody } | { errors: FieldError[] } => {
  if (Value.Check(bodyUnion, raw)) return { body: raw }
  const type = typeof raw === 'object' && raw !== null ? Reflect.get(raw, 'type') : undefined
  const schema = typeof type === 'string' && isExportType(type) ? exportBodySchemas[type] : undefined
  if (schema === undefined) return { errors: [{ field: 'type', message: `must be one of ${exportTypes.join(', ')}` }] }
  const errors = [...Value.Errors(schema, raw)].map((issue) => ({
    field: [part, ...issue.instancePath.split('/').filter(Boolean)].join('.'),
    message: issue.message,
  }))
  return { errors }
}

export const parametersOf = (body: ExportBody): ExportParameters => {
  const { type: _type, ...parameters } = body
  return parameters
}

export interface ExportTypeInfo {
  /** Permissions the caller needs, beyond the organization membership. */
  permissions: readonly Permission[]
  /** The legacy GET route of this data set (without /v1), or null. */
  legacyPath: string | null
  /**
   * The file shows credits as they stood at `before` (balances, arrears,
   * category, or a period it declares closed), so a `before` later than the
   * request is refused: it would report arrears of days that have not come.
   */
  asItStoodAtBefore: boolean
}

const receivables = ['ReadExport', 'ReadReceivables'] as const
const orders = ['ReadExport', 'ReadOrder'] as const
const debtors = ['ReadExport', 'ReadChildEntity'] as const

/** Who may export what, and where the type used to be served. */
export const exportTypeInfo: { [T in ExportType]: ExportTypeInfo } = {
  'receivables': { permissions: receivables, legacyPath: '/export/receivables', asItStoodAtBefore: false },
  'installments': { permissions: receivables, legacyPath: '/export/installments', asItStoodAtBefore: false },
  // Bureau files carry the debtors' identities next to their obligations.
  'credit-bureau-a': { permissions: [...receivables, 'ReadChildEntity'], legacyPath: '/export/credit-bureau-a', asItStoodAtBefore: true },
  'credit-bureau-b': { permissions: [...receivables, 'ReadChildEntity'], legacyPath: '/export/credit-bureau-b', asItStoodAtBefore: true },
  'payments': { permissions: orders, legacyPath: '/export/payments', asItStoodAtBefore: false },
  'ledger-a': { permissions: receivables, legacyPath: '/export/ledger-a', asItStoodAtBefore: false },
  'ledger-a-individual': { permissions: receivables, legacyPath: '/export/ledger-a-individual', asItStoodAtBefore: true },
  'ledger-a-clients': { permissions: receivables, legacyPath: '/export/ledger-a-clients', asItStoodAtBefore: true },
  'disbursements': { permissions: receivables, legacyPath: '/export/disbursements', asItStoodAtBefore: false },
  // Scoring cases carry each credit's automatic score and decision.
  'quantitative-scoring': { permissions: [...receivables, 'ReadAnalysis'], legacyPath: '/export/quantitative-scoring', asItStoodAtBefore: false },
  'refinance': { permissions: receivables, legacyPath: '/export/refinance', asItStoodAtBefore: false },
  'csv-a': { permissions: receivables, legacyPath: '/export/csv-a', asItStoodAtBefore: false },
  'receivables-cutoff': { permissions: receivables, legacyPath: '/export/receivables/cutoff', asItStoodAtBefore: true },
  'installments-cutoff': { permissions: receivables, legacyPath: '/export/installments/cutoff', asItStoodAtBefore: true },
  'orders-accounting': { permissions: orders, legacyPath: '/export/orders', asItStoodAtBefore: false },
  'debtors': { permissions: debtors, legacyPath: '/export/debtors', asItStoodAtBefore: false },
  'debtors-credit-active': { permissions: debtors, legacyPath: '/export/debtors/credit-active', asItStoodAtBefore: true },
  'debtors-credit-active-invoicing-a': { permissions: debtors, legacyPath: '/export/debtors/credit-active/invoicing-a', asItStoodAtBefore: true },
  'reports': { permissions: ['ExportReports'], legacyPath: null, asItStoodAtBefore: false },
}

export const CSV_CONTENT_TYPE = 'text/csv; charset=utf-8'

/** `receivables-2026-01-15.csv`: the type and the UTC date the export was requested. */
export const exportFileName = (type: string, requestedAt: string | Date, extension = 'csv'): string =>
  `${type}-${new Date(requestedAt).toISOString().slice(0, 10)}.${extension}`

export const contentDisposition = (fileName: string): string => `attachment; filename="${fileName}"`

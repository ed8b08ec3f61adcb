import { IsArray, IsObject, Type, type Static, type TObject, type TProperties, type TSchema } from 'typebox'
import { Value } from 'typebox/value'

/**
 * What a webhook template sees: `.Credit`, `.Order`, `.Trigger` and
 * `.Organization`, with Go-style exported names (PascalCase, `ID` for
 * identifiers). One TypeBox schema gives the TypeScript type, the zero-valued
 * "empty credit" of POST /webhook-test, and the shape the template checker
 * validates field chains against. Money and rates are decimal strings ("0"
 * when empty), times ISO 8601 strings ("" when not reached yet), counts
 * integers. Every field is always present; a natural debtor has a zero-valued
 * `Legal` and the other way round (look at `.Credit.Debtor.Type`).
 */
const Money = (description: string) => Type.String({ default: '0', description: `${description} (decimal string)` })
const Time = (description: string) => Type.String({ default: '', description: `${description} (ISO 8601 UTC; "" when not set)` })
const Text = (description: string) => Type.String({ description })
const Id = (description: string) => Type.String({ description: `${description} (UUID; "" when none)` })
const Count = (description: string) => Type.Integer({ description })

/**
 * Profile files (the profiles issue's `campo`s) a template can name as
 * `<Campo>FileID`. The checker accepts any `…FileID` name on a person, as
 * organizations may upload other fields; these are the ones always present.
 */
export const profileFileFields = [
  'work-certificate', 'identity-document-front', 'identity-document-back', 'bank-certificate', 'income-statement',
  'proof-of-address', 'rut', 'chamber-of-commerce', 'financial-statements', 'legal-representative-document',
] as const

/** `work-certificate` → `WorkCertificateFileID`. */
export const fileIdKey = (campo: string): string =>
  `${campo.split(/[-_\s]+/).filter(Boolean).map((part) => part[0]?.toUpperCase() + part.slice(1)).join('')}FileID`

const fileIdProperties = (): TProperties =>
  Object.fromEntries(profileFileFields.map((campo) => [fileIdKey(campo), Text(`id of the profile's ${campo} file ("" when none); fetch it with GET /v1/debtor/{debtorId}/profile/${campo}/{fileId}`)]))

/** Marks an object whose `…FileID` fields are open-ended. */
export const OPEN_FILE_IDS = 'x-file-ids'

const person = (properties: TProperties, description: string): TObject =>
  Type.Object({ ...properties, ...fileIdProperties() }, { description, [OPEN_FILE_IDS]: true })

const NaturalPerson = person({
  FirstName: Text('first name'),
  MiddleName: Text('middle name'),
  LastName: Text('last name'),
  SecondLastName: Text('second last name'),
  DocumentType: Text('CC, CE, TI, PP, PEP, PPT or NIT'),
  DocumentNumber: Text('document number'),
  BirthDate: Text('YYYY-MM-DD ("" when unknown)'),
  Age: Count('whole years at the render date (0 when the birth date is unknown)'),
  Gender: Text('female, male, other or ""'),
  Email: Text('e-mail address'),
  Phone: Text('phone number'),
  Address: Text('street address'),
  CityID: Id('city of GET /v1/cities'),
  MonthlyIncome: Money('monthly income'),
  EmploymentType: Text('formal, informal, independent, unemployed or ""'),
  EmployerName: Text('employer'),
  Occupation: Text('occupation'),
  EmploymentStartDate: Text('YYYY-MM-DD ("" when unknown)'),
}, 'the debtor when a natural person (zero-valued otherwise)')

const LegalRepresentative = Type.Object({
  FirstName: Text('first name'),
  LastName: Text('last name'),
  DocumentType: Text('document type'),
  DocumentNumber: Text('document number'),
  Email: Text('e-mail address'),
  Phone: Text('phone number'),
}, { description: 'legal representative' })

const LegalPerson = person({
  BusinessName: Text('registered business name'),
  TradeName: Text('trade name'),
  DocumentType: Text('document type (NIT)'),
  DocumentNumber: Text('document number'),
  TaxID: Text('NIT with verification digit'),
  LegalRepresentative,
  Email: Text('e-mail address'),
  Phone: Text('phone number'),
  Address: Text('street address'),
  CityID: Id('city of GET /v1/cities'),
  IncorporationDate: Text('YYYY-MM-DD ("" when unknown)'),
  EconomicActivity: Text('CIIU activity code'),
  MonthlyIncome: Money('monthly income'),
}, 'the debtor when a legal person (zero-valued otherwise)')

const Debtor = Type.Object({
  ID: Id('profile id of the debtor'),
  Type: Text('natural or legal ("" in the empty credit)'),
  Name: Text('full name of a natural person, business name of a legal one'),
  DocumentType: Text('document type'),
  DocumentNumber: Text('document number'),
  Email: Text('e-mail address'),
  Phone: Text('phone number'),
  Natural: NaturalPerson,
  Legal: LegalPerson,
}, { description: 'the debtor profile' })

const Installment = Type.Object({
  ID: Id('installment id'),
  Number: Count('1-based number in the schedule'),
  DueDate: Text('YYYY-MM-DD'),
  Amount: Money('installment amount (principal + interest)'),
  Principal: Money('principal part'),
  Interest: Money('interest part'),
  PaidAmount: Money('amount paid so far'),
  Outstanding: Money('amount still owed'),
  Status: Text('status of the installment'),
  PaidAt: Time('when it was paid in full'),
  DaysPastDue: Count('days past the due date while unpaid'),
}, { description: 'one installment of the schedule' })

const Credit = Type.Object({
  ID: Id('credit id'),
  Status: Text('Solicitado, Aprobado, Rechazado, Desembolsado, Anulado or Pagado ("" in the empty credit)'),
  OrganizationID: Id('lending organization'),
  CreditLineID: Id('credit line (product)'),
  CreditLineName: Text('name of the credit line'),
  Currency: Text('ISO 4217 currency code'),
  Principal: Money('principal lent'),
  Rate: Money('interest rate as the credit line states it'),
  RateType: Text('rate type of the credit line, e.g. FIXED'),
  Term: Count('term in months'),
  InstallmentAmount: Money('amount of a regular installment'),
  OutstandingBalance: Money('amount still owed'),
  PaidAmount: Money('amount paid so far'),
  DaysPastDue: Count('days past due of the oldest unpaid installment'),
  DisbursementMethod: Text('how it was disbursed'),
  DisbursementReference: Text('reference of the disbursement'),
  FirstDueDate: Text('YYYY-MM-DD of the first installment'),
  RequestedAt: Time('requested'),
  ApprovedAt: Time('approved'),
  RejectedAt: Time('rejected'),
  DisbursedAt: Time('disbursed'),
  CancelledAt: Time('cancelled'),
  PaidAt: Time('paid in full'),
  CreatedAt: Time('created'),
  UpdatedAt: Time('last changed'),
  Debtor,
  Installments: Type.Array(Installment, { description: 'the schedule, in order' }),
}, { description: 'the credit that triggered the send' })

const OrderMetadata = Type.Object({
  OriginalAmount: Money('amount before conversion'),
  ExchangeRate: Money('exchange rate applied'),
  Currency: Text('currency of the original amount'),
  ProcessingTime: Type.Number({ description: 'processing time reported by the provider' }),
}, { description: 'provider metadata of the order' })

const Order = Type.Object({
  ID: Id('payment order id'),
  CreditID: Id('credit'),
  InstallmentID: Id('installment ("" for a full-balance order)'),
  InstallmentNumber: Count('installment number (0 for a full-balance order)'),
  Amount: Money('amount'),
  Type: Text('order type, e.g. payment'),
  Provider: Text('payment provider'),
  Status: Text('order status, e.g. completed'),
  Method: Text('payment method'),
  CollectionCosts: Money('collection costs'),
  TransactionReference: Text('transaction reference'),
  PaymentReference: Text('payment reference'),
  ErrorMessage: Text('error message ("" when none)'),
  RetryCount: Count('retries'),
  GatewayOption: Text('gateway option'),
  OverrideMethod: Text('override method'),
  Key: Text('idempotency key of the creation request'),
  CreatorID: Id('who created the order'),
  ApproverID: Id('who approved the order'),
  CreatedAt: Time('created'),
  UpdatedAt: Time('last changed'),
  CompletedAt: Time('completed'),
  Metadata: OrderMetadata,
}, { description: 'the approved payment order (order approvals only; zero-valued otherwise)' })

const Trigger = Type.Object({
  Type: Text('PaymentOrderApproved, CreditDisbursed, manual or test'),
  EventID: Id('id of the triggering event ("" for test sends)'),
  OccurredAt: Time('when the trigger happened'),
  SendID: Id('id of this send (also the Standard Webhooks webhook-id)'),
}, { description: 'why this send happens' })

const Organization = Type.Object({
  ID: Id('organization id'),
  Name: Text('organization name'),
}, { description: 'the organization that owns the webhook' })

export const TemplateContextSchema = Type.Object({ Credit, Order, Trigger, Organization }, { description: 'the data of a webhook template' })

export type TemplateContext = Static<typeof TemplateContextSchema>
export type CreditContext = TemplateContext['Credit']
export type OrderContext = TemplateContext['Order']
export type TriggerContext = TemplateContext['Trigger']

/**
 * The one boundary between the credit read models and templates: phase 2
 * implements it over the credit, debtor and order read models. Everything a
 * template can reach goes through a function of this type.
 */
export type TemplateContextBuilder<Source> = (source: Source) => TemplateContext

/** The "empty credit": every field present with its zero value. */
export const emptyTemplateContext = (overrides: { Trigger?: Partial<TriggerContext>; Organization?: Partial<TemplateContext['Organization']> } = {}): TemplateContext => {
  const context: TemplateContext = Value.Create(TemplateContextSchema)
  return {
    ...context,
    Trigger: { ...context.Trigger, ...overrides.Trigger },
    Organization: { ...context.Organization, ...overrides.Organization },
  }
}

/** Every field path of the context (`Credit.Debtor.Natural.FirstName`, `Credit.Installments[].Amount`), for the docs check. */
export const contextPaths = (schema: TSchema = TemplateContextSchema, prefix = ''): string[] => {
  if (IsObject(schema)) {
    return Object.entries(schema.properties).flatMap(([name, child]) => {
      const path = prefix === '' ? name : `${prefix}.${name}`
      return [path, ...contextPaths(child, path)]
    })
  }
  if (IsArray(schema)) return contextPaths(schema.items, `${prefix}[]`)
  return []
}

import { IsArray, IsObject, Type, type Static, type TProperties, type TSchema, type TString } from 'typebox'
import { Value } from 'typebox/value'
import { acceptsFileField, allProfileFileFields, fileIdKey, type ProfileType } from '../events/profile.js'
import { deepFreeze } from '../shared/freeze.js'

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

/** The campos (profile file fields) a person of this type takes, each exposed as `<Campo>FileID`: exactly the profile read model's keys. */
export const fileIdKeysOf = (type: ProfileType): Array<`${string}FileID`> =>
  allProfileFileFields.filter((campo) => acceptsFileField(type, campo)).map(fileIdKey)

const fileIdProperties = (type: ProfileType): Record<`${string}FileID`, TString> =>
  Object.fromEntries(allProfileFileFields.filter((campo) => acceptsFileField(type, campo)).map((campo) => [fileIdKey(campo),
    Text(`id of the profile's ${campo} file ("" when none); fetch it with GET /v1/debtor/{debtorId}/profile/${campo}/{fileId}`)]))

const person = <P extends TProperties>(type: ProfileType, properties: P, description: string) =>
  Type.Object({ ...properties, ...fileIdProperties(type) }, { description })

const NaturalPerson = person('natural', {
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

const LegalPerson = person('legal', {
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
  PaidPrincipal: Money('principal paid so far'),
  PaidInterest: Money('interest paid so far'),
  WaivedInterest: Money('interest a payoff forgave, not accrued when the credit was paid off (0 otherwise)'),
  PaidAmount: Money('amount paid so far'),
  Outstanding: Money('amount still owed'),
  Status: Text('pending, partial or paid'),
  PaidAt: Time('when it was paid in full'),
  DaysPastDue: Count('days past the due date while anything is owed on a Desembolsado credit (else 0)'),
}, { description: 'one installment of the schedule' })

const Score = Type.Object({
  ScoringModelID: Id('scoring model that scored the request'),
  Score: Money('the score'),
  Decision: Text('approve, reject or review ("" when not scored)'),
  Reasons: Type.Array(Type.String(), { description: 'reasons the model gave' }),
  ScoredAt: Time('scored'),
}, { description: 'the automatic score of the request (zero-valued when not scored)' })

const Credit = Type.Object({
  ID: Id('credit id'),
  Status: Text('Solicitado, Aprobado, Rechazado, Desembolsado, Anulado or Pagado ("" in the empty credit)'),
  OrganizationID: Id('lending organization'),
  CreditLineID: Id('credit line (product)'),
  CreditLineName: Text('name of the credit line'),
  DebtorID: Id('profile id of the debtor'),
  Currency: Text('ISO 4217 currency code'),
  Principal: Money('principal lent'),
  Rate: Money('the line\'s rate percentage per year at request time'),
  RateType: Text('FIXED (effective annual) or FIXED_NOMINAL (nominal annual paid monthly)'),
  MonthlyRate: Money('monthly rate as a percentage (10 decimals)'),
  Term: Count('term in months'),
  InstallmentAmount: Money('amount of a regular installment'),
  TotalInterest: Money('interest of the whole schedule'),
  TotalAmount: Money('principal plus interest of the whole schedule'),
  OutstandingBalance: Money('amount still owed (principal + interest)'),
  OutstandingPrincipal: Money('principal still owed'),
  OutstandingInterest: Money('interest still owed'),
  PaidAmount: Money('amount paid so far'),
  UnappliedAmount: Money('received beyond what was owed (to refund or re-apply)'),
  InstallmentsPaid: Count('installments paid in full'),
  InstallmentsCount: Count('installments in the schedule'),
  NextDueDate: Text('YYYY-MM-DD of the oldest installment with anything owed ("" when nothing is owed)'),
  DaysPastDue: Count('days the oldest unpaid installment is overdue (Desembolsado credits; else 0)'),
  DisbursementMethod: Text('how it was disbursed'),
  DisbursementReference: Text('reference of the disbursement'),
  FirstDueDate: Text('YYYY-MM-DD of the first installment ("" before disbursement)'),
  MaturityDate: Text('YYYY-MM-DD of the last installment ("" before disbursement)'),
  RequestedAt: Time('requested'),
  ApprovedAt: Time('approved'),
  ApprovedBy: Text('user or client that approved it'),
  RejectedAt: Time('rejected'),
  RejectionReason: Text('why it was rejected'),
  DisbursedAt: Time('disbursed'),
  CancelledAt: Time('cancelled'),
  CancellationReason: Text('why it was cancelled'),
  PaidAt: Time('paid in full'),
  CreatedAt: Time('created (the request)'),
  UpdatedAt: Time('last changed'),
  Score,
  Debtor,
  Installments: Type.Array(Installment, { description: 'the schedule, in order' }),
}, { description: 'the credit that triggered the send' })

const OrderMetadata = Type.Object({
  OriginalAmount: Money('amount before conversion (orders are in the credit\'s currency: the amount)'),
  ExchangeRate: Money('exchange rate applied (1)'),
  Currency: Text('currency of the original amount'),
  ProcessingTime: Type.Number({ description: 'milliseconds from creation to completion' }),
}, { description: 'provider metadata of the order' })

const Order = Type.Object({
  ID: Id('payment order id'),
  CreditID: Id('credit'),
  InstallmentID: Text('installment id, or zero for a full-balance order ("" when none)'),
  InstallmentNumber: Count('installment number (0 for a full-balance order)'),
  Amount: Money('amount'),
  Currency: Text('ISO 4217 currency code'),
  Type: Text('order type: payment'),
  Provider: Text('payment provider: manual or sandbox'),
  Status: Text('order status: completed when approved'),
  Method: Text('payment method'),
  CollectionCosts: Money('collection costs'),
  TransactionReference: Text('the provider\'s transaction reference'),
  PaymentReference: Text('payment reference'),
  ErrorMessage: Text('error message ("" when none)'),
  RetryCount: Count('resubmissions to the provider'),
  GatewayOption: Text('gateway option'),
  OverrideMethod: Text('override method'),
  Key: Text('idempotency key of the creation request'),
  CreatorID: Text('user or client that created the order'),
  ApproverID: Text('user or client that approved the order ("" when the provider completed it)'),
  PaymentDate: Time('value date of the payment'),
  CreatedAt: Time('created'),
  UpdatedAt: Time('last changed'),
  CompletedAt: Time('completed'),
  Metadata: OrderMetadata,
}, { description: 'the approved payment order (order approvals and their re-sends; zero-valued otherwise)' })

const Trigger = Type.Object({
  Type: Text('PaymentOrderApproved, CreditDisbursed, manual or test'),
  OriginalType: Text('for a manual re-send, the Type of the automatic send its chain of re-sends started from; otherwise Type'),
  EventID: Id('id of the triggering event ("" for manual and test sends)'),
  LogID: Id('the send a manual re-send repeats ("" otherwise)'),
  OccurredAt: Time('when the trigger happened (for manual and test sends: when asked)'),
  SendID: Id('id of this send (the log ID)'),
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

// Built once: creating it from the schema walks every field, and every send's context starts from it.
const EMPTY: TemplateContext = deepFreeze(Value.Create(TemplateContextSchema))

/** The "empty credit": every field present with its zero value (frozen: build new objects from it). */
export const emptyTemplateContext = (overrides: { Trigger?: Partial<TriggerContext>; Organization?: Partial<TemplateContext['Organization']> } = {}): TemplateContext => ({
  ...EMPTY,
  Trigger: { ...EMPTY.Trigger, ...overrides.Trigger },
  Organization: { ...EMPTY.Organization, ...overrides.Organization },
})

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

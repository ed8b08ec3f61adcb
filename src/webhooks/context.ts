import type { CreditState } from '../events/creditState.js'
import type { LegalPerson, NaturalPerson } from '../events/profile.js'
import { creditFigures, installmentStatus } from '../projections/credits.js'
import type { OrderDoc } from '../projections/paymentOrders.js'
import type { ProfileDoc, WithFileIds } from '../projections/profiles.js'
import { ageOn } from '../shared/age.js'
import { dayOf } from '../shared/amortization.js'
import { deepFreeze } from '../shared/freeze.js'
import { installmentAmounts, installmentArrearsDays, isPaid, type InstallmentPosition } from '../shared/installments.js'
import { toMoneyString } from '../shared/money.js'
import { emptyTemplateContext, fileIdKeysOf, type CreditContext, type OrderContext, type TemplateContext, type TriggerContext } from '../templates/context.js'

/** What a send renders from: the read models' documents as the firing (or a manual re-send) found them. */
export interface ContextSource {
  credit: CreditState
  /** The debtor's profile; null when the read model has none (the debtor is then zero-valued but for its ID). */
  debtor: ProfileDoc | null
  /** The payment order of an order approval; null otherwise. */
  order: OrderDoc | null
  organization: { id: string; name: string }
  trigger: TriggerContext
  /** The render date: ages and days past due are counted to it. */
  at: Date
}

type Debtor = CreditContext['Debtor']
type NaturalContext = Debtor['Natural']
type LegalContext = Debtor['Legal']

const fileIds = (person: WithFileIds<object> | null, type: 'natural' | 'legal'): Record<`${string}FileID`, string> =>
  Object.fromEntries(fileIdKeysOf(type).map((key) => [key, person?.[key] ?? '']))

const naturalContext = (natural: WithFileIds<NaturalPerson>, at: Date): NaturalContext => ({
  FirstName: natural.firstName, MiddleName: natural.middleName ?? '', LastName: natural.lastName, SecondLastName: natural.secondLastName ?? '',
  DocumentType: natural.documentType, DocumentNumber: natural.documentNumber, BirthDate: natural.birthDate ?? '',
  Age: natural.birthDate === undefined ? 0 : ageOn(natural.birthDate, at), Gender: natural.gender ?? '', Email: natural.email ?? '',
  Phone: natural.phone ?? '', Address: natural.address ?? '', CityID: natural.cityId ?? '', MonthlyIncome: natural.monthlyIncome ?? '0',
  EmploymentType: natural.employmentType ?? '', EmployerName: natural.employerName ?? '', Occupation: natural.occupation ?? '',
  EmploymentStartDate: natural.employmentStartDate ?? '', ...fileIds(natural, 'natural'),
})

const legalContext = (legal: WithFileIds<LegalPerson>, empty: LegalContext): LegalContext => {
  const representative = legal.legalRepresentative
  return {
    BusinessName: legal.businessName, TradeName: legal.tradeName ?? '', DocumentType: legal.documentType, DocumentNumber: legal.documentNumber,
    TaxID: legal.taxId ?? '',
    LegalRepresentative: representative === undefined ? empty.LegalRepresentative : {
      FirstName: representative.firstName, LastName: representative.lastName, DocumentType: representative.documentType,
      DocumentNumber: representative.documentNumber, Email: representative.email ?? '', Phone: representative.phone ?? '',
    },
    Email: legal.email ?? '', Phone: legal.phone ?? '', Address: legal.address ?? '', CityID: legal.cityId ?? '',
    IncorporationDate: legal.incorporationDate ?? '', EconomicActivity: legal.economicActivity ?? '', MonthlyIncome: legal.monthlyIncome ?? '0',
    ...fileIds(legal, 'legal'),
  }
}

const debtorContext = (debtorId: string, profile: ProfileDoc | null, at: Date, empty: Debtor): Debtor => {
  if (profile === null) return { ...empty, ID: debtorId }
  const natural = profile.natural === null ? empty.Natural : naturalContext(profile.natural, at)
  const legal = profile.legal === null ? empty.Legal : legalContext(profile.legal, empty.Legal)
  const name = profile.natural !== null
    ? [profile.natural.firstName, profile.natural.middleName, profile.natural.lastName, profile.natural.secondLastName].filter((p) => p !== undefined && p !== '').join(' ')
    : profile.legal?.businessName ?? ''
  const person = profile.natural ?? profile.legal
  return {
    ID: profile._id, Type: profile.type, Name: name, DocumentType: person?.documentType ?? '', DocumentNumber: person?.documentNumber ?? '',
    Email: person?.email ?? '', Phone: person?.phone ?? '', Natural: natural, Legal: legal,
  }
}

type InstallmentContext = CreditContext['Installments'][number]

const installmentContext = (credit: CreditState, installment: InstallmentPosition, today: string): InstallmentContext => {
  const { paidPrincipal, paidInterest, paidAmount, outstanding } = installmentAmounts(installment, credit.currency)
  return {
    ID: installment.installmentId, Number: installment.number, DueDate: installment.dueDate, Amount: installment.amount,
    Principal: installment.principal, Interest: installment.interest, PaidPrincipal: paidPrincipal, PaidInterest: paidInterest,
    WaivedInterest: toMoneyString(installment.waivedInterest ?? '0', credit.currency), PaidAmount: paidAmount, Outstanding: outstanding, Status: installmentStatus(installment),
    PaidAt: installment.paidAt ?? '', DaysPastDue: installmentArrearsDays(credit.status, installment, today),
  }
}

/**
 * Contexts kept by the object they were made from, with what else they
 * depend on. Installment positions and profile documents are replaced,
 * never changed (evolve makes new ones, the read store freezes its own), so
 * a credit's next render remakes only the installments a payment replaced:
 * each approval's webhooks otherwise turned every installment's amounts into
 * text again. An entry lives as long as the object it was made from.
 */
interface Kept<T> {
  /** What else the context depends on. */
  key: string
  context: T
}

const keptInstallments = new WeakMap<InstallmentPosition, Kept<InstallmentContext>>()
const keptDebtors = new WeakMap<ProfileDoc, Kept<Debtor>>()

const keptInstallmentContext = (credit: CreditState, installment: InstallmentPosition, today: string): InstallmentContext => {
  const key = `${credit.currency} ${credit.status} ${today}`
  const kept = keptInstallments.get(installment)
  if (kept?.key === key) return kept.context
  const context = deepFreeze(installmentContext(credit, installment, today))
  keptInstallments.set(installment, { key, context })
  return context
}

/** Ages are counted to the render day. */
const keptDebtorContext = (debtorId: string, profile: ProfileDoc | null, at: Date, today: string, empty: Debtor): Debtor => {
  if (profile === null) return debtorContext(debtorId, profile, at, empty)
  const kept = keptDebtors.get(profile)
  if (kept?.key === today) return kept.context
  const context = deepFreeze(debtorContext(debtorId, profile, at, empty))
  keptDebtors.set(profile, { key: today, context })
  return context
}

const creditContext = (source: ContextSource, empty: CreditContext): CreditContext => {
  const { credit, at } = source
  const today = dayOf(at)
  const figures = creditFigures(credit)
  const oldestUnpaid = credit.installments.find((i) => !isPaid(i))
  const score = credit.score
  return {
    ID: credit.creditId, Status: credit.status === 'none' ? '' : credit.status, OrganizationID: credit.organizationId,
    CreditLineID: credit.creditLineId, CreditLineName: credit.creditLineName, DebtorID: credit.debtorId, Currency: credit.currency,
    Principal: credit.principal, Rate: credit.rate, RateType: credit.rateType, MonthlyRate: credit.monthlyRate, Term: credit.term,
    InstallmentAmount: credit.installmentAmount, TotalInterest: credit.totalInterest, TotalAmount: credit.totalAmount,
    OutstandingBalance: figures.outstandingTotal, OutstandingPrincipal: figures.outstandingPrincipal, OutstandingInterest: figures.outstandingInterest,
    PaidAmount: figures.paidTotal, UnappliedAmount: toMoneyString(credit.unapplied, credit.currency), InstallmentsPaid: figures.installmentsPaid,
    InstallmentsCount: credit.installments.length, NextDueDate: figures.nextDueDate ?? '',
    DaysPastDue: oldestUnpaid === undefined ? 0 : installmentArrearsDays(credit.status, oldestUnpaid, today),
    DisbursementMethod: credit.disbursementMethod ?? '', DisbursementReference: credit.disbursementReference ?? '',
    FirstDueDate: credit.firstDueDate ?? '', MaturityDate: credit.maturityDate ?? '', RequestedAt: credit.requestedAt,
    ApprovedAt: credit.approvedAt ?? '', ApprovedBy: credit.approvedBy ?? '', RejectedAt: credit.rejectedAt ?? '',
    RejectionReason: credit.rejectionReason ?? '', DisbursedAt: credit.disbursedAt ?? '', CancelledAt: credit.cancelledAt ?? '',
    CancellationReason: credit.cancellationReason ?? '', PaidAt: credit.paidAt ?? '', CreatedAt: credit.requestedAt, UpdatedAt: credit.updatedAt,
    Score: score === null ? empty.Score : {
      ScoringModelID: score.scoringModelId, Score: score.score, Decision: score.decision, Reasons: [...score.reasons], ScoredAt: score.scoredAt,
    },
    Debtor: keptDebtorContext(credit.debtorId, source.debtor, at, today, empty.Debtor),
    Installments: credit.installments.map((i) => keptInstallmentContext(credit, i, today)),
  }
}

const orderContext = (doc: OrderDoc, empty: OrderContext): OrderContext => {
  const order = doc.order
  if (order === null) return empty
  return {
    ID: order.orderId, CreditID: order.creditId, InstallmentID: order.installmentId, InstallmentNumber: order.installmentNumber,
    Amount: order.amount, Currency: order.currency, Type: order.type, Provider: order.provider, Status: doc.status === 'none' ? '' : doc.status,
    Method: order.method, CollectionCosts: order.collectionCosts, TransactionReference: doc.transactionReference,
    PaymentReference: doc.paymentReference, ErrorMessage: doc.errorMessage, RetryCount: 0, GatewayOption: order.gatewayOption,
    OverrideMethod: order.overrideMethod, Key: order.key, CreatorID: order.creatorId, ApproverID: doc.approverId, PaymentDate: order.paymentDate,
    CreatedAt: order.createdAt, UpdatedAt: doc.updatedAt, CompletedAt: doc.completedAt ?? '',
    Metadata: { OriginalAmount: order.amount, ExchangeRate: '1', Currency: order.currency, ProcessingTime: doc.processingTime },
  }
}

/**
 * The one mapping from read models to what a template sees: the credit (its
 * aggregate state as the credit read model stores it), the debtor's profile,
 * the order of an approval, the organization and the trigger.
 */
export const templateContextOf = (source: ContextSource): TemplateContext => {
  const empty = emptyTemplateContext()
  return {
    Credit: creditContext(source, empty.Credit),
    Order: source.order === null ? empty.Order : orderContext(source.order, empty.Order),
    Trigger: source.trigger,
    Organization: { ID: source.organization.id, Name: source.organization.name },
  }
}

/**
 * The context a webhook whose sends may not carry scores renders: the credit's
 * `Score` zero-valued, as for a credit never scored (see `WebhookDoc.scoresHidden`).
 */
export const contextFor = (context: TemplateContext, webhook: { scoresHidden?: boolean }): TemplateContext =>
  webhook.scoresHidden === true ? { ...context, Credit: { ...context.Credit, Score: emptyTemplateContext().Credit.Score } } : context

import { creditAggregate, type CreditState } from '../commands/credit.js'
import type { RecordedOf } from '../events/catalogue.js'
import type { LegalPerson, NaturalPerson, ProfileType } from '../events/profile.js'
import { deepFreeze } from '../shared/freeze.js'
import { exact, isZero, minus, plus, toMoneyText, ZERO, type ExactDecimal } from '../shared/exactDecimal.js'
import type { InstallmentPosition } from '../shared/installments.js'
import type { CreditStateName } from '../shared/lending.js'
import { applyAt, currentOf, defineProjection, updateAt } from './projection.js'
import type { Filter, ReadCollection, ReadStore } from './readStore.js'

/** The debtor as credits show it: projected here from profile events, so this model depends on no other read model. */
export interface DebtorSummary {
  _id: string
  _position?: number
  organizationId: string
  type: ProfileType
  name: string
  documentType: string
  documentNumber: string
  email: string
  phone: string
  natural: NaturalPerson | null
  legal: LegalPerson | null
  /** field (campo) → file id of the profile's attached files. */
  files: Record<string, string>
}

/** Figures derived from the installments, kept on the document so lists and exports can filter on them. */
export interface CreditFigures {
  outstandingPrincipal: string
  outstandingInterest: string
  outstandingTotal: string
  paidTotal: string
  installmentsPaid: number
  /** Due date of the oldest installment with anything owed; null when nothing is owed. */
  nextDueDate: string | null
}

/**
 * A credit document is the credit aggregate's own state (the same fold the
 * command side and `?asOf` use), plus the debtor summary and derived figures.
 */
export type CreditDoc = CreditState & CreditFigures & {
  _id: string
  _position?: number
  debtor: Omit<DebtorSummary, '_id' | '_position'> & { id: string } | null
}

/** Installments as their own documents, for schedules and exports that stream them by organization and date. */
export interface InstallmentDoc extends InstallmentPosition {
  _id: string
  _position?: number
  organizationId: string
  creditId: string
  creditLineId: string
  debtorId: string
  currency: string
  creditState: CreditStateName
  paidAmount: string
  outstanding: string
  status: 'pending' | 'partial' | 'paid'
  disbursedAt: string | null
}

const credits = {
  name: 'credits',
  indexes: [{ organizationId: 1, requestedAt: -1 }, { debtorId: 1 }, { creditLineId: 1 }, { organizationId: 1, status: 1 },
    { organizationId: 1, disbursedAt: 1 }, { organizationId: 1, updatedAt: 1 }],
} as const
const installments = {
  name: 'credit_installments',
  indexes: [{ creditId: 1, number: 1 }, { organizationId: 1, dueDate: 1 }, { organizationId: 1, status: 1 }, { organizationId: 1, creditState: 1 }],
} as const
const debtors = { name: 'credit_debtors', indexes: [{ organizationId: 1 }] } as const

interface InstallmentFigures {
  paid: ExactDecimal
  owedPrincipal: ExactDecimal
  owedInterest: ExactDecimal
  owed: ExactDecimal
}

/**
 * Figures of installments as stored: a stored installment is frozen and
 * shared by every later state of its credit until a payment reaches it, so
 * each event computes only the installments it changed.
 */
const storedFigures = new WeakMap<InstallmentPosition, InstallmentFigures>()

/** What is owed and paid on one installment, exactly. */
const positionOf = (installment: InstallmentPosition): InstallmentFigures => {
  const known = storedFigures.get(installment)
  if (known !== undefined) return known
  const paidPrincipal = exact(installment.paidPrincipal)
  const paidInterest = exact(installment.paidInterest)
  const owedPrincipal = minus(exact(installment.principal), paidPrincipal)
  const owedInterest = minus(exact(installment.interest), paidInterest)
  const figures = { paid: plus(paidPrincipal, paidInterest), owedPrincipal, owedInterest, owed: plus(owedPrincipal, owedInterest) }
  if (Object.isFrozen(installment)) storedFigures.set(installment, figures)
  return figures
}

/** A new installment object with the amounts of the one it replaces (a disbursement moves due dates only) takes over its figures. */
const carryFigures = (before: readonly InstallmentPosition[], after: readonly InstallmentPosition[]): void => {
  if (before.length !== after.length) return
  for (let index = 0; index < after.length; index++) {
    const previous = before[index]
    const next = after[index]
    if (previous === undefined || next === undefined || previous === next || storedFigures.has(next)) continue
    const known = storedFigures.get(previous)
    if (known !== undefined && previous.principal === next.principal && previous.interest === next.interest
      && previous.paidPrincipal === next.paidPrincipal && previous.paidInterest === next.paidInterest) storedFigures.set(next, known)
  }
}

export const creditFigures = (state: CreditState): CreditFigures => {
  let principal = ZERO
  let interest = ZERO
  let total = ZERO
  let paidTotal = ZERO
  let installmentsPaid = 0
  let nextDueDate: string | null = null
  for (const installment of state.installments) {
    const position = positionOf(installment)
    principal = plus(principal, position.owedPrincipal)
    interest = plus(interest, position.owedInterest)
    total = plus(total, position.owed)
    paidTotal = plus(paidTotal, position.paid)
    if (isZero(position.owed)) installmentsPaid += 1
    else nextDueDate ??= installment.dueDate
  }
  const currency = state.currency === '' ? undefined : state.currency
  return {
    outstandingPrincipal: toMoneyText(principal, currency),
    outstandingInterest: toMoneyText(interest, currency),
    outstandingTotal: toMoneyText(total, currency),
    paidTotal: toMoneyText(paidTotal, currency),
    installmentsPaid,
    nextDueDate,
  }
}

const statusOf = (position: InstallmentFigures): InstallmentDoc['status'] => {
  if (isZero(position.owed)) return 'paid'
  return isZero(position.paid) ? 'pending' : 'partial'
}

export const installmentStatus = (installment: InstallmentPosition): InstallmentDoc['status'] => statusOf(positionOf(installment))

const installmentDoc = (state: CreditState, status: CreditStateName, installment: InstallmentPosition): InstallmentDoc => {
  const position = positionOf(installment)
  return {
    ...installment,
    _id: installment.installmentId,
    organizationId: state.organizationId,
    creditId: state.creditId,
    creditLineId: state.creditLineId,
    debtorId: state.debtorId,
    currency: state.currency,
    creditState: status,
    paidAmount: toMoneyText(position.paid, state.currency),
    outstanding: toMoneyText(position.owed, state.currency),
    status: statusOf(position),
    disbursedAt: state.disbursedAt,
  }
}

const personName = (natural: NaturalPerson | null, legal: LegalPerson | null): string =>
  natural !== null
    ? [natural.firstName, natural.middleName, natural.lastName, natural.secondLastName].filter((p) => p !== undefined && p !== '').join(' ')
    : legal?.businessName ?? ''

const summarize = (doc: DebtorSummary): DebtorSummary => {
  const person = doc.natural ?? doc.legal
  return {
    ...doc, name: personName(doc.natural, doc.legal), documentType: person?.documentType ?? '', documentNumber: person?.documentNumber ?? '',
    email: person?.email ?? '', phone: person?.phone ?? '',
  }
}

/** The debtor as a credit shows it, from a profile's current fields (also used to show a credit as of a past moment). */
export const debtorOfProfile = (profile: {
  profileId: string; organizationId: string; type: ProfileType; natural: NaturalPerson | null; legal: LegalPerson | null; files: Record<string, string>
}): CreditDoc['debtor'] => debtorOf(summarize({
  _id: profile.profileId, organizationId: profile.organizationId, type: profile.type, name: '', documentType: '', documentNumber: '', email: '',
  phone: '', natural: profile.natural, legal: profile.legal, files: profile.files,
}))

const debtorOf = (summary: DebtorSummary | null): CreditDoc['debtor'] => {
  if (summary === null) return null
  const { _id, _position, ...rest } = summary
  return { id: _id, ...rest }
}

type CreditEventOf = RecordedOf<'CreditRequested' | 'CreditApproved' | 'CreditRejected' | 'CreditCancelled' | 'CreditDisbursed' | 'CreditScored' | 'CreditPaymentApplied' | 'CreditPaid' | 'TaxApplied'>

/** Installments a credit event changed: all of them when the state or the schedule moved, else the ones a payment reached. */
const touchedInstallments = (event: CreditEventOf, before: CreditState, after: CreditState): InstallmentPosition[] => {
  if (event.type === 'CreditPaymentApplied') {
    const reached = new Set(event.data.allocations.map((a) => a.installmentId))
    return after.installments.filter((i) => reached.has(i.installmentId))
  }
  return before.status !== after.status || event.type === 'CreditDisbursed' ? after.installments : []
}

const projectCredit = async (store: ReadStore, creditId: string, event: CreditEventOf, position: number) => {
  const creditDocs = store.collection<CreditDoc>(credits)
  const current = await currentOf(creditDocs, creditId)
  if (current !== null && (current._position ?? 0) >= position) return
  if (current === null && event.type !== 'CreditRequested') return
  // The document is the state plus its own fields: evolve keeps them where they are, and the new document overwrites them.
  const before: CreditState = current ?? creditAggregate.initialState()
  const after = creditAggregate.evolve(before, event)
  if (after.status === 'none') return
  // Frozen now rather than when the credit document is stored, so the figures of each installment are computed once.
  deepFreeze(after.installments)
  carryFigures(before.installments, after.installments)
  const debtor = current?.debtor ?? debtorOf(await store.collection<DebtorSummary>(debtors).get(after.debtorId))
  const status = after.status
  const installmentDocs = store.collection<InstallmentDoc>(installments)
  for (const installment of touchedInstallments(event, before, after)) {
    await applyAt(installmentDocs, installment.installmentId, position, () => installmentDoc(after, status, installment))
  }
  await applyAt(creditDocs, after.creditId, position, () => ({ ...after, ...creditFigures(after), _id: after.creditId, debtor }))
}

const refreshDebtorOnCredits = async (creditDocs: ReadCollection<CreditDoc>, summary: DebtorSummary, position: number) => {
  for (const credit of await creditDocs.find({ debtorId: summary._id })) {
    await updateAt(creditDocs, credit._id, position, (doc) => ({ ...doc, debtor: debtorOf(summary) }))
  }
}

export const creditsProjection = defineProjection({
  name: 'credits',
  handles: ['CreditRequested', 'CreditApproved', 'CreditRejected', 'CreditCancelled', 'CreditDisbursed', 'CreditScored', 'CreditPaymentApplied',
    'CreditPaid', 'ProfileCreated', 'ProfileUpdated', 'ProfileFileAttached', 'TaxApplied'],
  collections: [credits, installments, debtors],
  async project(store, event, position) {
    const debtorDocs = store.collection<DebtorSummary>(debtors)
    switch (event.type) {
      case 'ProfileCreated':
        return applyAt(debtorDocs, event.data.profileId, position, () => summarize({
          _id: event.data.profileId, organizationId: event.data.organizationId, type: event.data.type, name: '', documentType: '',
          documentNumber: '', email: '', phone: '', natural: event.data.natural, legal: event.data.legal, files: {},
        }))
      case 'ProfileUpdated':
      case 'ProfileFileAttached': {
        const current = await debtorDocs.get(event.data.profileId)
        if (current === null || (current._position ?? 0) >= position) return
        const next = event.type === 'ProfileUpdated'
          ? summarize({
            ...current,
            natural: current.natural === null || event.data.natural === undefined ? current.natural : { ...current.natural, ...event.data.natural },
            legal: current.legal === null || event.data.legal === undefined ? current.legal : { ...current.legal, ...event.data.legal },
          })
          : { ...current, files: { ...current.files, [event.data.field]: event.data.fileId } }
        await refreshDebtorOnCredits(store.collection<CreditDoc>(credits), next, position)
        return applyAt(debtorDocs, next._id, position, () => next)
      }
      case 'TaxApplied':
        // Taxes on a credit's principal; those on payment orders belong to the orders' model.
        return event.data.appliesTo === 'CREDIT' ? projectCredit(store, event.data.subjectId, event, position) : undefined
      default:
        return projectCredit(store, event.data.creditId, event, position)
    }
  },
})

export interface CreditListQuery {
  organizationId: string
  state?: CreditStateName
  debtorId?: string
  creditLineId?: string
  offset: number
  limit: number
}

export const creditQueries = (store: ReadStore) => {
  const creditDocs = store.collection<CreditDoc>(credits)
  const installmentDocs = store.collection<InstallmentDoc>(installments)
  return {
    /** A credit of one organization (with its installments embedded); another organization's credit is null. */
    get: async (organizationId: string, creditId: string) => {
      const doc = await creditDocs.get(creditId)
      return doc !== null && doc.organizationId === organizationId ? doc : null
    },
    list: async (query: CreditListQuery) => {
      const filter: Filter = { organizationId: query.organizationId }
      if (query.state !== undefined) filter['status'] = query.state
      if (query.debtorId !== undefined) filter['debtorId'] = query.debtorId
      if (query.creditLineId !== undefined) filter['creditLineId'] = query.creditLineId
      const [items, total] = await Promise.all([
        creditDocs.find(filter, { sort: { requestedAt: -1, _id: 1 }, skip: query.offset, limit: query.limit }),
        creditDocs.count(filter),
      ])
      return { items, total }
    },
    /** Credits of an organization, for exports: filter in the MongoDB query language, streamed. */
    stream: (organizationId: string, filter: Filter = {}) => creditDocs.stream({ ...filter, organizationId }),
    /** Installment documents of an organization (e.g. `{dueDate: {$lte: '2026-06-30'}}`), streamed. */
    streamInstallments: (organizationId: string, filter: Filter = {}) => installmentDocs.stream({ ...filter, organizationId }),
    installmentsOf: (creditId: string) => installmentDocs.find({ creditId }, { sort: { number: 1 } }),
    /** How many credits (installments) `stream` (`streamInstallments`) would yield for the filter, for export progress. */
    count: (organizationId: string, filter: Filter = {}) => creditDocs.count({ ...filter, organizationId }),
    countInstallments: (organizationId: string, filter: Filter = {}) => installmentDocs.count({ ...filter, organizationId }),
  }
}

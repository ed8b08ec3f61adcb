import type { RecordedOf } from '../events/catalogue.js'
import { evolveCredit, initialCreditState, type CreditState } from '../events/creditState.js'
import { applyPersonChanges, type LegalPerson, type NaturalPerson, type ProfileType } from '../events/profile.js'
import { exact, isZero, minus, plus, toMoneyText, ZERO, type ExactDecimal } from '../shared/exactDecimal.js'
import { deepFreeze } from '../shared/freeze.js'
import { chargeableInterest, type InstallmentPosition } from '../shared/installments.js'
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
  // The list's order after each set of equalities it filters by, so SQLite and MongoDB read a page (and count its total) from an index.
  indexes: [{ organizationId: 1, requestedAt: -1, _id: -1 }, { debtorId: 1 }, { creditLineId: 1 }, { organizationId: 1, status: 1, requestedAt: -1, _id: -1 },
    { organizationId: 1, debtorId: 1, requestedAt: -1, _id: -1 }, { organizationId: 1, creditLineId: 1, requestedAt: -1, _id: -1 },
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

/** What is owed and paid on one installment, exactly. */
const positionOf = (installment: InstallmentPosition): InstallmentFigures => {
  const paidPrincipal = exact(installment.paidPrincipal)
  const paidInterest = exact(installment.paidInterest)
  const owedPrincipal = minus(exact(installment.principal), paidPrincipal)
  const owedInterest = minus(chargeableInterest(installment), paidInterest)
  return { paid: plus(paidPrincipal, paidInterest), owedPrincipal, owedInterest, owed: plus(owedPrincipal, owedInterest) }
}

/**
 * The figures of the installments one event looks at, each read once: a
 * table per event rather than one kept beside every stored installment
 * (a rebuild made that table a million entries long, and its lookups cost
 * more than reading the few amounts an event changes).
 */
type Positions = (installment: InstallmentPosition) => InstallmentFigures

const positionsOfOneEvent = (): Positions => {
  const read = new Map<InstallmentPosition, InstallmentFigures>()
  return (installment) => {
    let figures = read.get(installment)
    if (figures === undefined) {
      figures = positionOf(installment)
      read.set(installment, figures)
    }
    return figures
  }
}

/** Two versions of an installment owe and have paid the same (a disbursement moves due dates only). */
const sameAmounts = (a: InstallmentPosition, b: InstallmentPosition): boolean =>
  a === b || (a.principal === b.principal && a.interest === b.interest && a.paidPrincipal === b.paidPrincipal && a.paidInterest === b.paidInterest
    && a.waivedInterest === b.waivedInterest)

/** What a schedule owes and has paid, exactly, and where its first installment with anything owed is (-1: none). */
interface ScheduleFigures {
  principal: ExactDecimal
  interest: ExactDecimal
  total: ExactDecimal
  paidTotal: ExactDecimal
  installmentsPaid: number
  firstOwed: number
}

/**
 * Figures of frozen installment arrays: a credit event replaces a few
 * installments of its credit's array at most, so the next array's figures are
 * this one's with the replaced installments' amounts taken out and the new
 * ones' put in, rather than a sum over every installment again. An entry
 * lives as long as its array, i.e. about one per credit.
 */
const storedScheduleFigures = new WeakMap<readonly InstallmentPosition[], ScheduleFigures>()

const summedFigures = (installments: readonly InstallmentPosition[], positions: Positions): ScheduleFigures => {
  const figures: ScheduleFigures = { principal: ZERO, interest: ZERO, total: ZERO, paidTotal: ZERO, installmentsPaid: 0, firstOwed: -1 }
  for (let index = 0; index < installments.length; index++) {
    const installment = installments[index]
    if (installment === undefined) continue
    const position = positions(installment)
    figures.principal = plus(figures.principal, position.owedPrincipal)
    figures.interest = plus(figures.interest, position.owedInterest)
    figures.total = plus(figures.total, position.owed)
    figures.paidTotal = plus(figures.paidTotal, position.paid)
    if (isZero(position.owed)) figures.installmentsPaid += 1
    else if (figures.firstOwed < 0) figures.firstOwed = index
  }
  return figures
}

/** `after`'s figures from `before`'s (known), installments at the same places: only the replaced ones are read. */
const changedFigures = (
  before: readonly InstallmentPosition[], known: ScheduleFigures, after: readonly InstallmentPosition[], positions: Positions,
): ScheduleFigures => {
  const figures = { ...known, firstOwed: -1 }
  for (let index = 0; index < after.length; index++) {
    const previous = before[index]
    const next = after[index]
    if (previous === undefined || next === undefined) continue
    if (sameAmounts(previous, next)) {
      // Before the first installment that owed anything every unchanged one is paid; the first itself owes; beyond it, look.
      if (figures.firstOwed < 0 && (index === known.firstOwed || (index > known.firstOwed && known.firstOwed >= 0 && !isZero(positions(next).owed)))) {
        figures.firstOwed = index
      }
      continue
    }
    const was = positions(previous)
    const now = positions(next)
    figures.principal = plus(minus(figures.principal, was.owedPrincipal), now.owedPrincipal)
    figures.interest = plus(minus(figures.interest, was.owedInterest), now.owedInterest)
    figures.total = plus(minus(figures.total, was.owed), now.owed)
    figures.paidTotal = plus(minus(figures.paidTotal, was.paid), now.paid)
    figures.installmentsPaid += (isZero(now.owed) ? 1 : 0) - (isZero(was.owed) ? 1 : 0)
    if (figures.firstOwed < 0 && !isZero(now.owed)) figures.firstOwed = index
  }
  return figures
}

/** Figures of a frozen installment array, from those of the array it replaced when known. */
const scheduleFiguresOf = (
  installments: readonly InstallmentPosition[], replaced: readonly InstallmentPosition[] | undefined, positions: Positions,
): ScheduleFigures => {
  const stored = storedScheduleFigures.get(installments)
  if (stored !== undefined) return stored
  const known = replaced === undefined || replaced.length !== installments.length ? undefined : storedScheduleFigures.get(replaced)
  const figures = known === undefined || replaced === undefined ? summedFigures(installments, positions) : changedFigures(replaced, known, installments, positions)
  if (Object.isFrozen(installments)) storedScheduleFigures.set(installments, figures)
  return figures
}

/** Before a disbursement, or after a credit ends without one, the schedule is only a projection: nothing was lent, so nothing is owed or due. */
const NOTHING_LENT: ScheduleFigures = Object.freeze({ principal: ZERO, interest: ZERO, total: ZERO, paidTotal: ZERO, installmentsPaid: 0, firstOwed: -1 })

const isLent = (status: CreditState['status']): boolean => status === 'Desembolsado' || status === 'Pagado'

/** `previous`: the installments of the state this one evolved from, whose figures may already be known. */
export const creditFigures = (state: CreditState, previous?: readonly InstallmentPosition[], positions: Positions = positionOf): CreditFigures => {
  const figures = isLent(state.status) ? scheduleFiguresOf(state.installments, previous, positions) : NOTHING_LENT
  const currency = state.currency === '' ? undefined : state.currency
  return {
    outstandingPrincipal: toMoneyText(figures.principal, currency),
    outstandingInterest: toMoneyText(figures.interest, currency),
    outstandingTotal: toMoneyText(figures.total, currency),
    paidTotal: toMoneyText(figures.paidTotal, currency),
    installmentsPaid: figures.installmentsPaid,
    nextDueDate: figures.firstOwed < 0 ? null : state.installments[figures.firstOwed]?.dueDate ?? null,
  }
}

const statusOf = (position: InstallmentFigures): InstallmentDoc['status'] => {
  if (isZero(position.owed)) return 'paid'
  return isZero(position.paid) ? 'pending' : 'partial'
}

export const installmentStatus = (installment: InstallmentPosition): InstallmentDoc['status'] => statusOf(positionOf(installment))

/** What the document shows of an installment's amounts: the stored document's when the amounts did not change (status and dates moves). */
const amountsShown = (installment: InstallmentPosition, currency: string, current: InstallmentDoc | null, positions: Positions) => {
  if (current !== null && sameAmounts(current, installment)) return { paidAmount: current.paidAmount, outstanding: current.outstanding, status: current.status }
  const position = positions(installment)
  return { paidAmount: toMoneyText(position.paid, currency), outstanding: toMoneyText(position.owed, currency), status: statusOf(position) }
}

// Fields written out rather than spread: a rebuild makes over a million of these, and a spread of a parsed object takes the slow path.
const installmentDoc = (
  state: CreditState, status: CreditStateName, installment: InstallmentPosition, current: InstallmentDoc | null, positions: Positions, position: number,
): InstallmentDoc => {
  const { paidAmount, outstanding, status: installmentState } = amountsShown(installment, state.currency, current, positions)
  const doc: InstallmentDoc = {
    installmentId: installment.installmentId,
    number: installment.number,
    dueDate: installment.dueDate,
    principal: installment.principal,
    interest: installment.interest,
    amount: installment.amount,
    paidPrincipal: installment.paidPrincipal,
    paidInterest: installment.paidInterest,
    paidAt: installment.paidAt,
    _id: installment.installmentId,
    organizationId: state.organizationId,
    creditId: state.creditId,
    creditLineId: state.creditLineId,
    debtorId: state.debtorId,
    currency: state.currency,
    creditState: status,
    paidAmount,
    outstanding,
    status: installmentState,
    disbursedAt: state.disbursedAt,
    _position: position,
  }
  // Only on installments a payoff forgave interest of, so every other document keeps its shape.
  if (installment.waivedInterest !== undefined) doc.waivedInterest = installment.waivedInterest
  return doc
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

/** Freezes a new installment array: the installments it shares with the frozen one it replaces are frozen already. */
const freezeInstallments = (before: readonly InstallmentPosition[], after: InstallmentPosition[]): void => {
  if (Object.isFrozen(after)) return
  for (let index = 0; index < after.length; index++) {
    const installment = after[index]
    if (installment !== before[index]) deepFreeze(installment)
  }
  Object.freeze(after)
}

/** Installments a credit event changed: all of them when the state or the schedule moved, else the ones a payment replaced. */
const touchedInstallments = (event: CreditEventOf, before: CreditState, after: CreditState): InstallmentPosition[] => {
  if (event.type === 'CreditPaymentApplied') return after.installments.filter((installment, index) => installment !== before.installments[index])
  return before.status !== after.status || event.type === 'CreditDisbursed' ? after.installments : []
}

const projectCredit = async (store: ReadStore, creditId: string, event: CreditEventOf, position: number) => {
  const creditDocs = store.collection<CreditDoc>(credits)
  const current = await currentOf(creditDocs, creditId)
  if (current !== null && (current._position ?? 0) >= position) return
  if (current === null && event.type !== 'CreditRequested') return
  // The document is the state plus its own fields: evolve keeps them where they are, and the new document overwrites them.
  const before: CreditState = current ?? initialCreditState()
  const after = evolveCredit(before, event)
  if (after.status === 'none') return
  // Frozen now rather than when the credit document is stored, so the schedule's figures are kept for the next event (see storedScheduleFigures).
  freezeInstallments(before.installments, after.installments)
  const positions = positionsOfOneEvent()
  const debtor = current?.debtor ?? debtorOf(await store.collection<DebtorSummary>(debtors).get(after.debtorId))
  const status = after.status
  const installmentDocs = store.collection<InstallmentDoc>(installments)
  for (const installment of touchedInstallments(event, before, after)) {
    await applyAt(installmentDocs, installment.installmentId, position, (stored) => installmentDoc(after, status, installment, stored, positions, position))
  }
  await applyAt(creditDocs, after.creditId, position, () => ({ ...after, ...creditFigures(after, before.installments, positions), _id: after.creditId, debtor }))
}

const refreshDebtorOnCredits = async (creditDocs: ReadCollection<CreditDoc>, summary: DebtorSummary, position: number) => {
  for (const credit of await creditDocs.find({ debtorId: summary._id })) {
    await updateAt(creditDocs, credit._id, position, (doc) => ({ ...doc, debtor: debtorOf(summary) }))
  }
}

export const creditsProjection = defineProjection({
  name: 'credits',
  // 2: a credit not (or never) disbursed owes nothing and has no next due date. 3: `firstPeriod` (null on credits requested before it).
  version: 3,
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
            natural: applyPersonChanges(current.natural, event.data.natural),
            legal: applyPersonChanges(current.legal, event.data.legal),
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
        creditDocs.find(filter, { sort: { requestedAt: -1, _id: -1 }, skip: query.offset, limit: query.limit }),
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

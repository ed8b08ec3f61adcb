import type { Decimal } from 'decimal.js'
import type { CreditLimitStatus } from '../events/creditLimit.js'
import { applyPersonChanges, type LegalPerson, type NaturalPerson } from '../events/profile.js'
import { money } from '../shared/money.js'
import { applyAt, defineProjection, updateAt } from './projection.js'
import type { Filter, ReadCollection, ReadStore } from './readStore.js'

export interface DebtorInfo {
  debtorId: string
  name: string
  documentType: string
  documentNumber: string
}

export interface CreditLimitDoc {
  _id: string
  _position?: number
  creditorId: string
  debtorId: string
  currency: string
  /** Decimal strings. */
  maxAmount: string
  usedAmount: string
  status: CreditLimitStatus
  expirationDate: string
  createdAt: string
  updatedAt: string
  debtorInfo: DebtorInfo
}

/** What the limits need to know of a profile: its display name and document, kept current from profile events. */
interface DebtorDoc {
  _id: string
  _position?: number
  organizationId: string
  natural: Pick<NaturalPerson, 'firstName' | 'middleName' | 'lastName' | 'secondLastName'> | null
  legal: Pick<LegalPerson, 'businessName'> | null
  documentType: string
  documentNumber: string
}

/**
 * The outstanding principal of one disbursed credit, counted against the limit
 * `limitId` (derived from creditor, debtor and currency, like the limit's id),
 * as the limit stream's CreditLimitReserved and CreditLimitReleased record it.
 * They may precede the limit itself; a limit's `usedAmount` is the sum over
 * its exposures.
 */
export interface CreditExposureDoc {
  _id: string
  _position?: number
  limitId: string
  outstandingPrincipal: string
}

const limits = { name: 'credit_limits', indexes: [{ creditorId: 1, createdAt: 1, _id: 1 }, { debtorId: 1 }, { status: 1, expirationDate: 1 }] } as const
const debtors = { name: 'credit_limit_debtors' } as const
const exposures = { name: 'credit_exposures', indexes: [{ limitId: 1 }] } as const

const displayName = (debtor: DebtorDoc | null): string => {
  if (debtor === null) return ''
  if (debtor.legal !== null) return debtor.legal.businessName
  const n = debtor.natural
  return n === null ? '' : [n.firstName, n.middleName, n.lastName, n.secondLastName].filter((part) => typeof part === 'string' && part !== '').join(' ')
}

const debtorInfoOf = (debtorId: string, debtor: DebtorDoc | null): DebtorInfo => ({
  debtorId, name: displayName(debtor), documentType: debtor?.documentType ?? '', documentNumber: debtor?.documentNumber ?? '',
})

const usedAmountOf = async (docs: ReadCollection<CreditExposureDoc>, limitId: string): Promise<string> => {
  let used = money(0)
  for await (const exposure of docs.stream({ limitId })) used = used.plus(exposure.outstandingPrincipal)
  return used.toFixed()
}

export const creditLimitsProjection = defineProjection({
  name: 'creditLimits',
  handles: ['CreditLimitCreated', 'CreditLimitAmountChanged', 'CreditLimitExpirationChanged', 'CreditLimitActivated', 'CreditLimitDeactivated',
    'CreditLimitExpired', 'CreditLimitReserved', 'CreditLimitReleased', 'ProfileCreated', 'ProfileUpdated'],
  collections: [limits, debtors, exposures],
  async project(store, event, position) {
    const limitDocs = store.collection<CreditLimitDoc>(limits)
    const debtorDocs = store.collection<DebtorDoc>(debtors)
    const exposureDocs = store.collection<CreditExposureDoc>(exposures)
    switch (event.type) {
      case 'CreditLimitCreated': {
        const { creditLimitId, organizationId, debtorId, currency, maxAmount, expirationDate, createdAt } = event.data
        const debtorInfo = debtorInfoOf(debtorId, await debtorDocs.get(debtorId))
        const usedAmount = await usedAmountOf(exposureDocs, creditLimitId)
        return applyAt(limitDocs, creditLimitId, position, () => ({
          _id: creditLimitId, creditorId: organizationId, debtorId, currency, maxAmount, usedAmount, status: 'active',
          expirationDate, createdAt, updatedAt: createdAt, debtorInfo,
        }))
      }
      case 'CreditLimitAmountChanged':
        return updateAt(limitDocs, event.data.creditLimitId, position, (doc) => ({ ...doc, maxAmount: event.data.maxAmount, updatedAt: event.data.at }))
      case 'CreditLimitExpirationChanged':
        return updateAt(limitDocs, event.data.creditLimitId, position, (doc) => ({ ...doc, expirationDate: event.data.expirationDate, updatedAt: event.data.at }))
      case 'CreditLimitActivated':
      case 'CreditLimitDeactivated':
      case 'CreditLimitExpired': {
        const status: CreditLimitStatus = event.type === 'CreditLimitActivated' ? 'active' : event.type === 'CreditLimitDeactivated' ? 'inactive' : 'expired'
        return updateAt(limitDocs, event.data.creditLimitId, position, (doc) => ({ ...doc, status, updatedAt: event.data.at }))
      }
      case 'CreditLimitReserved':
      case 'CreditLimitReleased': {
        const { creditLimitId, creditId, usedAmount, at } = event.data
        const outstandingPrincipal = event.type === 'CreditLimitReserved' ? event.data.amount : event.data.remaining
        await applyAt(exposureDocs, creditId, position, () => ({ _id: creditId, limitId: creditLimitId, outstandingPrincipal, _position: position }))
        return updateAt(limitDocs, creditLimitId, position, (doc) => ({ ...doc, usedAmount, updatedAt: at }))
      }
      case 'ProfileCreated': {
        const { profileId, organizationId, natural, legal } = event.data
        const person = natural ?? legal
        return applyAt(debtorDocs, profileId, position, () => ({
          _id: profileId, organizationId,
          natural: natural === null ? null : { firstName: natural.firstName, middleName: natural.middleName, lastName: natural.lastName, secondLastName: natural.secondLastName },
          legal: legal === null ? null : { businessName: legal.businessName },
          documentType: person?.documentType ?? '', documentNumber: person?.documentNumber ?? '',
        }))
      }
      case 'ProfileUpdated': {
        const { natural, legal } = event.data
        await updateAt(debtorDocs, event.data.profileId, position, (doc) => {
          const names = applyPersonChanges(doc.natural, natural)
          return {
            ...doc,
            natural: names === null ? null : { firstName: names.firstName, middleName: names.middleName, lastName: names.lastName, secondLastName: names.secondLastName },
            legal: doc.legal === null || legal?.businessName === undefined ? doc.legal : { businessName: legal.businessName },
            documentType: natural?.documentType ?? legal?.documentType ?? doc.documentType,
            documentNumber: natural?.documentNumber ?? legal?.documentNumber ?? doc.documentNumber,
          }
        })
        const debtor = await debtorDocs.get(event.data.profileId)
        for (const limit of await limitDocs.find({ debtorId: event.data.profileId })) {
          await updateAt(limitDocs, limit._id, position, (doc) => ({ ...doc, debtorInfo: debtorInfoOf(doc.debtorId, debtor) }))
        }
        return
      }
      default: {
        const _never: never = event
        return _never
      }
    }
  },
})

export interface CreditLimitListQuery {
  creditorId: string
  status?: CreditLimitStatus
  debtorId?: string
  currency?: string
  offset: number
  limit: number
}

export interface CreditLimitSummary {
  totalLimits: number
  totalMaxAmount: Decimal
  totalUsedAmount: Decimal
  totalAvailableAmount: Decimal
  /** The currencies of the matching limits (totals add amounts as they are, so they mean most with one). */
  currencies: string[]
}

export const availableAmountOf = (doc: Pick<CreditLimitDoc, 'maxAmount' | 'usedAmount'>): Decimal => money(doc.maxAmount).minus(doc.usedAmount)

export const creditLimitQueries = (store: ReadStore) => {
  const docs = store.collection<CreditLimitDoc>(limits)
  const filterOf = (query: Omit<CreditLimitListQuery, 'offset' | 'limit'>): Filter => ({
    creditorId: query.creditorId,
    ...(query.status === undefined ? {} : { status: query.status }),
    ...(query.debtorId === undefined ? {} : { debtorId: query.debtorId }),
    ...(query.currency === undefined ? {} : { currency: query.currency }),
  })
  return {
    get: async (creditorId: string, id: string) => {
      const doc = await docs.get(id)
      return doc !== null && doc.creditorId === creditorId ? doc : null
    },
    /** One page of limits, and the summary over every limit that matches (streamed, not loaded at once). */
    list: async (query: CreditLimitListQuery) => {
      const filter = filterOf(query)
      const summary: CreditLimitSummary = {
        totalLimits: 0, totalMaxAmount: money(0), totalUsedAmount: money(0), totalAvailableAmount: money(0), currencies: [],
      }
      const currencies = new Set<string>()
      for await (const doc of docs.stream(filter)) {
        summary.totalLimits += 1
        summary.totalMaxAmount = summary.totalMaxAmount.plus(doc.maxAmount)
        summary.totalUsedAmount = summary.totalUsedAmount.plus(doc.usedAmount)
        summary.totalAvailableAmount = summary.totalAvailableAmount.plus(availableAmountOf(doc))
        currencies.add(doc.currency)
      }
      summary.currencies = [...currencies].sort()
      const items = query.offset >= summary.totalLimits ? [] : await docs.find(filter, { sort: { createdAt: 1, _id: 1 }, skip: query.offset, limit: query.limit })
      return { items, summary }
    },
    /** Limits (of every creditor) whose expiration date is before `today` and that are not yet expired, in id order after `afterId`. */
    lapsed: (today: string, afterId: string, batch: number) =>
      docs.find({ status: { $in: ['active', 'inactive'] }, expirationDate: { $lt: today }, _id: { $gt: afterId } }, { sort: { _id: 1 }, limit: batch }),
  }
}

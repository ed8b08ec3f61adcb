import type { CreditDoc } from '../../projections/credits.js'
import type { CreditMovementDoc } from '../../projections/creditMovements.js'
import type { ProfileDoc } from '../../projections/profiles.js'
import type { DataSetContext } from '../dataSets.js'
import { activeCredits, scopedCredits, type CreditScope } from './creditScopes.js'
import { cityCodes, identityOf, type CityCodes, type Identity } from './identity.js'
import type { Period } from './period.js'
import { positionAt, type CreditPosition } from './positions.js'

/** A debtor as export files name them: the profile, its identity flattened, its city's DANE codes. */
export interface DebtorRecord {
  profile: ProfileDoc
  identity: Identity
  city: CityCodes | null
}

export const debtorRecord = (profile: ProfileDoc): DebtorRecord => ({ profile, identity: identityOf(profile), city: cityCodes(profile.cityId) })

/** One debtor's credits of one currency in a period's scope, each with its movements and its position at the period's end. */
export interface DebtorBook extends DebtorRecord {
  currency: string
  credits: Array<{ credit: CreditDoc; movements: CreditMovementDoc[]; position: CreditPosition }>
}

/**
 * Debtors with credits in the scope (default: active in the period, i.e.
 * disbursed before it ends, not paid off before it starts), one book per
 * debtor and currency. Profiles are streamed; each debtor's credits come from
 * an indexed query (a debtor has a bounded number of them).
 */
export async function* debtorBooks(context: DataSetContext, period: Period, scope: CreditScope = activeCredits): AsyncIterable<DebtorBook> {
  const { queries, organizationId } = context
  for await (const profile of queries.profiles.stream(organizationId)) {
    const byCurrency = new Map<string, DebtorBook['credits']>()
    for await (const { credit, movements } of scopedCredits(queries, organizationId, scope, period, { debtorId: profile._id })) {
      const books = byCurrency.get(credit.currency) ?? []
      books.push({ credit, movements, position: positionAt(credit, movements, period.before) })
      byCurrency.set(credit.currency, books)
    }
    if (byCurrency.size === 0) continue
    const record = debtorRecord(profile)
    for (const [currency, credits] of [...byCurrency].sort(([a], [b]) => a.localeCompare(b))) yield { ...record, currency, credits }
  }
}

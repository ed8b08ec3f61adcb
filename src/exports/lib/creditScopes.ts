import type { CreditDoc } from '../../projections/credits.js'
import type { CreditMovementDoc } from '../../projections/creditMovements.js'
import type { Queries } from '../../projections/queries.js'
import type { Filter } from '../../projections/readStore.js'
import { activeIn, type Period } from './period.js'

/** Which credits a file of a period lists: a read-model filter, and what is left to check on each credit's movements. */
export interface CreditScope {
  /** Every credit the scope may hold (and some it does not). */
  candidates(period: Period): Filter
  /** Whether a candidate is in, given its movements before the period's end. */
  holds(credit: CreditDoc, movements: readonly CreditMovementDoc[], period: Period): boolean
}

/** Whether a credit of the period's candidates owed something at some moment of it: not paid off before it began. */
export const isActiveIn = (credit: Pick<CreditDoc, 'paidAt'>, after: string | null): boolean => after === null || credit.paidAt === null || credit.paidAt >= after

/** Credits active in the period: disbursed before it ends, not paid off before it starts. */
export const activeCredits: CreditScope = { candidates: activeIn, holds: () => true }

/**
 * Credits of the subledgers: active in the period, or paid off before it
 * with a movement in it (money received after the payoff), so the subledgers'
 * 4195 and 2595 columns add up to the journal's. Read models cannot join
 * movements: `updatedAt`, the credit's latest event, is at or after every
 * payment applied to it, so it narrows the paid-off credits to those that
 * may have one in the period.
 */
export const subledgerCredits: CreditScope = {
  candidates: (period) => ({
    disbursedAt: { $lt: period.before },
    ...(period.after === null ? {} : { $or: [{ paidAt: null }, { paidAt: { $gte: period.after } }, { updatedAt: { $gte: period.after } }] }),
  }),
  holds: (credit, movements, { after }) => isActiveIn(credit, after) || movements.some((m) => after !== null && m.at >= after),
}

/** Credits of the scope matching the filter, each with its movements before the period's end (streamed). */
export async function* scopedCredits(queries: Queries, organizationId: string, scope: CreditScope, period: Period, filter: Filter = {})
  : AsyncIterable<{ credit: CreditDoc; movements: CreditMovementDoc[] }> {
  for await (const credit of queries.credits.stream(organizationId, { ...filter, ...scope.candidates(period) })) {
    const movements = await queries.creditMovements.ofCredit(credit._id, period.before)
    if (scope.holds(credit, movements, period)) yield { credit, movements }
  }
}

/** The subledger's credits, counted: the active ones by the read store, the few paid off before the period one by one. */
export const countSubledgerCredits = async (queries: Queries, organizationId: string, period: Period): Promise<number> => {
  const active = await queries.credits.count(organizationId, activeIn(period))
  if (period.after === null) return active
  let movedAfterPayoff = 0
  const paidOff = { disbursedAt: { $lt: period.before }, paidAt: { $lt: period.after }, updatedAt: { $gte: period.after } }
  for await (const credit of queries.credits.stream(organizationId, paidOff)) {
    const inPeriod = await queries.creditMovements.count(organizationId, { creditId: credit._id, at: { $gte: period.after, $lt: period.before } })
    if (inPeriod > 0) movedAfterPayoff += 1
  }
  return active + movedAfterPayoff
}

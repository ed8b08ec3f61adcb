import type { DataSetContext } from '../dataSets.js'
import { debtorIdentity, type Identity } from './identity.js'
import { activeIn, closingDay, periodOf } from './period.js'
import { positionedCredits, type PositionedCredit } from './positions.js'

/** A row of either bureau format: an obligation active in the period, as it stood at the period's end (the cut). */
export interface BureauRow extends PositionedCredit {
  identity: Identity
  cutDay: string
}

type Bounds = { after?: string; before?: string }

export async function* bureauRows(body: Bounds, context: DataSetContext): AsyncIterable<BureauRow> {
  const period = periodOf(body, context.requestedAt)
  const cutDay = closingDay(period.before)
  for await (const row of positionedCredits(context.queries, context.organizationId, activeIn(period), period.before)) {
    yield { ...row, identity: debtorIdentity(row.credit.debtor), cutDay }
  }
}

export const bureauCount = (body: Bounds, context: DataSetContext): Promise<number> =>
  context.queries.credits.count(context.organizationId, activeIn(periodOf(body, context.requestedAt)))

import type { Filter } from '../../projections/readStore.js'

/** A data set's period as ISO 8601 UTC instants: `after` inclusive (null: since the beginning), `before` exclusive. */
export interface Period {
  after: string | null
  before: string
}

const iso = (value: string): string => new Date(value).toISOString()

/** The body's bounds; `before` defaults to the moment the export was requested (never the clock, so a resumed job writes the same file). */
export const periodOf = (body: { after?: string; before?: string }, requestedAt: string): Period => ({
  after: body.after === undefined ? null : iso(body.after),
  before: iso(body.before ?? requestedAt),
})

/** A timestamp field within the period. */
export const instantsIn = (field: string, period: Period): Filter => ({
  [field]: period.after === null ? { $lt: period.before } : { $gte: period.after, $lt: period.before },
})

/** The first calendar day (UTC) whose midnight is at or after the instant. */
export const dayFrom = (instant: string): string => {
  const at = new Date(instant)
  const day = at.toISOString().slice(0, 10)
  return at.getTime() === Date.parse(`${day}T00:00:00.000Z`) ? day : new Date(Date.parse(`${day}T00:00:00.000Z`) + 86_400_000).toISOString().slice(0, 10)
}

/** A `YYYY-MM-DD` field whose day starts within the period. */
export const daysIn = (field: string, period: Period): Filter => ({
  [field]: period.after === null ? { $lt: dayFrom(period.before) } : { $gte: dayFrom(period.after), $lt: dayFrom(period.before) },
})

/** The last day the period (or a cut-off) covers: the UTC date of the instant just before `before`. */
export const closingDay = (before: string): string => new Date(Date.parse(before) - 1).toISOString().slice(0, 10)

/** Credits disbursed before the period ends and not paid off before it starts: they were owed something at some moment of it. */
export const activeIn = (period: Period): Filter => ({
  disbursedAt: { $lt: period.before },
  ...(period.after === null ? {} : { $or: [{ paidAt: null }, { paidAt: { $gte: period.after } }] }),
})

/** Credits the organization was owed at the instant: disbursed before it, not paid off before it. */
export const outstandingAt = (instant: string): Filter => ({
  disbursedAt: { $lt: instant },
  $or: [{ paidAt: null }, { paidAt: { $gte: instant } }],
})

/** Installments of disbursed credits (Desembolsado, Pagado) due in the period: the others have provisional dates and are never collected. */
export const collectibleDueIn = (period: Period): Filter => ({ creditState: { $in: ['Desembolsado', 'Pagado'] }, ...daysIn('dueDate', period) })

import { defineBlobProducer } from '../blobs.js'
import { cutoffColumns, cutoffRows } from '../dataSets/receivables-cutoff.js'

/**
 * `daily`: the portfolio at the end of the previous UTC day, one row per
 * credit owed at midnight (the receivables-cutoff columns with that
 * midnight as the cut-off). Made at 00:05 server time.
 */
export const dailyBlobProducer = defineBlobProducer({
  kind: 'daily',
  description: 'portfolio snapshot at the end of the previous day (receivables-cutoff columns)',
  columns: cutoffColumns,
  rows: (context) => cutoffRows(context.queries, context.organizationId, context.period.end),
})

import type { StoredEvent } from './serialization.js'
import type { EventMetadata } from './types.js'

/** A row of the global log as a tuple (better-sqlite3's raw mode, which skips building an object per row). */
export type LogRow = [position: number, streamId: string, revision: number, id: string, type: string, data: string, metadata: string, recordedAt: string]
export const LOG_COLUMNS = 'position, stream_id, revision, id, type, data, metadata, recorded_at'

/** The same row as a read-ahead page carries it: `data` and `metadata` parsed with the page. */
export type ParsedLogRow = [position: number, streamId: string, revision: number, id: string, type: string, data: unknown, metadata: EventMetadata, recordedAt: string]

export const parseMetadata = (text: string): EventMetadata => JSON.parse(text)

/** The rows of a page the read-ahead thread wrote (src/events/sqliteReaderWorker.mjs): the trust boundary is the log's, as for a row. */
export const parsePage = (text: string): ParsedLogRow[] => JSON.parse(text)

// One literal for both kinds of row, so every event read from the log has the same hidden class.
const stored = (row: LogRow | ParsedLogRow, data: unknown, metadata: EventMetadata): StoredEvent => ({
  id: row[3],
  streamId: row[1],
  revision: row[2],
  position: row[0],
  type: row[4],
  data,
  metadata,
  recordedAt: row[7],
})

export const fromLogRow = (row: LogRow): StoredEvent => stored(row, JSON.parse(row[5]), parseMetadata(row[6]))
export const fromParsedRow = (row: ParsedLogRow): StoredEvent => stored(row, row[5], row[6])

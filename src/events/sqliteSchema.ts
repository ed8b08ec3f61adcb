import Database from 'better-sqlite3'
import fs from 'node:fs'
import path from 'node:path'

export interface EventRow {
  position: number
  stream_id: string
  revision: number
  id: string
  type: string
  data: string
  metadata: string
  recorded_at: string
}

/** Opens (and creates) the embedded log: one table in WAL mode, rowid = global position. */
export const openEventDatabase = (file: string, synchronous: 'FULL' | 'NORMAL'): Database.Database => {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true })
  const db = new Database(file)
  db.pragma('journal_mode = WAL')
  db.pragma(`synchronous = ${synchronous}`)
  db.pragma('busy_timeout = 5000')
  db.exec(`
    CREATE TABLE IF NOT EXISTS events (
      position INTEGER PRIMARY KEY,
      stream_id TEXT NOT NULL,
      revision INTEGER NOT NULL,
      id TEXT NOT NULL UNIQUE,
      type TEXT NOT NULL,
      data TEXT NOT NULL,
      metadata TEXT NOT NULL,
      recorded_at TEXT NOT NULL,
      UNIQUE (stream_id, revision)
    )`)
  return db
}

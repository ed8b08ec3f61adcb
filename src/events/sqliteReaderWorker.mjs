// The embedded log's read-ahead thread (src/events/sqliteReadAhead.ts): reads
// pages of the global log on its own read-only connection while the service's
// thread projects the pages before them. Each page goes across as one JSON
// text in which the rows' `data` and `metadata` (JSON already) are embedded
// unparsed: the receiving thread parses the page once, as it would have parsed
// those two columns.
//
// Plain JavaScript, unlike the rest of src/: the thread then loads without
// tsx, in about 16 MiB instead of 44. What it reads (the statement) and how
// much it keeps ready come from the TypeScript side.
import Database from 'better-sqlite3'
import { parentPort, workerData } from 'node:worker_threads'

const { file, sql, after: from, through, pageSize, pagesAhead } = workerData
if (parentPort === null || typeof file !== 'string' || typeof sql !== 'string') {
  throw new Error('sqliteReaderWorker runs as a worker thread with { file, sql, after, through, pageSize, pagesAhead }')
}
const port = parentPort
const db = new Database(file, { readonly: true, fileMustExist: true })
const page = db.prepare(sql).raw(true)

// Texts of at most about this many characters: a larger string goes to V8's
// large-object space, freed only by a full collection, and a rebuild's
// thousands of pages would pile up there (a million events: ~150 MiB of RSS).
const PAGE_CHARACTERS = 64 * 1024

const rowText = ([position, streamId, revision, id, type, data, metadata, recordedAt]) =>
  `[${position},${JSON.stringify(streamId)},${revision},${JSON.stringify(id)},${JSON.stringify(type)},${data},${metadata},${JSON.stringify(recordedAt)}]`

let after = from
// Pages the receiver has room for: it gives one back for each page it takes.
let room = pagesAhead
let done = false
let pending = []

const send = () => {
  while (room > 0 && pending.length > 0) {
    let text = ''
    let taken = 0
    while (taken < pending.length && (taken === 0 || text.length + pending[taken].length < PAGE_CHARACTERS)) {
      text += `${taken === 0 ? '' : ','}${pending[taken]}`
      taken += 1
    }
    pending = pending.slice(taken)
    room -= 1
    port.postMessage({ page: `[${text}]` })
  }
}

const fill = () => {
  send()
  while (room > 0 && !done) {
    const rows = page.all(after, through, pageSize)
    if (rows.length === 0) {
      done = true
      db.close()
      port.postMessage({ done: true })
      return
    }
    after = rows[rows.length - 1][0]
    pending = rows.map(rowText)
    send()
  }
}

port.on('message', () => {
  room += 1
  fill()
})
fill()

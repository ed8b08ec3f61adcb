import { Worker } from 'node:worker_threads'
import { LOG_COLUMNS, parsePage, type ParsedLogRow } from './sqliteLogRow.js'

/** Pages (of about 64 KiB each) the read-ahead thread may hold ready: bounded, so a slow consumer never piles the log up in memory. */
const PAGES_AHEAD = 16

const PAGE = `SELECT ${LOG_COLUMNS} FROM events WHERE position > ? AND position <= ? ORDER BY position ASC LIMIT ?`

/**
 * The global log from `after` through `through` (a head already committed),
 * read by a thread of its own on a read-only connection while the caller
 * handles the pages before: a subscription far behind the head (a rebuild,
 * a start without a snapshot) spends its thread on its consumer instead of
 * on SQLite. The caller's thread still parses each page (once), so the rows
 * arrive exactly as a read in the thread gives them.
 */
export class LogReadAhead {
  private readonly worker: Worker
  private readonly pages: string[] = []
  private ended = false
  private closed = false
  private failure: Error | null = null
  private wake: (() => void) | null = null

  constructor(file: string, after: number, through: number, pageSize: number, private readonly onClosed: () => void = () => undefined) {
    this.worker = new Worker(new URL('./sqliteReaderWorker.mjs', import.meta.url), {
      workerData: { file, sql: PAGE, after, through, pageSize, pagesAhead: PAGES_AHEAD },
      // Its heap holds a page or two at a time; without limits V8 would size it from the machine's memory and collect lazily.
      resourceLimits: { maxOldGenerationSizeMb: 64, maxYoungGenerationSizeMb: 16 },
    })
    this.worker.on('message', (message: { page: string } | { done: true }) => {
      if ('page' in message) this.pages.push(message.page)
      else this.ended = true
      this.notify()
    })
    this.worker.on('error', (error) => this.fail(error))
    this.worker.on('exit', (code) => this.fail(new Error(`the log's read-ahead thread exited (${code})`)))
  }

  private fail(error: Error): void {
    if (this.closed || this.ended) return
    this.failure ??= error
    this.notify()
  }

  private notify(): void {
    const wake = this.wake
    this.wake = null
    wake?.()
  }

  /** The next page's rows; null once the log through `through` was read, or once closed. Rejects when the thread failed. */
  async next(): Promise<ParsedLogRow[] | null> {
    for (;;) {
      if (this.closed) return null
      const page = this.pages.shift()
      if (page !== undefined) {
        this.worker.postMessage('room')
        return parsePage(page)
      }
      if (this.failure !== null) throw this.failure
      if (this.ended) return null
      await new Promise<void>((resolve) => { this.wake = resolve })
    }
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    this.pages.length = 0
    this.notify()
    await this.worker.terminate()
    this.onClosed()
  }
}

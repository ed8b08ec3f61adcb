// The embedded log's writer thread: owns the write connection, so a commit's
// fsync never blocks the service's event loop.
import { parentPort, workerData } from 'node:worker_threads'
import { errorMessage } from '../shared/errors.js'
import { openEventDatabase } from './sqliteSchema.js'
import { SqliteWriter, type WriteRequest } from './sqliteWriter.js'

interface Settings {
  file: string
  synchronous: 'FULL' | 'NORMAL'
}

const isSettings = (value: unknown): value is Settings =>
  typeof value === 'object' && value !== null && typeof Reflect.get(value, 'file') === 'string'

if (parentPort === null || !isSettings(workerData)) throw new Error('sqliteWriterWorker runs as a worker thread with { file, synchronous }')
const port = parentPort
const db = openEventDatabase(workerData.file, workerData.synchronous)
const writer = new SqliteWriter(db)

port.on('message', (message: { id: number; group: WriteRequest[] } | { close: true }) => {
  if ('close' in message) {
    db.close()
    port.close()
    return
  }
  try {
    port.postMessage({ id: message.id, outcomes: writer.commit(message.group) })
  } catch (error) {
    port.postMessage({ id: message.id, error: errorMessage(error) })
  }
})

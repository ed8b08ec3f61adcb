// Entry of the event store's writer thread: registers tsx (as bin/credit-service.js
// does) so the TypeScript worker can load, wherever the service was started from.
import { register } from 'tsx/esm/api'

register()
await import('./sqliteWriterWorker.ts')

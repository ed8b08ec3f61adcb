import { execFile } from 'node:child_process'
import path from 'node:path'
import { promisify } from 'node:util'
import t from 'tap'

const fixture = path.resolve(import.meta.dirname, '../fixtures/documentShapes.ts')

/**
 * In V8 (Node 20) a document copied by a spread after a field was added to
 * its original gets a hidden class of its own; a million such documents cost
 * hundreds of MiB and most of a rebuild's time (docs/benchmarks.md, fourth
 * pass). The documents the log makes by the hundred thousand must share them.
 */
const sharedBy = ['credits', 'credit_installments', 'credit_movements', 'payment_orders', 'webhook_sends', 'webhook_response_values',
  'credit_limits', 'credit_exposures']

t.test('documents of the high-volume read models share hidden classes after a rebuild', async (t) => {
  const { stdout } = await promisify(execFile)(process.execPath, ['--allow-natives-syntax', '--import', 'tsx', fixture, '20000'], { timeout: 60_000 })
  const report: Record<string, { documents: number; ownHiddenClass: number } | undefined> = JSON.parse(stdout)
  for (const name of sharedBy) {
    const collection = report[name]
    t.ok(collection !== undefined && collection.documents > 50, `${name} has documents (${collection?.documents})`)
    // The first documents, made while V8's inline caches warm up, may keep a class since replaced (before the fix: nearly all had their own).
    const own = collection?.ownHiddenClass ?? Number.NaN
    t.ok(own <= 3, `${name}: at most 3 documents with a hidden class of their own (${own})`)
  }
})

import path from 'node:path'
import { appendBench } from './append.js'
import { ordersBench, productsBench, taxesBench } from './http.js'
import { exportCsvBench } from './exportCsv.js'
import { webhooksBench } from './webhooks.js'
import { sseBench } from './sse.js'
import { rebuildBench } from './rebuild.js'
import { startupBench } from './startup.js'
import { pagesBench } from './pages.js'
import { table, writeResults, type BenchResult } from './lib/report.js'
import { watchMachineLoad } from './lib/machineLoad.js'

/** Every benchmark: `npm run bench` runs all, `npm run bench -- <name>` one. */
const benchmarks: Record<string, () => Promise<BenchResult[]>> = {
  products: productsBench,
  taxes: taxesBench,
  orders: ordersBench,
  append: appendBench,
  exports: exportCsvBench,
  webhooks: webhooksBench,
  sse: sseBench,
  rebuild: rebuildBench,
  startup: startupBench,
  pages: pagesBench,
}

const NO_WRITE = '--no-write'

const main = async () => {
  const args = process.argv.slice(2)
  // A check of the harness itself (test/bench/smoke.*.test.ts): the table and each row as JSON on stdout, the docs and results file untouched.
  const write = !args.includes(NO_WRITE)
  const wanted = args.filter((arg) => arg !== NO_WRITE)
  const unknown = wanted.filter((w) => !(w in benchmarks))
  if (unknown.length > 0) {
    process.stderr.write(`unknown benchmark(s): ${unknown.join(', ')}; known: ${Object.keys(benchmarks).join(', ')}\n`)
    process.exit(2)
  }
  const names = wanted.length > 0 ? wanted : Object.keys(benchmarks)
  const results: BenchResult[] = []
  for (const name of names) {
    process.stderr.write(`running ${name}…\n`)
    const run = benchmarks[name]
    if (run === undefined) continue
    const watch = watchMachineLoad()
    const rows = await run()
    const machineLoad = watch.stop()
    results.push(...rows.map((row) => ({ ...row, machineLoad })))
  }
  if (write) process.stdout.write(`${table(writeResults(path.resolve(import.meta.dirname, '..'), results))}\n`)
  else process.stdout.write(`${table(results)}\n${results.map((result) => `RESULT ${JSON.stringify(result)}`).join('\n')}\n`)
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack ?? error.message : String(error)}\n`)
  process.exit(1)
})

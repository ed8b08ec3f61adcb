import { createHash } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { pino } from 'pino'
import stringify from 'safe-stable-stringify'
import t, { type Test } from 'tap'
import type { EventMetadata } from '../../src/events/types.js'
import { allProjections } from '../../src/projections/index.js'
import { createRuntime, type Runtime } from '../../src/runtime.js'
import type { Config } from '../../src/shared/config.js'
import { testConfig } from '../helpers/config.js'

/**
 * Event logs recorded by earlier releases (test/fixtures/eventLog.<date>.jsonl,
 * a second one of a day eventLog.<date>.2.jsonl, made by eventLog.record.ts
 * and never rewritten) are the history auditors
 * replay. Each must still go into the store as it was written and project
 * without an error, the memory and SQLite read stores must make the same
 * documents of it, a rebuild must make them again, and each projection's
 * documents are recorded with its version
 * (test/fixtures/projectionOutputs.json): documents that change under the
 * same version fail, because a persistent read store rebuilds a projection
 * only when its version changes. This catches what the digest of a
 * projection's own file (versions.test.ts) cannot: a change in a helper it
 * imports. Bump the version if the change is meant, then record again:
 *   UPDATE_PROJECTION_VERSIONS=1 npx tap test/projections/versions.test.ts test/projections/replayedLog.test.ts
 */
const fixtures = path.resolve(import.meta.dirname, '../fixtures')
const outputsFile = path.join(fixtures, 'projectionOutputs.json')
const update = process.env['UPDATE_PROJECTION_VERSIONS'] === '1'
const howToRecord = 'UPDATE_PROJECTION_VERSIONS=1 npx tap test/projections/versions.test.ts test/projections/replayedLog.test.ts'

const logFiles = fs.readdirSync(fixtures).filter((name) => /^eventLog\.\d{4}-\d{2}-\d{2}(\.\d+)?\.jsonl$/.test(name)).sort()

interface LoggedEvent {
  id: string
  streamId: string
  revision: number
  position: number
  type: string
  data: object
  metadata: EventMetadata
}

const isLoggedEvent = (value: unknown): value is LoggedEvent => {
  if (typeof value !== 'object' || value === null) return false
  const field = (name: string): unknown => Reflect.get(value, name)
  const metadata = field('metadata')
  return typeof field('id') === 'string' && typeof field('streamId') === 'string' && typeof field('type') === 'string'
    && Number.isInteger(field('revision')) && Number.isInteger(field('position'))
    && typeof field('data') === 'object' && field('data') !== null
    && typeof metadata === 'object' && metadata !== null && typeof Reflect.get(metadata, 'occurredAt') === 'string'
    && Number.isInteger(Reflect.get(metadata, 'schemaVersion'))
}

const readLog = (file: string): LoggedEvent[] =>
  fs.readFileSync(path.join(fixtures, file), 'utf8').split('\n').filter((line) => line.trim() !== '').map((line, index) => {
    const parsed: unknown = JSON.parse(line)
    if (!isLoggedEvent(parsed)) throw new Error(`${file} line ${index + 1} is not a recorded event`)
    return parsed
  })

interface Output {
  version: number
  documents: number
  sha256: string
}

type Outputs = Record<string, Output>

const isOutput = (value: unknown): value is Output =>
  typeof value === 'object' && value !== null && typeof Reflect.get(value, 'version') === 'number'
  && typeof Reflect.get(value, 'documents') === 'number' && typeof Reflect.get(value, 'sha256') === 'string'

const readRecorded = (): Map<string, Map<string, Output>> => {
  if (!fs.existsSync(outputsFile)) return new Map()
  const parsed: unknown = JSON.parse(fs.readFileSync(outputsFile, 'utf8'))
  const logs = typeof parsed === 'object' && parsed !== null ? Object.entries(parsed) : []
  return new Map(logs.map(([log, outputs]) => [log, new Map(
    Object.entries(typeof outputs === 'object' && outputs !== null ? outputs : {}).filter((entry): entry is [string, Output] => isOutput(entry[1])),
  )]))
}

const startRuntime = async (t: Test, config: Partial<Config>): Promise<Runtime> => {
  const runtime = await createRuntime(testConfig({ processesEnabled: false, ...config }), { logger: pino({ level: 'silent' }) })
  await runtime.start()
  t.teardown(() => runtime.close())
  return runtime
}

/** Appends the log one event at a time, in its order, each at the revision it was written at. */
const appendLog = async (runtime: Runtime, log: readonly LoggedEvent[]): Promise<number[]> => {
  const positions: number[] = []
  for (const event of log) {
    const { id, type, data, metadata } = event
    const result = await runtime.eventStore.append(event.streamId, [{ id, type, data, metadata }], event.revision === 0 ? 'no_stream' : event.revision - 1)
    positions.push(result.position)
  }
  return positions
}

/** Each projection's documents, every collection in `_id` order, keys sorted: the same documents give the same digest in any store. */
const outputsOf = async (runtime: Runtime): Promise<Outputs> => {
  const outputs: Outputs = {}
  for (const projection of allProjections) {
    const collections = await Promise.all(projection.collections.map(async (spec) =>
      [spec.name, await runtime.readStore.collection(spec).find({}, { sort: { _id: 1 } })] as const))
    const text = stringify(collections) ?? ''
    outputs[projection.name] = {
      version: projection.version,
      documents: collections.reduce((sum, [, documents]) => sum + documents.length, 0),
      sha256: createHash('sha256').update(text).digest('hex'),
    }
  }
  return outputs
}

const replay = async (t: Test, log: readonly LoggedEvent[], config: Partial<Config>) => {
  const runtime = await startRuntime(t, config)
  t.equal(await runtime.eventStore.headPosition(), 0, 'a fresh service appends nothing of its own before the log')
  const positions = await appendLog(runtime, log)
  t.same(positions, log.map((event) => event.position), 'every event lands at the position it was recorded at')
  await runtime.settle(await runtime.eventStore.headPosition())
  const status = await runtime.projections.status()
  t.same(status.projections.filter((p) => p.failed !== null).map((p) => [p.name, p.failed]), [], 'no projection failed on an event of the log')
  t.same(status.projections.filter((p) => p.lag > 0).map((p) => p.name), [], 'every projection caught up with the log')
  return { runtime, outputs: await outputsOf(runtime) }
}

const recordedOutputs = readRecorded()
const freshOutputs: Record<string, Outputs> = {}

t.ok(logFiles.length > 0, 'at least one recorded event log')

for (const file of logFiles) {
  t.test(`${file}: replays into a fresh service, the same documents in both read stores and after a rebuild`, async (t) => {
    const log = readLog(file)
    const memory = await replay(t, log, { readStore: 'memory' })
    const sqlite = await replay(t, log, { readStore: 'sqlite' })
    t.same(sqlite.outputs, memory.outputs, 'the SQLite read store makes the same documents as the memory store')
    await memory.runtime.projections.rebuild()
    t.same(await outputsOf(memory.runtime), memory.outputs, 'a rebuild from the log makes the same documents again')
    freshOutputs[file] = memory.outputs

    if (update) return
    const recorded = recordedOutputs.get(file)
    if (recorded === undefined) {
      t.fail(`${file}: no documents recorded for it: run ${howToRecord}`)
      return
    }
    for (const [name, now] of Object.entries(memory.outputs)) {
      const then = recorded.get(name)
      if (then === undefined) t.fail(`${name}: not recorded for ${file}: run ${howToRecord}`)
      else if (now.version === then.version && now.sha256 !== then.sha256) {
        t.fail(`${name} makes other documents of ${file} under the same version ${now.version} (${then.documents} documents then, ${now.documents} now). `
          + `If that is meant, bump its version (persistent read stores rebuild it at the next start); then record them: ${howToRecord}`)
      } else {
        t.same(now, then, `${name}: version ${now.version} makes the documents recorded for it`
          + (now.version === then.version ? '' : ` (bumped from ${then.version}: record them, ${howToRecord})`))
      }
    }
    t.same([...recorded.keys()].filter((name) => !(name in memory.outputs)), [], `no projection recorded for ${file} is gone (else: ${howToRecord})`)
  })
}

if (update) {
  t.test('records the documents of every log', async (t) => {
    t.same(Object.keys(freshOutputs), logFiles, 'every log was replayed')
    fs.writeFileSync(outputsFile, `${stringify(freshOutputs, null, 2)}\n`)
    t.pass(`recorded the documents of ${logFiles.length} log(s) in ${path.relative(process.cwd(), outputsFile)}`)
  })
}

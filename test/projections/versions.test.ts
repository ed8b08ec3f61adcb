import { createHash } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { allProjections } from '../../src/projections/index.js'

/**
 * A persistent read store rebuilds a projection at start only when its
 * version changed (ProjectionRunner.start). So a change to a projection's
 * file asks for a decision: do the documents it makes for the same events
 * change? This records each projection's version with a digest of its file
 * and fails when the file changed under the same version, until the version
 * is bumped (documents changed) or the file is recorded again (they did not):
 *   UPDATE_PROJECTION_VERSIONS=1 npx tap test/projections/versions.test.ts
 * Only the projection's own file is digested: a change to a helper it
 * imports needs the same decision without this prompt.
 */
const root = path.resolve(import.meta.dirname, '../..')
const fixture = path.join(root, 'test/fixtures/projectionVersions.json')
const update = process.env['UPDATE_PROJECTION_VERSIONS'] === '1'
// Recorded together with the documents of the replayed logs, which the same decision changes.
const howToRecord = 'UPDATE_PROJECTION_VERSIONS=1 npx tap test/projections/versions.test.ts test/projections/replayedLog.test.ts'

interface Recorded {
  file: string
  version: number
  sha256: string
}

const definedIn = (): Map<string, string> => {
  const files = new Map<string, string>()
  const dir = path.join(root, 'src/projections')
  for (const entry of fs.readdirSync(dir).filter((name) => name.endsWith('.ts')).sort()) {
    const text = fs.readFileSync(path.join(dir, entry), 'utf8')
    for (const match of text.matchAll(/defineProjection(?:<[^>]*>)?\(\{\s*name: '([^']+)'/g)) {
      if (match[1] !== undefined) files.set(match[1], `src/projections/${entry}`)
    }
  }
  return files
}

const digest = (file: string) => createHash('sha256').update(fs.readFileSync(path.join(root, file), 'utf8').replaceAll('\r\n', '\n')).digest('hex')

const isRecorded = (value: unknown): value is Recorded =>
  typeof value === 'object' && value !== null && typeof Reflect.get(value, 'file') === 'string'
  && typeof Reflect.get(value, 'version') === 'number' && typeof Reflect.get(value, 'sha256') === 'string'

const readRecorded = (): Map<string, Recorded> => {
  if (!fs.existsSync(fixture)) return new Map()
  const parsed: unknown = JSON.parse(fs.readFileSync(fixture, 'utf8'))
  const entries = typeof parsed === 'object' && parsed !== null ? Object.entries(parsed) : []
  return new Map(entries.filter((entry): entry is [string, Recorded] => isRecorded(entry[1])))
}

t.test('every projection\'s file is recorded with its version: a changed file under the same version fails until someone decides', async (t) => {
  const files = definedIn()
  const recorded = readRecorded()
  const current = new Map<string, Recorded>()
  for (const projection of allProjections) {
    const file = files.get(projection.name)
    t.ok(file !== undefined, `${projection.name}: defined in src/projections with defineProjection`)
    if (file !== undefined) current.set(projection.name, { file, version: projection.version, sha256: digest(file) })
  }
  if (update) {
    const sorted = Object.fromEntries([...current].sort(([a], [b]) => (a < b ? -1 : 1)))
    fs.writeFileSync(fixture, `${JSON.stringify(sorted, null, 2)}\n`)
    t.pass(`recorded ${current.size} projections in ${path.relative(root, fixture)}`)
    return
  }
  for (const [name, now] of current) {
    const then = recorded.get(name)
    if (then === undefined) {
      t.fail(`${name} is not recorded: run ${howToRecord}`)
      continue
    }
    t.ok(now.version >= then.version, `${name}: the version never goes back (recorded ${then.version}, now ${now.version})`)
    if (now.version === then.version && now.sha256 !== then.sha256) {
      t.fail(`${now.file} changed under version ${now.version}. If the documents it makes for the same events changed, bump its version `
        + `(persistent read stores rebuild it at the next start); either way, record it again: ${howToRecord}`)
    } else {
      t.same(now, then, `${name}: version ${now.version} recorded with its file`
        + (now.version === then.version ? '' : ` (bumped from ${then.version}: record it, ${howToRecord})`))
    }
  }
  t.same([...recorded.keys()].filter((name) => !current.has(name)), [], `no recorded projection is gone (else: ${howToRecord})`)
})

import t from 'tap'
import { tempDir } from '../helpers/config.js'
import { runCli } from '../helpers/process.js'

t.test('bootstrap, demo, events read, events tail and projections rebuild', async (t) => {
  const env = { DATA_DIR: tempDir(), ADMIN_CLIENT_ID: 'cli-admin', ADMIN_CLIENT_SECRET: 'cli-secret' }
  const boot = await runCli(['bootstrap'], env)
  t.equal(boot.code, 0, boot.stderr)
  t.match(boot.stdout, /bootstrapped organization/)
  t.match((await runCli(['bootstrap'], env)).stdout, /already bootstrapped/, 'idempotent')

  const demo = await runCli(['demo'], env)
  t.equal(demo.code, 0, demo.stderr)
  t.match(demo.stdout, /demo organization/)

  const read = await runCli(['events', 'read', 'system-bootstrap'], env)
  t.equal(read.code, 0, read.stderr)
  const lines = read.stdout.trim().split('\n').map((l) => JSON.parse(l) as { type: string; metadata: { correlationId: string } })
  t.same(lines.map((e) => e.type), ['ServiceBootstrapped'])
  t.ok(lines[0]?.metadata.correlationId, 'events carry their metadata')

  const tail = await runCli(['events', 'tail', '--no-follow'], env)
  t.equal(tail.code, 0, tail.stderr)
  const tailed = tail.stdout.trim().split('\n')
  t.equal(tailed.length, 10, 'the last ten events of the global log')
  const positions = tailed.map((l) => (JSON.parse(l) as { position: number }).position)
  t.same(positions, [...positions].sort((a, b) => a - b), 'in log order')

  const rebuild = await runCli(['projections', 'rebuild'], env)
  t.equal(rebuild.code, 0, rebuild.stderr)
  t.match(rebuild.stdout, /organizations: position \d+/)
  t.notMatch(rebuild.stdout, /µs\/event/, 'no timings unless asked')

  const timed = await runCli(['projections', 'rebuild', '--timings'], env)
  t.equal(timed.code, 0, timed.stderr)
  t.match(timed.stdout, /time in projections: [\d,]+ ms/)
  for (const [projection, type] of [['credits', 'CreditRequested'], ['organizations', 'OrganizationCreated']]) {
    t.match(timed.stdout, new RegExp(`^ {2}${projection} ${type}: [\\d,]+ events?, [\\d,]+ ms, [\\d.]+ µs/event$`, 'm'), `a row for ${projection} on ${type}`)
  }

  const unknown = await runCli(['projections', 'rebuild', 'nope'], env)
  t.not(unknown.code, 0)
  t.match(unknown.stderr, /unknown projection/)
  t.equal((await runCli(['frobnicate'], env)).code, 2)
})

t.test('projections rebuild over the SQLite read store stops its projections before closing, and exits 0', async (t) => {
  const env = { DATA_DIR: tempDir(), READ_STORE: 'sqlite', ADMIN_CLIENT_ID: 'cli-admin', ADMIN_CLIENT_SECRET: 'cli-secret' }
  t.equal((await runCli(['bootstrap'], env)).code, 0)
  const rebuild = await runCli(['projections', 'rebuild'], env)
  t.equal(rebuild.code, 0, rebuild.stderr)
  t.equal(rebuild.stderr, '')
  t.match(rebuild.stdout, /organizations: position \d+/)
  t.equal((await runCli(['projections', 'rebuild', 'organizations'], env)).code, 0, 'one projection too')
})

import { spawn } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import readline from 'node:readline'
import t from 'tap'
import { SqliteEventStore } from '../../src/events/sqlite.js'
import { lockDataDir } from '../../src/shared/dataDirLock.js'
import { missingNodeFlags } from '../../src/shared/nodeFlags.js'
import { tempDir } from '../helpers/config.js'
import { binPath, childEnv, spawnServer } from '../helpers/process.js'

const credentials = { ADMIN_CLIENT_ID: 'ops-admin', ADMIN_CLIENT_SECRET: 'ops-admin-secret', SQLITE_SYNCHRONOUS: 'FULL' }

const token = async (url: string) => {
  const response = await fetch(`${url}/v1/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from('ops-admin:ops-admin-secret').toString('base64')}` },
    body: 'grant_type=client_credentials',
  })
  const body = await response.json() as { access_token: string }
  return body.access_token
}

/** One service for the first test and the SIGTERM test, which ends it: each start of a service process costs seconds. */
const sharedDataDir = tempDir()
const shared = spawnServer({ ...credentials, DATA_DIR: sharedDataDir })
// Not left rejected and unhandled should the start fail: each test that uses it awaits it and fails then.
shared.catch(() => {})
t.teardown(async () => {
  const server = await shared.catch(() => undefined)
  server?.child.kill('SIGKILL')
})

t.test('over real TCP: a token from the token endpoint is accepted by a protected route', async (t) => {
  const dataDir = sharedDataDir
  const server = await shared
  const access = await token(server.url)
  const response = await fetch(`${server.url}/v1/me`, { headers: { authorization: `Bearer ${access}` } })
  t.equal(response.status, 200)
  t.equal((await response.json() as { data: { id: string } }).data.id, 'ops-admin')
  t.notOk(fs.existsSync(path.join(dataDir, 'admin-credentials.json')), 'no credentials file when both come from the environment')
})

t.test('SIGKILL right after an acknowledged write loses nothing: the event is in the store and in the read models', async (t) => {
  const dataDir = tempDir()
  const first = await spawnServer({ ...credentials, DATA_DIR: dataDir })
  const access = await token(first.url)
  const created = await fetch(`${first.url}/v1/organizations`, {
    method: 'POST', headers: { authorization: `Bearer ${access}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Durable S.A.' }),
  })
  t.equal(created.status, 201)
  const { data } = await created.json() as { data: { organization: { id: string } } }
  first.child.kill('SIGKILL')
  await first.exited

  const store = new SqliteEventStore({ file: path.join(dataDir, 'events.sqlite') })
  t.equal(await store.streamRevision(`organization-${data.organization.id}`), 0, 'the event is in the store')
  await store.close()

  const second = await spawnServer({ ...credentials, DATA_DIR: dataDir })
  t.teardown(() => { second.child.kill('SIGKILL') })
  const again = await fetch(`${second.url}/v1/organizations/${data.organization.id}`, { headers: { authorization: `Bearer ${await token(second.url)}` } })
  t.equal(again.status, 200, 'and in the read model rebuilt at start')
  t.equal((await again.json() as { data: { organization: { name: string } } }).data.organization.name, 'Durable S.A.')
})

t.test('SIGTERM stops accepting, closes the stores and exits 0', async (t) => {
  const server = await shared
  server.child.kill('SIGTERM')
  t.equal(await server.exited, 0)
  // 'exit' can come before the pipe is drained: wait for the line (or for the output to close).
  t.ok(await server.lineWhere((l) => l.includes('shutting down')))
})

t.test('first start without configured credentials generates them once, printed and saved 0600', async (t) => {
  const dataDir = tempDir()
  const server = await spawnServer({ DATA_DIR: dataDir, ADMIN_CLIENT_ID: '', ADMIN_CLIENT_SECRET: '' })
  t.teardown(() => { server.child.kill('SIGKILL') })
  const file = path.join(dataDir, 'admin-credentials.json')
  const saved = JSON.parse(fs.readFileSync(file, 'utf8')) as { client_id: string; client_secret: string }
  t.equal(fs.statSync(file).mode & 0o777, 0o600)
  t.ok(server.lines.some((l) => l.includes(saved.client_secret)), 'the secret is printed on stdout')
  const response = await fetch(`${server.url}/v1/oauth/token`, {
    method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: saved.client_id, client_secret: saved.client_secret }),
  })
  t.equal(response.status, 200)
  server.child.kill('SIGKILL')
  await server.exited
  const restarted = await spawnServer({ DATA_DIR: dataDir, ADMIN_CLIENT_ID: '', ADMIN_CLIENT_SECRET: '' })
  t.teardown(() => { restarted.child.kill('SIGKILL') })
  t.notOk(restarted.lines.some((l) => l.includes(saved.client_secret)), 'not printed again on a later start')
})

t.test('a stop signal during the start (SIGHUP as SIGTERM) stops the service through the graceful path once it is up', async (t) => {
  const dataDir = tempDir()
  const child = spawn(process.execPath, [...missingNodeFlags([], process.env['NODE_OPTIONS']), binPath, 'serve'], {
    env: childEnv({ ...credentials, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info' }),
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  t.teardown(() => { child.kill('SIGKILL') })
  const stdout: string[] = []
  const stderr: string[] = []
  const starting = new Promise<void>((resolve) => {
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      stdout.push(line)
      if (line.startsWith('credit-service starting on DATA_DIR')) resolve()
    })
  })
  readline.createInterface({ input: child.stderr }).on('line', (line) => stderr.push(line))
  const closed = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)))
  await starting
  child.kill('SIGHUP')
  t.equal(await closed, 0)
  t.ok(stderr.includes('SIGHUP: stopping once the start in progress is done (a second signal stops it now)'), stderr.join('\n'))
  t.notOk(stdout.some((line) => line.includes('listening on')), 'it never announced itself listening')
  t.ok(stdout.some((line) => line.includes('"signal":"SIGHUP"') && line.includes('shutting down')), 'the graceful shutdown ran')
  t.ok(fs.existsSync(path.join(dataDir, 'read-store.snapshot')), 'and wrote the snapshot of a clean stop')
  lockDataDir(dataDir, 'test', new Date()).release()
  t.pass('leaving DATA_DIR free')
})

t.test('a second stop signal while a start still waits (here on a MongoDB that never answers) stops the service at once', async (t) => {
  const silent = net.createServer(() => {})
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { silent.close() })
  const { port } = silent.address() as net.AddressInfo
  const child = spawn(process.execPath, [...missingNodeFlags([], process.env['NODE_OPTIONS']), binPath, 'serve'], {
    env: childEnv({ ...credentials, DATA_DIR: tempDir(), PORT: '0', HOST: '127.0.0.1', MONGODB_URL: `mongodb://127.0.0.1:${port}/?serverSelectionTimeoutMS=60000` }),
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  t.teardown(() => { child.kill('SIGKILL') })
  const stderr: string[] = []
  readline.createInterface({ input: child.stderr }).on('line', (line) => stderr.push(line))
  const starting = new Promise<void>((resolve) => {
    readline.createInterface({ input: child.stdout }).on('line', (line) => { if (line.startsWith('credit-service starting')) resolve() })
  })
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  await starting
  child.kill('SIGTERM')
  await new Promise((resolve) => setTimeout(resolve, 1500))
  t.equal(child.exitCode, null, 'the first waits for the start')
  child.kill('SIGTERM')
  t.equal(await exited, 143, '128 + SIGTERM')
  t.match(stderr, ['SIGTERM: stopping once the start in progress is done (a second signal stops it now)', 'SIGTERM again: stopping now, without waiting for the start'])
})

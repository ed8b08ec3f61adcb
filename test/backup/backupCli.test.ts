import path from 'node:path'
import t from 'tap'
import { tempDir } from '../helpers/config.js'
import { runCli, spawnServer } from '../helpers/process.js'

const credentials = { ADMIN_CLIENT_ID: 'cli-admin', ADMIN_CLIENT_SECRET: 'cli-secret' }

t.test('credit-service backup beside a running service, then restore into a new DATA_DIR a service starts on', async (t) => {
  const env = { ...credentials, DATA_DIR: tempDir() }
  t.equal((await runCli(['demo'], env)).code, 0)
  const server = await spawnServer(env)
  t.teardown(() => { server.child.kill('SIGKILL') })
  const token = await fetch(`${server.url}/v1/oauth/token`, {
    method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: credentials.ADMIN_CLIENT_ID, client_secret: credentials.ADMIN_CLIENT_SECRET }),
  })
  t.equal(token.status, 200, 'the running service writes (a token request appends its sign-in)')

  const target = path.join(tempDir(), 'nightly', '2026-11-24')
  const backup = await runCli(['backup', target], env)
  t.equal(backup.code, 0, backup.stderr)
  t.match(backup.stdout, /^event log: [\d,]+ events up to position \d+/m)
  t.match(backup.stdout, new RegExp(`^backup ${target}: \\d+ files`, 'm'))
  t.match((await runCli(['backup', target], env)).stderr, /exists: a backup goes into a new directory/)

  server.child.kill('SIGTERM')
  t.equal(await server.exited, 0)

  const restoredEnv = { ...credentials, DATA_DIR: path.join(tempDir(), 'restored') }
  const check = await runCli(['restore', target, '--check'], restoredEnv)
  t.equal(check.code, 0, check.stderr)
  t.match(check.stdout, /^checked \d+ files/m)
  const restore = await runCli(['restore', target], restoredEnv)
  t.equal(restore.code, 0, restore.stderr)
  t.match(restore.stdout, /^restored \d+ files \([\d.]+ MiB\) .* event log of [\d,]+ events up to position \d+/m)
  const again = await runCli(['restore', target], restoredEnv)
  t.equal(again.code, 1)
  t.match(again.stderr, /^DATA_DIR .* is not empty/)
  t.notMatch(again.stderr, /\n\s+at /, 'one line, no stack')

  const restored = await spawnServer(restoredEnv)
  t.teardown(() => { restored.child.kill('SIGKILL') })
  const health = await fetch(`${restored.url}/v1/health`)
  t.equal(health.status, 200)
  restored.child.kill('SIGTERM')
  t.equal(await restored.exited, 0)
})

t.test('backup and restore say what they take, and leave servers\' data to the servers\' tools', async (t) => {
  const env = { ...credentials, DATA_DIR: tempDir() }
  for (const args of [['backup'], ['backup', 'a', 'b'], ['restore'], ['restore', 'a', '--force']]) {
    const run = await runCli(args, env)
    t.equal(run.code, 2, args.join(' '))
  }
  const servers = await runCli(['backup', path.join(tempDir(), 'b')], { ...env, EVENTSTORE_URL: 'esdb://localhost:2113?tls=false' })
  t.equal(servers.code, 1)
  t.match(servers.stderr, /EVENTSTORE_URL is set: back those servers up with their own tools/)
})

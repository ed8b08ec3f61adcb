import net from 'node:net'
import t from 'tap'
import { createRuntime } from '../../src/runtime.js'
import { tempDir, testConfig } from '../helpers/config.js'
import { runCli } from '../helpers/process.js'

// The CLI's refusals, apart from its commands' work (cli.test.ts): each spawns a process or more, and the two files keep each under tap's timeout.

t.test('a command line the CLI does not take answers one line saying why, the usage and exit code 2, without a stack', async (t) => {
  const env = { DATA_DIR: tempDir(), ADMIN_CLIENT_ID: 'cli-admin', ADMIN_CLIENT_SECRET: 'cli-secret' }
  for (const [args, said] of [
    [['events', 'read', 'system-bootstrap', '--from', 'abc'], /--from must be a whole number, got "abc"/],
    [['events', 'read', 'system-bootstrap', '--limit', '1.5'], /--limit must be a whole number/],
    [['events', 'tail', '--from', '-1'], /--from/],
    [['events', 'read', 'system-bootstrap', '--bogus'], /Unknown option '--bogus'/],
    [['projections', 'rebuild', '--bogus'], /Unknown option '--bogus'/],
    [['projections', 'rebuild', 'nosuchprojection'], /unknown projection\(s\): nosuchprojection/],
    [['serve', '--port', '1234'], /serve takes no arguments/],
  ] as const) {
    const refused = await runCli([...args], env)
    t.equal(refused.code, 2, args.join(' '))
    t.match(refused.stderr, said)
    t.match(refused.stderr, /credit-service <command>/, 'the usage follows')
    t.notMatch(refused.stderr, /\n\s+at /, 'no stack')
  }
})

t.test('a setting the environment gives a bad value stops the command with one line naming it, and exit code 1', async (t) => {
  const bad = await runCli(['bootstrap'], { DATA_DIR: tempDir(), PORT: 'eighty' })
  t.equal(bad.code, 1)
  t.equal(bad.stderr, 'PORT must be an integer from 0 to 65535, got "eighty" (settings: README.md, "Configuration")\n')
})

t.test('a signing key that cannot be read or is no key stops the command with one line naming its setting', async (t) => {
  const missing = await runCli(['bootstrap'], { DATA_DIR: tempDir(), JWT_PRIVATE_KEY_FILE: '/nonexistent/key.pem' })
  t.equal(missing.code, 1)
  t.match(missing.stderr, /^JWT_PRIVATE_KEY_FILE cannot be read: ENOENT[^\n]*\(settings: README.md, "Configuration"\)\n$/)
  const garbage = await runCli(['bootstrap'], { DATA_DIR: tempDir(), JWT_PRIVATE_KEY: 'garbage' })
  t.equal(garbage.code, 1)
  t.match(garbage.stderr, /^JWT_PRIVATE_KEY must hold a PEM private key: [^\n]*\(settings: README.md, "Configuration"\)\n$/)
})

t.test('a command that writes refuses a DATA_DIR another process holds, in one line; reading the log goes on beside it', async (t) => {
  const config = testConfig({ adminClientId: 'cli-admin', adminClientSecret: 'cli-secret' })
  const env = { DATA_DIR: config.dataDir, ADMIN_CLIENT_ID: 'cli-admin', ADMIN_CLIENT_SECRET: 'cli-secret' }
  t.equal((await runCli(['bootstrap'], env)).code, 0)
  const holder = await createRuntime(config, { command: 'serve' })
  t.teardown(() => holder.close())
  for (const args of [['bootstrap'], ['demo'], ['projections', 'rebuild'], ['projections', 'list']]) {
    const refused = await runCli(args, env)
    t.equal(refused.code, 1, args.join(' '))
    t.match(refused.stderr, new RegExp(`^DATA_DIR ${config.dataDir} is in use by credit-service serve \\(pid ${process.pid}, since [^)]+\\): stop it first[^\\n]*\\n$`))
  }
  const tail = await runCli(['events', 'tail', '--no-follow'], env)
  t.equal(tail.code, 0, tail.stderr)
  t.match(tail.stdout, /ServiceBootstrapped/)
  t.equal((await runCli(['events', 'read', 'system-bootstrap'], env)).code, 0)
})

t.test('a store URL without its scheme, a port in use or an address not of this machine stops the command in one line naming the setting', async (t) => {
  const settings = '(settings: README.md, "Configuration")'
  const eventStore = await runCli(['bootstrap'], { DATA_DIR: tempDir(), EVENTSTORE_URL: 'localhost:2113' })
  t.equal(eventStore.code, 1)
  t.equal(eventStore.stderr, `EVENTSTORE_URL must be a connection string starting esdb:// or esdb+discover://, got "localhost:2113" ${settings}\n`)
  const mongo = await runCli(['bootstrap'], { DATA_DIR: tempDir(), MONGODB_URL: 'http://db:27017' })
  t.equal(mongo.code, 1)
  t.equal(mongo.stderr, `MONGODB_URL must be a connection string starting mongodb:// or mongodb+srv://, got "http://db:27017" ${settings}\n`)

  const taken = net.createServer()
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise((resolve) => taken.close(resolve)))
  const { port } = taken.address() as net.AddressInfo
  const env = { DATA_DIR: tempDir(), HOST: '127.0.0.1', ADMIN_CLIENT_ID: 'cli-admin', ADMIN_CLIENT_SECRET: 'cli-secret' }
  const inUse = await runCli(['serve'], { ...env, PORT: String(port) })
  t.equal(inUse.code, 1)
  t.match(inUse.stderr, new RegExp(`^PORT ${port} is in use on HOST 127\\.0\\.0\\.1 by another process \\(settings: README\\.md, "Configuration"\\)\\n$`))
  // 192.0.2.1 is TEST-NET-1 (RFC 5737): no machine has it.
  const foreign = await runCli(['serve'], { ...env, HOST: '192.0.2.1', PORT: '0' })
  t.equal(foreign.code, 1)
  t.match(foreign.stderr, /^HOST 192\.0\.2\.1 is not an address of this machine \(settings: README\.md, "Configuration"\)\n$/)
})

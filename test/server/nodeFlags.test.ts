import fs from 'node:fs'
import t from 'tap'
import { missingNodeFlags, SERVICE_NODE_FLAGS } from '../../src/shared/nodeFlags.js'
import { tempDir } from '../helpers/config.js'
import { spawnServer, type ServerProcess } from '../helpers/process.js'

t.test('the service V8 flags are added only where neither the command line nor NODE_OPTIONS sets them', async (t) => {
  t.same(missingNodeFlags([], ''), SERVICE_NODE_FLAGS)
  t.same(missingNodeFlags(['--max-semi-space-size=64'], ''), [], 'an operator value on the command line wins')
  t.same(missingNodeFlags([], '--max-old-space-size=4096 --max_semi_space_size=8'), [], 'and one in NODE_OPTIONS, in either spelling')
  t.same(missingNodeFlags(['--import', 'tsx'], '--max-old-space-size=4096'), SERVICE_NODE_FLAGS, 'other flags do not count')
})

const pidOf = (line: string): number | undefined => {
  if (!line.startsWith('{')) return undefined
  const pid: unknown = (JSON.parse(line) as { pid?: unknown }).pid
  return typeof pid === 'number' ? pid : undefined
}

t.test('the container image starts the service with its V8 flags, so it runs as one process', async (t) => {
  const dockerfile = fs.readFileSync(new URL('../../Dockerfile', import.meta.url), 'utf8')
  const cmd = /^CMD (\[.*\])$/m.exec(dockerfile)?.[1]
  if (cmd === undefined) throw new Error('the Dockerfile has no CMD in exec form')
  const argv: unknown = JSON.parse(cmd)
  if (!Array.isArray(argv) || !argv.every((arg): arg is string => typeof arg === 'string')) throw new Error(`CMD is not a list of strings: ${cmd}`)
  t.equal(argv[0], 'node')
  const script = argv.indexOf('bin/credit-service.js')
  t.ok(script > 0, 'it runs bin/credit-service.js')
  t.same(missingNodeFlags(argv.slice(1, script), ''), [], 'no service flag is left for a second process to add')
})

t.test('the container image runs the service as an unprivileged user that owns DATA_DIR', async (t) => {
  const dockerfile = fs.readFileSync(new URL('../../Dockerfile', import.meta.url), 'utf8')
  const lines = dockerfile.split('\n')
  const user = lines.findLastIndex((line) => line.startsWith('USER '))
  t.equal(lines[user], 'USER node')
  t.ok(user < lines.findIndex((line) => line.startsWith('CMD ')), 'before the service starts')
  t.match(dockerfile, /^ENV DATA_DIR=\/data$/m)
  t.match(dockerfile, /^RUN mkdir -p \/data && chown node:node \/data$/m, 'the one place it writes is its own')
})

/** The pid the service logs (pino writes it on every line, which may reach the pipe after the CLI's plain "listening" line). */
const loggedPid = async (server: ServerProcess): Promise<number> => {
  const pid = pidOf(await server.lineWhere((line) => pidOf(line) !== undefined))
  if (pid === undefined) throw new Error('unreachable: the line was chosen for its pid')
  return pid
}

const gone = async (pid: number): Promise<void> => {
  for (;;) {
    try {
      process.kill(pid, 0)
    } catch {
      return
    }
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

t.test('started without its flags, the command runs the service in a child given them, which stops with it', async (t) => {
  const server = await spawnServer({ DATA_DIR: tempDir(), ADMIN_CLIENT_ID: 'flags-admin', ADMIN_CLIENT_SECRET: 'flags-secret' }, { asCommand: true })
  t.teardown(() => { server.child.kill('SIGKILL') })
  const service = await loggedPid(server)
  t.not(service, server.child.pid, 'the service is another process')
  const argv = fs.readFileSync(`/proc/${service}/cmdline`, 'utf8').split('\0')
  for (const flag of SERVICE_NODE_FLAGS) t.ok(argv.includes(flag), `the service runs with ${flag}`)

  server.child.kill('SIGTERM')
  t.equal(await server.exited, 0, 'a SIGTERM is forwarded and the command exits as the service does')
  await gone(service)
  t.ok(await server.lineWhere((line) => line.includes('shutting down')), 'the service shut down cleanly')
})

t.test('when the starting process is killed outright, the service it started stops too', async (t) => {
  const server = await spawnServer({ DATA_DIR: tempDir(), ADMIN_CLIENT_ID: 'flags-admin', ADMIN_CLIENT_SECRET: 'flags-secret' }, { asCommand: true })
  t.teardown(() => { server.child.kill('SIGKILL') })
  const service = await loggedPid(server)
  t.teardown(() => { try { process.kill(service, 'SIGKILL') } catch { /* already gone */ } })
  server.child.kill('SIGKILL')
  await gone(service)
  t.pass('the service process ended')
})

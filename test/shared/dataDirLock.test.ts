import { spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import readline from 'node:readline'
import t from 'tap'
import { createRuntime } from '../../src/runtime.js'
import { DataDirInUseError, lockDataDir } from '../../src/shared/dataDirLock.js'
import { tempDir, testConfig } from '../helpers/config.js'

const at = new Date('2026-11-24T10:00:00.000Z')

t.test('a DATA_DIR held by one lock refuses a second, naming the holder, until the first is released', async (t) => {
  const dir = tempDir()
  const first = lockDataDir(dir, 'serve', at)
  t.throws(() => lockDataDir(dir, 'bootstrap', at), new DataDirInUseError(
    `DATA_DIR ${dir} is in use by credit-service serve (pid ${process.pid}, since 2026-11-24T10:00:00.000Z): stop it first, or give this one a DATA_DIR of its own`))
  t.doesNotThrow(() => lockDataDir(tempDir(), 'serve', at).release(), 'another DATA_DIR is free')
  first.release()
  first.release()
  const second = lockDataDir(dir, 'bootstrap', at)
  t.pass('taken once released (and a second release changed nothing)')
  second.release()
})

t.test('a process that dies holding DATA_DIR leaves no stale lock: the next start takes it at once', async (t) => {
  const dir = tempDir()
  const module = path.resolve(import.meta.dirname, '../../src/shared/dataDirLock.ts')
  const holder = spawn(process.execPath, ['--import', 'tsx', '-e',
    `const { lockDataDir } = await import(${JSON.stringify(module)}); lockDataDir(${JSON.stringify(dir)}, 'serve', new Date()); console.log('held'); setInterval(() => {}, 1000)`],
  { stdio: ['ignore', 'pipe', 'inherit'] })
  const exited = new Promise((resolve) => holder.once('exit', resolve))
  const [line] = await readline.createInterface({ input: holder.stdout })[Symbol.asyncIterator]().next().then((r) => [r.value])
  t.equal(line, 'held')
  t.throws(() => lockDataDir(dir, 'serve', at), { message: new RegExp(`in use by credit-service serve \\(pid ${holder.pid}, `) }, 'refused while another process holds it')
  holder.kill('SIGKILL')
  await exited
  const taken = lockDataDir(dir, 'serve', at)
  t.pass('taken after the holder was killed')
  taken.release()
})

t.test('a runtime on the embedded event store holds its DATA_DIR: a second refuses to start, one that only reads the log does not', async (t) => {
  const config = testConfig()
  const first = await createRuntime(config, { command: 'serve' })
  await t.rejects(createRuntime(config, { command: 'projections rebuild' }), DataDirInUseError)
  const reader = await createRuntime(config, { command: 'events read', readOnly: true })
  t.ok((await reader.eventStore.headPosition()) >= 0, 'the reader reads the log beside it')
  await reader.close()
  await first.close()
  const next = await createRuntime(config, { command: 'serve' })
  t.pass('free again once the first closed')
  await next.close()
})

t.test('a DATA_DIR this process may not write stops the start in one line saying so and what to do', async (t) => {
  const dir = tempDir()
  const said = /^DATA_DIR \S+ cannot be written by uid \d+ \(SQLITE_CANTOPEN\): give it to that user \(chown -R\) or choose another DATA_DIR$/
  if (process.getuid?.() !== 0) {
    fs.chmodSync(dir, 0o500)
    t.teardown(() => fs.chmodSync(dir, 0o700))
    t.throws(() => lockDataDir(dir, 'serve', at), { name: 'ConfigError', message: said })
    return
  }
  // Root writes anywhere: the process that may not is a child running as nobody, on a directory root owns (an older image's volume).
  const module = path.resolve(import.meta.dirname, '../../src/shared/dataDirLock.ts')
  const child = spawn(process.execPath, ['--import', 'tsx', '-e',
    `const { lockDataDir } = await import(${JSON.stringify(module)}); try { lockDataDir(${JSON.stringify(dir)}, 'serve', new Date()) } catch (e) { console.log(JSON.stringify({ name: e.name, message: e.message })) }`],
  // Its stderr is dropped: tap's process tracking, which it inherits, cannot write its record as nobody when it exits.
  { stdio: ['ignore', 'pipe', 'ignore'], uid: 65534, gid: 65534 })
  let out = ''
  child.stdout.on('data', (chunk: Buffer) => { out += chunk.toString() })
  await new Promise((resolve) => child.once('close', resolve))
  t.match(JSON.parse(out), { name: 'ConfigError', message: said })
})

t.test('with EventStoreDB but the read models (and their checkpoints) kept in DATA_DIR, the runtime holds it too', async (t) => {
  const embeddedReads = testConfig({ eventStoreUrl: 'esdb://127.0.0.1:1?tls=false' })
  const first = await createRuntime(embeddedReads)
  t.teardown(() => first.close())
  await t.rejects(createRuntime(embeddedReads, { command: 'projections rebuild' }), DataDirInUseError)
})

import os from 'node:os'
import { parseArgs, type ParseArgsConfig } from 'node:util'
import { SingleBar, Presets } from 'cli-progress'
import { backupDataDir } from './backup/backup.js'
import { asBackupError, BackupError } from './backup/manifest.js'
import { restoreDataDir } from './backup/restore.js'
import { loadDemo } from './demo/index.js'
import { UnreadableEventError } from './events/serialization.js'
import { bootstrap } from './identity/bootstrap.js'
import { allProjections } from './projections/index.js'
import type { ProjectionTiming } from './projections/runner.js'
import { createRuntime } from './runtime.js'
import { startServer, type RunningServer } from './server.js'
import { ConfigError, loadConfig } from './shared/config.js'
import { errorMessage } from './shared/errors.js'
import { writeInTurn } from './shared/output.js'

const usage = `credit-service <command>

  serve                          start the HTTP service (same as npm start)
  bootstrap                      create the first organization and administrator client if the store is empty
  projections rebuild [name...] [--timings]
                                 drop and rebuild read models from the event log (all when no name);
                                 --timings also prints each projection's time per event type
  projections list               the projections and their positions
  events read <stream> [--from N] [--limit N]   a stream's events as JSON lines
  events tail [--from POSITION] [--no-follow]   the global log as JSON lines (default: last 10, then live)
  demo                           load the demo data set (idempotent)
  backup <directory>             copy DATA_DIR (event log, read store, keys, files) into a new directory,
                                 consistent even while the service runs
  restore <directory> [--check]  check a backup and copy it into an empty DATA_DIR; --check only checks it
`

const print = (line: string) => process.stdout.write(`${line}\n`)

/** A command line the CLI does not take: one line saying why, then the usage, exit code 2. */
class UsageError extends Error {}

/** parseArgs, with what it refuses (an unknown option, a missing value) as a usage error rather than a stack trace. */
const argsOf = <T extends NonNullable<ParseArgsConfig['options']>>(args: string[], options: T) => {
  try {
    return parseArgs({ args, allowPositionals: true, options, strict: true })
  } catch (error) {
    throw new UsageError(errorMessage(error))
  }
}

/** A count or position given as an option: digits only (Number would take '', '1e3' or '0x10', and make NaN of the rest). */
const wholeNumber = (option: string, value: string | undefined): number | undefined => {
  if (value === undefined) return undefined
  if (!/^\d+$/.test(value)) throw new UsageError(`--${option} must be a whole number, got "${value}"`)
  return Number(value)
}

/** A line of a log: waits while stdout's buffer is full. */
const printInTurn = (line: string): Promise<void> => writeInTurn(process.stdout, `${line}\n`)

const printCredentials = (credentials: { client_id: string; client_secret: string; organization_id: string; token_url: string } | undefined) => {
  if (credentials === undefined) return
  print('Administrator client created (shown once; also in DATA_DIR/admin-credentials.json, mode 0600):')
  print(`  client_id     ${credentials.client_id}`)
  print(`  client_secret ${credentials.client_secret}`)
  print(`  organization  ${credentials.organization_id}`)
  print(`  token url     ${credentials.token_url}`)
}

/** The signals that stop the service gracefully: a terminal closing (SIGHUP) as much as an orchestrator (SIGTERM) or Ctrl-C. */
const STOP_SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const

/** How far apart the terminal's Ctrl-C and the launcher's forwarded copy of it may arrive. */
const DUPLICATE_SIGNAL_MS = 1000

const serve = async () => {
  let server: RunningServer | null = null
  let stopping: string | null = null
  const shutdown = (running: RunningServer, signal: string) => {
    running.runtime.logger.info({ signal }, 'shutting down')
    void running.close().then(() => process.exit(0), (error: unknown) => {
      running.runtime.logger.error({ err: error }, 'shutdown failed')
      process.exit(1)
    })
  }
  let firstSignalAt = 0
  // Listened for before the start, which replays the log and starts the process managers: a signal then stops the service once it is up, through the same graceful path.
  for (const signal of STOP_SIGNALS) {
    process.on(signal, () => {
      if (stopping !== null) {
        // A Ctrl-C reaches the service twice when bin/credit-service.js started it as a child: straight from the terminal and forwarded, moments apart.
        // A signal after that, while a start still runs (a store not answering, a long replay), is an operator who will not wait for it.
        if (server === null && performance.now() - firstSignalAt > DUPLICATE_SIGNAL_MS) {
          process.stderr.write(`${signal} again: stopping now, without waiting for the start\n`)
          process.exit(128 + os.constants.signals[signal])
        }
        return
      }
      stopping = signal
      firstSignalAt = performance.now()
      if (server !== null) shutdown(server, signal)
      else process.stderr.write(`${signal}: stopping once the start in progress is done (a second signal stops it now)\n`)
    })
  }
  const config = loadConfig()
  print(`credit-service starting on DATA_DIR ${config.dataDir}`)
  server = await startServer(config)
  printCredentials(server.bootstrap.generated)
  if (stopping !== null) return shutdown(server, stopping)
  print(`credit-service listening on ${server.address}`)
}

/** How a command uses the store: `start` catches the read models up first; `readOnly` only reads the log, beside a running service. */
interface RuntimeUse {
  command: string
  start?: boolean
  readOnly?: boolean
}

const withRuntime = async <T>(use: RuntimeUse, work: (runtime: Awaited<ReturnType<typeof createRuntime>>) => Promise<T>): Promise<T> => {
  const { command, start = true, readOnly = false } = use
  const config = loadConfig(process.env, { processesEnabled: false, cronEnabled: false })
  const runtime = await createRuntime(config, { logger: (await import('pino')).pino({ level: 'warn' }), command, readOnly })
  try {
    if (start) await runtime.start()
    return await work(runtime)
  } finally {
    await runtime.close()
  }
}

const printTimings = (timings: readonly ProjectionTiming[]) => {
  const total = timings.reduce((sum, row) => sum + row.milliseconds, 0)
  print(`time in projections: ${Math.round(total).toLocaleString('en-US')} ms, by projection and event type (slowest first):`)
  for (const row of timings) {
    const perEvent = (row.milliseconds * 1000) / row.events
    print(`  ${row.projection} ${row.eventType}: ${row.events.toLocaleString('en-US')} event${row.events === 1 ? '' : 's'}, ${Math.round(row.milliseconds).toLocaleString('en-US')} ms, ${perEvent.toFixed(1)} µs/event`)
  }
}

/** DATA_DIR of a configuration whose stores are all embedded: with EventStoreDB or MongoDB, those servers' own tools back their data up. */
const embeddedDataDir = (command: string): string => {
  const config = loadConfig(process.env, { processesEnabled: false, cronEnabled: false })
  const servers = [config.eventStoreUrl === undefined ? null : 'EVENTSTORE_URL', config.mongoUrl === undefined ? null : 'MONGODB_URL'].filter((name) => name !== null)
  if (servers.length > 0) {
    throw new BackupError(`${command} copies the embedded stores, and ${servers.join(' and ')} ${servers.length === 1 ? 'is' : 'are'} set: back those servers up with their own tools, and DATA_DIR/keys with them (README.md, "Backup and restore")`)
  }
  return config.dataDir
}

const progressBar = () => {
  const bar = new SingleBar({ format: 'rebuilding [{bar}] {percentage}% | {value}/{total} positions', hideCursor: true }, Presets.shades_classic)
  let begun = false
  return {
    update(position: number, head: number) {
      if (!begun) {
        bar.start(Math.max(head, 1), 0)
        begun = true
      }
      bar.setTotal(Math.max(head, 1))
      bar.update(position)
    },
    stop: () => (begun ? bar.stop() : undefined),
  }
}

const main = async (argv: string[]) => {
  const [command, sub, ...rest] = argv
  switch (command) {
    case 'serve':
    case undefined:
      if (sub !== undefined) throw new UsageError(`serve takes no arguments (settings come from the environment: README.md, "Configuration"), got "${sub}"`)
      return serve()
    case 'bootstrap':
      return withRuntime({ command: 'bootstrap' }, async (runtime) => {
        const result = await bootstrap(runtime)
        printCredentials(result.generated)
        print(result.created ? `bootstrapped organization ${result.organizationId}` : `already bootstrapped (organization ${result.organizationId})`)
      })
    case 'demo':
      return withRuntime({ command: 'demo' }, async (runtime) => {
        await bootstrap(runtime)
        const state = await loadDemo(runtime, print)
        print(`demo organization ${state.organizationId}`)
        for (const [name, id] of Object.entries(state.users)) print(`  user ${name} (${id}), password demo-password-1`)
        for (const client of Object.values(state.clients)) print(`  client ${client.clientId}, secret ${client.clientSecret}`)
      })
    case 'projections':
      if (sub === 'list') {
        return withRuntime({ command: 'projections list' }, async (runtime) => {
          const status = await runtime.projections.status()
          for (const p of status.projections) print(JSON.stringify(p))
        })
      }
      if (sub !== 'rebuild') break
      {
        const { values, positionals: names } = argsOf(rest, { timings: { type: 'boolean', default: false } })
        const unknown = names.filter((name) => !allProjections.some((projection) => projection.name === name))
        if (unknown.length > 0) throw new UsageError(`unknown projection(s): ${unknown.join(', ')} (projections list names them)`)
        return withRuntime({ command: 'projections rebuild', start: false }, async (runtime) => {
          const bar = progressBar()
          const onProgress = (position: number, head: number) => bar.update(position, head)
          let timings: ProjectionTiming[] | null = null
          if (values.timings) timings = await runtime.projections.timedRebuild(names, onProgress)
          else await runtime.projections.rebuild(names, onProgress)
          bar.stop()
          const status = await runtime.projections.status()
          for (const p of status.projections) print(`${p.name}: position ${p.position}${p.failed === null ? '' : `, FAILED: ${p.failed}`}`)
          if (timings !== null) printTimings(timings)
          if (!runtime.readStore.persistent) print('(embedded read store: the service loads the snapshot of its last clean stop, or rebuilds its read models, at start; this run verified the rebuild)')
        })
      }
    case 'events': {
      const { values, positionals } = argsOf(rest, { from: { type: 'string' }, limit: { type: 'string' }, 'no-follow': { type: 'boolean', default: false } })
      const from = wholeNumber('from', values.from)
      const limit = wholeNumber('limit', values.limit)
      if (sub === 'read') {
        const stream = positionals[0]
        if (stream === undefined) break
        return withRuntime({ command: 'events read', start: false, readOnly: true }, async (runtime) => {
          for await (const event of runtime.eventStore.readStream(stream, {
            ...(from === undefined ? {} : { fromRevision: from }),
            ...(limit === undefined ? {} : { maxCount: limit }),
          })) await printInTurn(JSON.stringify(event))
        })
      }
      if (sub === 'tail') {
        return withRuntime({ command: 'events tail', start: false, readOnly: true }, async (runtime) => {
          const head = await runtime.eventStore.headPosition()
          let after = from ?? -1
          if (after < 0) {
            after = head
            for await (const event of runtime.eventStore.readAll({ direction: 'backwards', maxCount: 10 })) after = event.position - 1
          }
          if (values['no-follow']) {
            for await (const event of runtime.eventStore.readAll({ after })) await printInTurn(JSON.stringify(event))
            return
          }
          const subscription = runtime.eventStore.subscribe(after)
          process.once('SIGINT', () => void subscription.close())
          process.once('SIGTERM', () => void subscription.close())
          for await (const event of subscription) await printInTurn(JSON.stringify(event))
        })
      }
      break
    }
    case 'backup': {
      const { positionals } = argsOf(argv.slice(1), {})
      const [target] = positionals
      if (target === undefined || positionals.length > 1) throw new UsageError('backup takes one argument: the directory to create')
      await backupDataDir({ dataDir: embeddedDataDir('backup'), target, now: new Date(), report: print }).catch((error: unknown) => { throw asBackupError(error) })
      return
    }
    case 'restore': {
      const { values, positionals } = argsOf(argv.slice(1), { check: { type: 'boolean', default: false } })
      const [backup] = positionals
      if (backup === undefined || positionals.length > 1) throw new UsageError('restore takes one argument: the backup directory')
      await restoreDataDir({ backup, dataDir: embeddedDataDir('restore'), now: new Date(), checkOnly: values.check, report: print })
        .catch((error: unknown) => { throw asBackupError(error) })
      if (!values.check) print('start the service on this DATA_DIR: its read models catch up with the restored log')
      return
    }
    case 'help':
    case '--help':
      print(usage)
      return
    default:
      break
  }
  process.stderr.write(usage)
  process.exitCode = 2
}

// A reader that stops reading (`| head`) ends the output: nothing more to say, and no stack for it.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error
  process.exit(0)
})

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof UsageError) {
    process.stderr.write(`${error.message}\n\n${usage}`)
    process.exit(2)
  }
  // A bad setting, or a log a newer version wrote, is the operator's to fix: the message says which and why, and a stack would only bury it.
  const text = error instanceof ConfigError ? `${error.message} (settings: README.md, "Configuration")`
    : error instanceof UnreadableEventError || error instanceof BackupError ? error.message
    : error instanceof Error ? error.stack ?? error.message : String(error)
  process.stderr.write(`${text}\n`)
  process.exit(1)
})

import fs from 'node:fs'
import path from 'node:path'
import { pino, type Logger } from 'pino'
import { assertNoUnfinishedRestore } from './backup/restore.js'
import { CommandHandler } from './commands/handler.js'
import type { RecordedEvent } from './events/catalogue.js'
import { EventStoreDbEventStore } from './events/eventstoredb.js'
import { SqliteEventStore } from './events/sqlite.js'
import type { EventStore } from './events/store.js'
import { createExportRuntime } from './exports/index.js'
import type { FileStore } from './files/fileStore.js'
import { FilesystemFileStore } from './files/filesystem.js'
import { GridFsFileStore } from './files/gridfs.js'
import { DataKey } from './identity/dataKey.js'
import { loadSigningKey } from './identity/keys.js'
import { SignInGuard } from './identity/signInGuard.js'
import { TokenService } from './identity/tokens.js'
import { LogNotifier } from './notifications/log.js'
import type { Notifier } from './notifications/notifier.js'
import { SmtpNotifier } from './notifications/smtp.js'
import { FileCheckpointStore, ReadStoreCheckpointStore, type CheckpointStore } from './processes/checkpoints.js'
import { allJobs, allProcesses } from './processes/index.js'
import { LiveHub } from './processes/liveHub.js'
import { ProcessSupervisor } from './processes/process.js'
import { Scheduler } from './processes/scheduler.js'
import { allProjections } from './projections/index.js'
import { MemoryReadStore } from './projections/memoryStore.js'
import { MongoReadStore } from './projections/mongoStore.js'
import { createQueries } from './projections/queries.js'
import type { ReadStore } from './projections/readStore.js'
import { ProjectionRunner } from './projections/runner.js'
import { SqliteReadStore } from './projections/sqliteStore.js'
import { readStoreSnapshots } from './projections/snapshot.js'
import type { Services } from './services.js'
import { systemClock, type Clock } from './shared/clock.js'
import { baseUrl, type Config } from './shared/config.js'
import { lockDataDir, type DataDirLock } from './shared/dataDirLock.js'
import { createWebhookRuntime } from './webhooks/runtime.js'

export interface Runtime extends Services {
  eventStore: EventStore
  readStore: ReadStore
  projections: ProjectionRunner
  processes: ProcessSupervisor<Services>
  scheduler: Scheduler<Services>
  /** Catches the read models up with the log, then starts process managers and schedules as configured. */
  start(options?: { onProgress?: (position: number, head: number) => void }): Promise<void>
  close(): Promise<void>
}

export interface RuntimeOptions {
  clock?: Clock
  logger?: Logger
  /** What this process is (`serve`, `bootstrap`…), told to one refused the DATA_DIR it holds. */
  command?: string
  /** Only reads the log (`events read`/`tail`): runs beside the process that holds DATA_DIR. */
  readOnly?: boolean
}

const openEventStore = (config: Config): EventStore =>
  config.eventStoreUrl !== undefined
    ? new EventStoreDbEventStore(config.eventStoreUrl)
    : new SqliteEventStore({ file: path.join(config.dataDir, 'events.sqlite'), synchronous: config.sqliteSynchronous, readAheadFrom: config.sqliteReadAheadFrom })

const openReadSide = async (config: Config): Promise<{ readStore: ReadStore; files: FileStore; checkpoints: CheckpointStore }> => {
  if (config.mongoUrl !== undefined) {
    const readStore = await MongoReadStore.connect(config.mongoUrl, config.mongoDatabase)
    return { readStore, files: new GridFsFileStore(readStore.database), checkpoints: new ReadStoreCheckpointStore(readStore) }
  }
  const files = new FilesystemFileStore(path.join(config.dataDir, 'files'))
  if (config.readStore === 'sqlite') {
    // Persistent like MongoDB: the process managers' checkpoints live with the read models they wait for.
    const readStore = new SqliteReadStore({ file: path.join(config.dataDir, 'read-store.sqlite') })
    return { readStore, files, checkpoints: new ReadStoreCheckpointStore(readStore) }
  }
  return { readStore: new MemoryReadStore(), files, checkpoints: new FileCheckpointStore(path.join(config.dataDir, 'process-checkpoints.json')) }
}

const openNotifier = (config: Config, logger: Logger): Notifier =>
  config.smtpUrl !== undefined
    ? new SmtpNotifier({ url: config.smtpUrl, from: config.smtpFrom, timeoutMs: config.smtpTimeoutMs })
    : new LogNotifier(logger)

const LEFTOVER_IDLE_MS = 60_000

/** The composition root: opens the stores the configuration names and wires every part to them. */
export const createRuntime = async (config: Config, options: RuntimeOptions = {}): Promise<Runtime> => {
  fs.mkdirSync(config.dataDir, { recursive: true })
  await assertNoUnfinishedRestore(config.dataDir)
  const clock = options.clock ?? systemClock
  // An embedded store (the log, or read models with their checkpoints) makes DATA_DIR one process's; instances on EventStoreDB and MongoDB may share it for the keys.
  const embedded = config.eventStoreUrl === undefined || config.mongoUrl === undefined
  const lock = embedded && options.readOnly !== true ? lockDataDir(config.dataDir, options.command ?? 'serve', clock.now()) : null
  try {
    return await composeRuntime(config, options, clock, lock)
  } catch (error) {
    lock?.release()
    throw error
  }
}

const composeRuntime = async (config: Config, options: RuntimeOptions, clock: Clock, lock: DataDirLock | null): Promise<Runtime> => {
  const logger = options.logger ?? pino({ level: config.logLevel })
  const eventStore = openEventStore(config)
  const { readStore, files, checkpoints } = await openReadSide(config)
  const commands = new CommandHandler({ eventStore, clock, maxRetries: config.commandRetries, cacheSize: config.commandStateCache })
  const hub = new LiveHub()
  const notifier = openNotifier(config, logger)
  const projections = new ProjectionRunner(eventStore, readStore, allProjections, {
    logger,
    clock,
    onProjected: (event: RecordedEvent) => hub.publish(event),
  })
  const queries = createQueries(readStore)
  const snapshots = readStore instanceof MemoryReadStore && config.eventStoreUrl === undefined && config.readStoreSnapshot
    ? readStoreSnapshots({
      file: path.join(config.dataDir, 'read-store.snapshot'), store: readStore, eventStore, logger, now: () => clock.now(),
      positions: () => ({ position: projections.position, checkpoints: projections.positions() }),
    })
    : null
  const signingKey = loadSigningKey({ pem: config.jwtPrivateKey, file: config.jwtPrivateKeyFile, dataDir: config.dataDir })
  const dataKey = DataKey.load(config.dataDir)
  const settle = async (position: number): Promise<void> => {
    if (position <= 0) return
    const reached = await projections.waitFor(position, config.readYourWritesTimeoutMs)
    if (!reached) logger.warn({ position, projections: projections.position }, 'read models did not reach a write in time')
  }

  const signIns = new SignInGuard({ commands, clock, policy: { maxFailures: config.signInMaxFailures, lockoutSeconds: config.signInLockoutSeconds } })
  const tokens = new TokenService({
    key: signingKey, issuer: baseUrl(config), accessTokenTtl: config.accessTokenTtl, refreshTokenTtl: config.refreshTokenTtl, signInMaxAge: config.signInMaxAge,
    mfaTokenTtl: config.mfaTokenTtl, signIns, clock, commands, dataKey,
    findClient: async (id) => queries.principals.client(id),
    findUser: async (id) => queries.principals.user(id),
    findUserByUsername: (name) => queries.principals.userByUsername(name),
    settle,
  })

  const exportRuntime = createExportRuntime(config)
  const webhooks = createWebhookRuntime({
    queries, dataKey, hub, concurrency: config.webhookConcurrency,
    breaker: { timeouts: config.webhookBreakerTimeouts, openMs: config.webhookBreakerOpenSeconds * 1000, clock },
  })
  let started = false
  const up = async (ping: () => Promise<void>) => ping().then(() => true, () => false)
  const services: Services = {
    config, clock, logger, commands, queries, files, hub, tokens, signIns, signingKey, dataKey, notifier, settle, exports: exportRuntime, webhooks,
    async health() {
      const [eventStoreUp, readStoreUp] = await Promise.all([up(() => eventStore.ping()), up(() => readStore.ping())])
      const status = eventStoreUp ? await projections.status() : { head: 0, projections: [] }
      return {
        ready: started && eventStoreUp && readStoreUp && status.projections.every((p) => p.failed === null),
        eventStore: { kind: eventStore.kind, up: eventStoreUp, head: status.head },
        readStore: { kind: readStore.kind, up: readStoreUp, persistent: readStore.persistent },
        files: { kind: files.kind },
        projections: status.projections,
        processes: processes.status(),
      }
    },
    async execute(aggregate, id, command, context) {
      const result = await commands.execute(aggregate, id, command, context)
      await settle(result.position)
      return result
    },
    async *history(streamId, range = {}) {
      yield* eventStore.readStream(streamId, {
        ...(range.from === undefined ? {} : { fromRevision: range.from }),
        ...(range.limit === undefined ? {} : { maxCount: range.limit }),
      })
    },
  }

  const processes = new ProcessSupervisor(eventStore, checkpoints, allProcesses, services, {
    logger,
    projectionsReached: async (position) => {
      while (!(await projections.waitFor(position, 60_000))) logger.warn({ position }, 'process manager waiting for read models')
    },
  })
  const scheduler = new Scheduler(allJobs, services, logger)

  return {
    ...services,
    eventStore, readStore, projections, processes, scheduler,
    async start(startOptions = {}) {
      // A write cut off by a crash leaves a partial file no one will finish; a minute idle tells it from one being written.
      void files.removeLeftovers(LEFTOVER_IDLE_MS, clock.now()).then(
        (removed) => { if (removed > 0) logger.info({ removed }, 'removed files left by writes a crash cut off') },
        (error: unknown) => logger.warn({ err: error }, 'could not remove files left by cut-off writes'),
      )
      await snapshots?.restore()
      await projections.start(startOptions.onProgress)
      if (config.processesEnabled) await processes.start()
      if (config.cronEnabled) scheduler.start()
      started = true
    },
    async close() {
      if (started) {
        await scheduler.stop()
        // Running exports record that they were interrupted before the managers stop following the log.
        await exportRuntime.workers.stop()
        await processes.stop()
        // Sends already started record their outcome while the read models still follow the log.
        await webhooks.drain()
        await projections.stop()
        await snapshots?.save()
      }
      // A rebuild (the CLI's, on a runtime it did not start) leaves the projections following the log: they stop before the stores close.
      await projections.stop()
      webhooks.close()
      hub.close()
      await notifier.close()
      await eventStore.close()
      await readStore.close()
      lock?.release()
    },
  }
}

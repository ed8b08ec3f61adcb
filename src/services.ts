import type { Logger } from 'pino'
import type { CommandContext, CommandHandler, CommandResult } from './commands/handler.js'
import type { Aggregate } from './commands/decider.js'
import type { DomainEvent, RecordedEvent } from './events/catalogue.js'
import type { FileStore } from './files/fileStore.js'
import type { ExportRuntime } from './exports/index.js'
import type { DataKey } from './identity/dataKey.js'
import type { SigningKey } from './identity/keys.js'
import type { SignInGuard } from './identity/signInGuard.js'
import type { TokenService } from './identity/tokens.js'
import type { LiveHub } from './processes/liveHub.js'
import type { ProcessStatus } from './processes/process.js'
import type { Notifier } from './notifications/notifier.js'
import type { Queries } from './projections/queries.js'
import type { ProjectionStatus } from './projections/runner.js'
import type { Clock } from './shared/clock.js'
import type { Config } from './shared/config.js'
import type { WebhookRuntime } from './webhooks/runtime.js'

export interface HealthReport {
  ready: boolean
  eventStore: { kind: string; up: boolean; head: number }
  readStore: { kind: string; up: boolean; persistent: boolean }
  files: { kind: string }
  projections: ProjectionStatus[]
  processes: ProcessStatus[]
}

/**
 * What the HTTP layer, the process managers and the scheduled jobs work with:
 * command handling, queries over the read models, files, the live hub. No
 * adapter is reachable from here except through these.
 */
export interface Services {
  config: Config
  clock: Clock
  logger: Logger
  commands: CommandHandler
  queries: Queries
  files: FileStore
  hub: LiveHub
  tokens: TokenService
  /** Counts wrong passwords and codes per user and locks the sign-in after too many. */
  signIns: SignInGuard
  signingKey: SigningKey
  dataKey: DataKey
  /** Outgoing notifications (SMTP when SMTP_URL is set, else the log); only process managers send. */
  notifier: Notifier
  /** Runs a command, then waits (bounded) until the read models show what it appended. */
  execute<C, E extends DomainEvent, S>(aggregate: Aggregate<C, E, S>, id: string, command: C, context: CommandContext): Promise<CommandResult<E, S>>
  /** Waits (bounded by READ_YOUR_WRITES_TIMEOUT_MS) until every projection has processed `position`. */
  settle(position: number): Promise<void>
  /** Liveness, readiness, store status and projection lag. */
  health(): Promise<HealthReport>
  /** A stream's events in order, for auditors. */
  history(streamId: string, options?: { from?: number; limit?: number }): AsyncIterable<RecordedEvent>
  /** Export data sets, report sources, blob producers and the running export jobs. */
  exports: ExportRuntime
  /** Webhook configuration caches (invalidated by events) and the bound on sends in flight. */
  webhooks: WebhookRuntime
}

import fs from 'node:fs'
import path from 'node:path'
import { MONEY_INPUT_PATTERN } from './money.js'
import { instantOf } from './instant.js'

/**
 * Every environment variable the service reads, in one table. The README's
 * configuration table is checked against it by a test.
 */
interface Setting<T> {
  env: string
  description: string
  defaultText: string
  parse(raw: string | undefined): T
}

/** A setting the environment gives a value it cannot take: the operator's to fix, told in one line. */
export class ConfigError extends Error {
  override readonly name: string = 'ConfigError'
}

const text = (env: string, fallback: string, description: string): Setting<string> => ({
  env, description, defaultText: fallback === '' ? '(none)' : fallback,
  parse: (raw) => (raw === undefined || raw === '' ? fallback : raw),
})

const optionalText = (env: string, description: string): Setting<string | undefined> => ({
  env, description, defaultText: '(unset)',
  parse: (raw) => (raw === undefined || raw === '' ? undefined : raw),
})

const integer = (env: string, fallback: number, description: string, min = 0, max?: number): Setting<number> => ({
  env, description, defaultText: String(fallback),
  parse: (raw) => {
    if (raw === undefined || raw === '') return fallback
    // Digits only: Number would also take ' ' (0), '0x50' (80) and '1e3'.
    const value = /^-?\d+$/.test(raw.trim()) ? Number(raw.trim()) : Number.NaN
    const bounds = max === undefined ? `>= ${min}` : `from ${min} to ${max}`
    if (!Number.isSafeInteger(value) || value < min || (max !== undefined && value > max)) throw new ConfigError(`${env} must be an integer ${bounds}, got "${raw}"`)
    return value
  },
})

const flag = (env: string, fallback: boolean, description: string): Setting<boolean> => ({
  env, description, defaultText: String(fallback),
  parse: (raw) => {
    if (raw === undefined || raw === '') return fallback
    if (['true', '1', 'yes'].includes(raw.toLowerCase())) return true
    if (['false', '0', 'no'].includes(raw.toLowerCase())) return false
    throw new ConfigError(`${env} must be true or false, got "${raw}"`)
  },
})

const oneOf = <T extends string>(env: string, values: readonly T[], fallback: T, description: string): Setting<T> => ({
  env, description, defaultText: fallback,
  parse: (raw) => {
    if (raw === undefined || raw === '') return fallback
    const found = values.find((v) => v === raw)
    if (found === undefined) throw new ConfigError(`${env} must be one of ${values.join(', ')}, got "${raw}"`)
    return found
  },
})

/** A date (`2026-08-01`, midnight UTC) or an RFC 3339 timestamp with its offset, so the instant does not depend on the host's zone. */
const instant = (env: string, fallback: string, description: string): Setting<Date> => ({
  env, description, defaultText: fallback,
  parse: (raw) => {
    const text = raw === undefined || raw === '' ? fallback : raw
    const value = instantOf(text)
    if (value === null || Number.isNaN(value.getTime())) {
      throw new ConfigError(`${env} must be a date (2026-08-01, midnight UTC) or a timestamp with its offset (2026-08-01T00:00:00Z), got "${text}"`)
    }
    return value
  },
})

/**
 * A setting whose value must also pass `check` (which answers what is wrong,
 * or null), so a value only its user would refuse (a start that then logs an
 * error every second, or accepts no upload) fails at start instead.
 */
const checked = <T>(setting: Setting<T>, check: (value: T) => string | null): Setting<T> => ({
  ...setting,
  parse: (raw) => {
    const value = setting.parse(raw)
    const wrong = check(value)
    if (wrong !== null) throw new ConfigError(`${setting.env} ${wrong}, got "${raw ?? ''}"`)
    return value
  },
})

/** Null when `text` is an absolute URL of one of `protocols` (empty or unset text passes: the setting's default applies). */
const urlProblem = (protocols: readonly string[]) => (text: string | undefined): string | null => {
  if (text === undefined || text === '') return null
  const url = URL.canParse(text) ? new URL(text) : null
  return url !== null && protocols.includes(url.protocol) ? null : `must be a URL starting ${protocols.map((p) => `${p}//`).join(' or ')}`
}

/**
 * A connection string's scheme: the clients parse the rest (several hosts
 * separated by commas, which WHATWG URLs refuse), but a missing or wrong
 * scheme, the usual slip, is said in one line here rather than in their stack.
 */
const connectionStringProblem = (schemes: readonly string[]) => (text: string | undefined): string | null => {
  if (text === undefined || text === '') return null
  return schemes.some((scheme) => text.startsWith(`${scheme}://`) && text.length > scheme.length + 3) && !/\s/.test(text)
    ? null : `must be a connection string starting ${schemes.map((scheme) => `${scheme}://`).join(' or ')}`
}

const list = (env: string, fallback: readonly string[], description: string): Setting<readonly string[]> => ({
  env, description, defaultText: fallback.join(','),
  parse: (raw) => {
    if (raw === undefined || raw.trim() === '') return fallback
    return raw.split(',').map((item) => item.trim().toLowerCase()).filter((item) => item !== '')
  },
})

/**
 * The longest an access token may live. A revoked sign-in is remembered (read model `revoked_sign_ins`) only this long
 * after its revocation, when every access token issued to it has expired.
 */
export const MAX_ACCESS_TOKEN_TTL_SECONDS = 86_400

export const settings = {
  port: integer('PORT', 8080, 'TCP port the HTTP server listens on', 0, 65_535),
  host: text('HOST', '0.0.0.0', 'Interface the HTTP server binds to'),
  dataDir: checked(text('DATA_DIR', './data', 'Directory of the embedded stores, keys, files and admin credentials'),
    (dir) => (fs.statSync(dir, { throwIfNoEntry: false })?.isDirectory() === false ? 'must name a directory (it names a file)' : null)),
  logLevel: oneOf('LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const, 'info', 'pino log level'),
  publicUrl: checked(text('PUBLIC_URL', '', 'External base address (e.g. https://credits.example.com); used in token issuer and absolute links. Defaults to http://localhost:PORT'),
    urlProblem(['http:', 'https:'])),
  eventStoreUrl: checked(optionalText('EVENTSTORE_URL', 'EventStoreDB connection string (esdb://host:2113?tls=false). Unset: embedded SQLite event store in DATA_DIR'),
    connectionStringProblem(['esdb', 'esdb+discover'])),
  mongoUrl: checked(optionalText('MONGODB_URL', 'MongoDB connection string. Unset: embedded in-process read store (loaded from its snapshot or rebuilt from the log at start), files under DATA_DIR/files'),
    connectionStringProblem(['mongodb', 'mongodb+srv'])),
  mongoDatabase: text('MONGODB_DATABASE', 'credit_service', 'MongoDB database name'),
  sqliteSynchronous: oneOf('SQLITE_SYNCHRONOUS', ['FULL', 'NORMAL'] as const, 'FULL', 'SQLite synchronous mode of the embedded event store (FULL survives power loss; NORMAL survives process crashes only)'),
  sqliteReadAheadFrom: integer('SQLITE_READ_AHEAD_FROM', 50_000, 'A subscription to every event type this many events or more behind the head (a rebuild, a start without a snapshot) reads the log in a thread of its own: faster, about 100 MiB more at the peak. 0 never does', 0),
  adminClientId: optionalText('ADMIN_CLIENT_ID', 'Client id of the administrator client created on first start (generated when unset)'),
  adminClientSecret: optionalText('ADMIN_CLIENT_SECRET', 'Secret of the administrator client (generated when unset, printed once and written to DATA_DIR/admin-credentials.json)'),
  bootstrapOrganizationName: text('BOOTSTRAP_ORGANIZATION_NAME', 'Default organization', 'Name of the organization created on first start'),
  jwtPrivateKey: optionalText('JWT_PRIVATE_KEY', 'PEM of the ES256/RS256 signing key (or JWT_PRIVATE_KEY_FILE); generated into DATA_DIR/keys on first start when unset'),
  jwtPrivateKeyFile: optionalText('JWT_PRIVATE_KEY_FILE', 'Path of a PEM file with the signing key'),
  accessTokenTtl: integer('ACCESS_TOKEN_TTL', 3600, 'Access-token lifetime in seconds (expires_in), at most 86400 (one day)', 1, MAX_ACCESS_TOKEN_TTL_SECONDS),
  refreshTokenTtl: integer('REFRESH_TOKEN_TTL', 2_592_000, 'Refresh-token lifetime in seconds (30 days)', 1),
  signInMaxAge: integer('SIGN_IN_MAX_AGE', 7_776_000, 'Longest life in seconds of a user\'s sign-in from its first refresh token, however often rotated (90 days); then the user signs in again', 1),
  mfaTokenTtl: integer('MFA_TOKEN_TTL', 300, 'Lifetime in seconds of the mfa_token returned by an mfa_required error', 1),
  signInMaxFailures: integer('SIGN_IN_MAX_FAILURES', 5, 'Wrong passwords or one-time codes in a row that lock a user\'s sign-in', 1),
  signInLockoutSeconds: integer('SIGN_IN_LOCKOUT_SECONDS', 900, 'How long in seconds a user\'s sign-in stays locked after too many failures', 1),
  readYourWritesTimeoutMs: integer('READ_YOUR_WRITES_TIMEOUT_MS', 5000, 'How long a command endpoint waits for projections to reach its write before answering anyway', 0),
  commandRetries: integer('COMMAND_RETRIES', 3, 'Retries of a command after an expected-revision conflict before answering 409', 0),
  commandStateCache: integer('COMMAND_STATE_CACHE', 10_000, 'Aggregate states kept folded in memory by the command handler (0 disables; the store stays the source of truth)', 0),
  bodyLimit: integer('BODY_LIMIT', 1_048_576, 'Largest JSON or form request body in bytes', 1024),
  requestTimeoutMs: integer('REQUEST_TIMEOUT_MS', 120_000, 'Longest wait in milliseconds for a whole request (headers and body) to arrive; a slower one is answered 408 and its connection closed. 0 waits forever (behind a proxy that limits it)', 0),
  cronEnabled: flag('CRON_ENABLED', true, 'Run the node-cron schedules (expiry jobs, snapshots)'),
  processesEnabled: flag('PROCESSES_ENABLED', true, 'Run the process managers (webhooks, exports, payment application)'),
  shutdownTimeoutMs: integer('SHUTDOWN_TIMEOUT_MS', 10_000, 'Longest wait for in-flight requests on SIGTERM, SIGINT or SIGHUP', 0),
  webhookTimeoutMs: integer('WEBHOOK_TIMEOUT_MS', 10_000, 'Timeout in milliseconds of each outbound webhook request (and of its token request)', 1),
  webhookAllowPrivateNetworks: flag('WEBHOOK_ALLOW_PRIVATE_NETWORKS', false, 'Let webhooks reach loopback, private, link-local and cloud-metadata addresses (tests and local development only)'),
  webhookLogBodyMaxBytes: integer('WEBHOOK_LOG_BODY_MAX_BYTES', 65_536, 'Bytes of each request and response body kept in webhook send logs (the rest is cut)', 0),
  webhookResponseMaxBytes: integer('WEBHOOK_RESPONSE_MAX_BYTES', 1_048_576, 'Bytes of a destination or token response read at most (response queries see only these)', 1024),
  webhookTemplateMaxOutput: integer('WEBHOOK_TEMPLATE_MAX_OUTPUT', 1_048_576, 'Largest text in characters one webhook template may render', 1024),
  exportsConcurrency: integer('EXPORTS_CONCURRENCY', 2, 'Export jobs one instance runs at the same time', 1),
  exportsRetentionDays: integer('EXPORTS_RETENTION_DAYS', 7, 'Days an export file is served after its job completes; then it answers 410 and its content is deleted', 1),
  exportsMaxAttempts: integer('EXPORTS_MAX_ATTEMPTS', 3, 'Runs of an export job that keeps being interrupted (restart, lost runner) before it fails', 1),
  exportsStaleAfterSeconds: integer('EXPORTS_STALE_AFTER_SECONDS', 120, 'A running export job with no heartbeat for this long is taken as interrupted and queued again', 1),
  exportsHeartbeatSeconds: integer('EXPORTS_HEARTBEAT_SECONDS', 15, 'Longest time between two progress events of a running export job (its heartbeat)', 1),
  exportsProgressEveryRows: integer('EXPORTS_PROGRESS_EVERY_ROWS', 10_000, 'Rows between two progress events of a running export job', 1),
  exportsReportsMaxConcurrent: integer('EXPORTS_REPORTS_MAX_CONCURRENT', 2, 'Queued or running reports jobs an organization may have at once (more answers 429)', 1),
  exportsReportsMaxPerHour: integer('EXPORTS_REPORTS_MAX_PER_HOUR', 20, 'Reports jobs an organization may create in any rolling hour (more answers 429)', 1),
  exportsReportsMaxRows: integer('EXPORTS_REPORTS_MAX_ROWS', 1_000_000, 'Largest reports export in rows: a dry run above it says overflowed, a job above it fails', 1),
  exportsReportsSoftWarnRows: integer('EXPORTS_REPORTS_SOFT_WARN_ROWS', 100_000, 'Rows above which a reports dry run sets softWarn (the export works but is large)', 1),
  exportsSseHeartbeatMs: integer('EXPORTS_SSE_HEARTBEAT_MS', 15_000, 'Interval of the heartbeat comment on export event streams', 10),
  exportsSseMaxBufferBytes: integer('EXPORTS_SSE_MAX_BUFFER_BYTES', 1_048_576, 'Unsent bytes an event-stream client may fall behind before it is disconnected', 1024),
  exportsSseMaxStreamsPerPrincipal: integer('EXPORTS_SSE_MAX_STREAMS_PER_PRINCIPAL', 16, 'Export event streams one user or client may hold open at once on one instance (one more answers 429)', 1),
  exportsLegacySunset: instant('EXPORTS_LEGACY_SUNSET', '2026-08-01T00:00:00Z', 'Sunset of the legacy export routes (a date, midnight UTC, or a timestamp with its offset): from then on they answer 404'),
  exportsLegacyReportsSunset: instant('EXPORTS_LEGACY_REPORTS_SUNSET', '2026-07-01T00:00:00Z', 'Sunset of the four legacy /reports/export/* routes (a date, midnight UTC, or a timestamp with its offset)'),
  uploadMaxBytes: integer('UPLOAD_MAX_BYTES', 10_485_760, 'Largest profile or signature file upload in bytes (10 MiB)', 1),
  uploadAllowedTypes: checked(list('UPLOAD_ALLOWED_TYPES', ['application/pdf', 'image/jpeg', 'image/png', 'image/webp', 'image/tiff', 'image/heic'],
    'Comma-separated content types accepted for profile and signature files, as sniffed from the bytes'),
  (types) => (types.length > 0 && types.every((type) => /^[a-z0-9][\w.+-]*\/[a-z0-9][\w.+-]*$/.test(type)) ? null : 'must list content types such as image/png')),
  smtpUrl: checked(optionalText('SMTP_URL', 'SMTP server for notifications (smtp://user:pass@host:587 or smtps://…). Unset: notifications are recorded and logged only'),
    urlProblem(['smtp:', 'smtps:'])),
  smtpFrom: text('SMTP_FROM', 'Credit service <no-reply@localhost>', 'From address of notification e-mails'),
  smtpTimeoutMs: integer('SMTP_TIMEOUT_MS', 10_000, 'Connection, greeting and socket timeout of the SMTP client in milliseconds', 1),
  sandboxDelayMs: integer('SANDBOX_DELAY_MS', 2000, 'Simulated processing time of the sandbox payment provider before it settles an order', 0),
  sandboxFailAmount: checked(text('SANDBOX_FAIL_AMOUNT', '13.13', 'Order amount the sandbox payment provider declines (any other amount completes)'),
    (amount) => (new RegExp(MONEY_INPUT_PATTERN).test(amount) ? null : 'must be a decimal amount such as 13.13')),
  readStoreSnapshot: flag('READ_STORE_SNAPSHOT', true, 'Embedded read store only: write it to DATA_DIR/read-store.snapshot on shutdown and load it at the next start, which then catches up from there instead of replaying the whole log (ignored when the code or the log changed)'),
  webhookConcurrency: integer('WEBHOOK_CONCURRENCY', 256, 'Webhook sends one instance has in flight at once (the webhooks of one trigger go out concurrently within it)', 1),
  webhookBreakerTimeouts: integer('WEBHOOK_BREAKER_TIMEOUTS', 3, 'Timeouts in a row of a webhook\'s automatic sends to one destination (its token requests counted apart) after which those fail at once (DESTINATION_UNAVAILABLE) for WEBHOOK_BREAKER_OPEN_SECONDS, so a dead destination cannot hold the shared send slots; 0 never', 0),
  webhookBreakerOpenSeconds: integer('WEBHOOK_BREAKER_OPEN_SECONDS', 60, 'How long a webhook\'s automatic sends fail at once after WEBHOOK_BREAKER_TIMEOUTS timeouts in a row, before one is tried again', 1, 86_400),
  readStore: oneOf('READ_STORE', ['memory', 'sqlite'] as const, 'memory', 'Embedded read store when MONGODB_URL is unset: memory (in process, snapshot or rebuild at start) or sqlite (DATA_DIR/read-store.sqlite, persistent, for read models larger than memory)'),
} as const

type Settings = typeof settings
export type Config = { [K in keyof Settings]: ReturnType<Settings[K]['parse']> }

export type Environment = Record<string, string | undefined>

export const loadConfig = (env: Environment = process.env, overrides: Partial<Config> = {}): Config => {
  const entries = Object.entries(settings).map(([key, setting]) => [key, setting.parse(env[setting.env])])
  const config: Config = { ...Object.fromEntries(entries), ...overrides }
  return { ...config, dataDir: path.resolve(config.dataDir) }
}

export const baseUrl = (config: Config): string =>
  config.publicUrl !== '' ? config.publicUrl.replace(/\/$/, '') : `http://localhost:${config.port}`

export const describeSettings = (): Array<{ env: string; defaultText: string; description: string }> =>
  Object.values(settings).map(({ env, defaultText, description }) => ({ env, defaultText, description }))

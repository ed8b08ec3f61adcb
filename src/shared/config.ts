import path from 'node:path'

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

const text = (env: string, fallback: string, description: string): Setting<string> => ({
  env, description, defaultText: fallback === '' ? '(none)' : fallback,
  parse: (raw) => (raw === undefined || raw === '' ? fallback : raw),
})

const optionalText = (env: string, description: string): Setting<string | undefined> => ({
  env, description, defaultText: '(unset)',
  parse: (raw) => (raw === undefined || raw === '' ? undefined : raw),
})

const integer = (env: string, fallback: number, description: string, min = 0): Setting<number> => ({
  env, description, defaultText: String(fallback),
  parse: (raw) => {
    if (raw === undefined || raw === '') return fallback
    const value = Number(raw)
    if (!Number.isInteger(value) || value < min) throw new Error(`${env} must be an integer >= ${min}, got "${raw}"`)
    return value
  },
})

const flag = (env: string, fallback: boolean, description: string): Setting<boolean> => ({
  env, description, defaultText: String(fallback),
  parse: (raw) => {
    if (raw === undefined || raw === '') return fallback
    if (['true', '1', 'yes'].includes(raw.toLowerCase())) return true
    if (['false', '0', 'no'].includes(raw.toLowerCase())) return false
    throw new Error(`${env} must be true or false, got "${raw}"`)
  },
})

const oneOf = <T extends string>(env: string, values: readonly T[], fallback: T, description: string): Setting<T> => ({
  env, description, defaultText: fallback,
  parse: (raw) => {
    if (raw === undefined || raw === '') return fallback
    const found = values.find((v) => v === raw)
    if (found === undefined) throw new Error(`${env} must be one of ${values.join(', ')}, got "${raw}"`)
    return found
  },
})

export const settings = {
  port: integer('PORT', 8080, 'TCP port the HTTP server listens on', 0),
  host: text('HOST', '0.0.0.0', 'Interface the HTTP server binds to'),
  dataDir: text('DATA_DIR', './data', 'Directory of the embedded stores, keys, files and admin credentials'),
  logLevel: oneOf('LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const, 'info', 'pino log level'),
  publicUrl: text('PUBLIC_URL', '', 'External base address (e.g. https://credits.example.com); used in token issuer and absolute links. Defaults to http://localhost:PORT'),
  eventStoreUrl: optionalText('EVENTSTORE_URL', 'EventStoreDB connection string (esdb://host:2113?tls=false). Unset: embedded SQLite event store in DATA_DIR'),
  mongoUrl: optionalText('MONGODB_URL', 'MongoDB connection string. Unset: embedded in-process read store rebuilt at start, files under DATA_DIR/files'),
  mongoDatabase: text('MONGODB_DATABASE', 'credit_service', 'MongoDB database name'),
  sqliteSynchronous: oneOf('SQLITE_SYNCHRONOUS', ['FULL', 'NORMAL'] as const, 'FULL', 'SQLite synchronous mode of the embedded event store (FULL survives power loss; NORMAL survives process crashes only)'),
  adminClientId: optionalText('ADMIN_CLIENT_ID', 'Client id of the administrator client created on first start (generated when unset)'),
  adminClientSecret: optionalText('ADMIN_CLIENT_SECRET', 'Secret of the administrator client (generated when unset, printed once and written to DATA_DIR/admin-credentials.json)'),
  bootstrapOrganizationName: text('BOOTSTRAP_ORGANIZATION_NAME', 'Default organization', 'Name of the organization created on first start'),
  jwtPrivateKey: optionalText('JWT_PRIVATE_KEY', 'PEM of the ES256/RS256 signing key (or JWT_PRIVATE_KEY_FILE); generated into DATA_DIR/keys on first start when unset'),
  jwtPrivateKeyFile: optionalText('JWT_PRIVATE_KEY_FILE', 'Path of a PEM file with the signing key'),
  accessTokenTtl: integer('ACCESS_TOKEN_TTL', 3600, 'Access-token lifetime in seconds (expires_in)', 1),
  refreshTokenTtl: integer('REFRESH_TOKEN_TTL', 2_592_000, 'Refresh-token lifetime in seconds (30 days)', 1),
  mfaTokenTtl: integer('MFA_TOKEN_TTL', 300, 'Lifetime in seconds of the mfa_token returned by an mfa_required error', 1),
  readYourWritesTimeoutMs: integer('READ_YOUR_WRITES_TIMEOUT_MS', 5000, 'How long a command endpoint waits for projections to reach its write before answering anyway', 0),
  commandRetries: integer('COMMAND_RETRIES', 3, 'Retries of a command after an expected-revision conflict before answering 409', 0),
  bodyLimit: integer('BODY_LIMIT', 1_048_576, 'Largest JSON or form request body in bytes', 1024),
  cronEnabled: flag('CRON_ENABLED', true, 'Run the node-cron schedules (expiry jobs, snapshots)'),
  processesEnabled: flag('PROCESSES_ENABLED', true, 'Run the process managers (webhooks, exports, payment application)'),
  shutdownTimeoutMs: integer('SHUTDOWN_TIMEOUT_MS', 10_000, 'Longest wait for in-flight requests on SIGTERM/SIGINT', 0),
  sandboxDelayMs: integer('SANDBOX_DELAY_MS', 2000, 'Simulated processing time of the sandbox payment provider before it settles an order', 0),
  sandboxFailAmount: text('SANDBOX_FAIL_AMOUNT', '13.13', 'Order amount the sandbox payment provider declines (any other amount completes)'),
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

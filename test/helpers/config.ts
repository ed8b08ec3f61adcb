import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { setHashCostForTests } from '../../src/identity/passwords.js'
import { loadConfig, type Config } from '../../src/shared/config.js'

/**
 * Secrets and passwords a test process hashes use scrypt at N = 1024 instead of 16384: the same code (and
 * hashes that verify the same way), without tens of milliseconds of CPU for every client and user a test
 * creates and every token it asks for. Services a test starts as a process of their own keep the real cost.
 */
setHashCostForTests(1024)

const created: string[] = []
process.once('exit', () => {
  for (const dir of created) fs.rmSync(dir, { recursive: true, force: true })
})

/** A throw-away DATA_DIR, removed when the process exits. */
export const tempDir = (prefix = 'credit-test-'): string => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix))
  created.push(dir)
  return dir
}

/** Configuration for tests: embedded stores in a temp dir, no logs, no cron, NORMAL sync for speed. */
export const testConfig = (overrides: Partial<Config> = {}): Config =>
  loadConfig({}, {
    dataDir: tempDir(),
    logLevel: 'silent',
    port: 0,
    host: '127.0.0.1',
    cronEnabled: false,
    sqliteSynchronous: 'NORMAL',
    adminClientId: 'test-admin',
    adminClientSecret: 'test-admin-secret',
    ...(process.env['TEST_READ_STORE'] === 'sqlite' ? { readStore: 'sqlite' as const } : {}),
    ...overrides,
  })

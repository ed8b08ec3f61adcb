import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { loadConfig, type Config } from '../../src/shared/config.js'

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
    ...overrides,
  })

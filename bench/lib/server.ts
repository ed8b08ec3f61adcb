import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import readline from 'node:readline'
import { missingNodeFlags } from '../../src/shared/nodeFlags.js'
import { scratchDir } from './scratch.js'

const root = path.resolve(import.meta.dirname, '../..')

export interface BenchServer {
  url: string
  dataDir: string
  child: ChildProcess
  /** Milliseconds from spawn to listening. */
  startupMs: number
  token(scope?: string): Promise<string>
  stop(): Promise<void>
}

/** Extra node flags for every server process, e.g. BENCH_SERVER_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof' to profile one. */
const serverNodeArgs = (process.env['BENCH_SERVER_NODE_ARGS'] ?? '').split(/\s+/).filter((arg) => arg !== '')
/** BENCH_SERVER_LOG=<file>: every server's output appended there, to read what it warned about during a run. */
const serverLog = process.env['BENCH_SERVER_LOG']

export const ADMIN = { id: 'bench-admin', secret: 'bench-admin-secret' }

/** The real service as a separate process on embedded stores in a fresh (or given) DATA_DIR. */
export const startServer = (options: { dataDir?: string; env?: Record<string, string>; nodeArgs?: string[] } = {}): Promise<BenchServer> =>
  new Promise((resolve, reject) => {
    const dataDir = options.dataDir ?? scratchDir('server')
    const started = performance.now()
    const nodeArgs = [...serverNodeArgs, ...(options.nodeArgs ?? [])]
    // The flags bin/credit-service.js would start the service again with, given here: the spawned process is the service itself (start-up samples its pid).
    const child = spawn(process.execPath, [...missingNodeFlags(nodeArgs, process.env['NODE_OPTIONS']), ...nodeArgs, path.join(root, 'bin/credit-service.js'), 'serve'], {
      env: {
        ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', DATA_DIR: dataDir,
        ADMIN_CLIENT_ID: ADMIN.id, ADMIN_CLIENT_SECRET: ADMIN.secret, ...options.env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    const output: string[] = []
    const fail = (why: string) => reject(new Error(`${why}\n${output.join('\n')}`))
    child.once('exit', (code) => fail(`server exited with ${code}`))
    const watch = (stream: NodeJS.ReadableStream | null) => {
      if (stream === null) return
      readline.createInterface({ input: stream }).on('line', (line) => {
        output.push(line)
        if (output.length > 50) output.shift()
        if (serverLog !== undefined) fs.appendFileSync(serverLog, `${line}\n`)
      })
    }
    watch(child.stderr)
    if (child.stdout === null) return fail('no stdout')
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      output.push(line)
      if (serverLog !== undefined) fs.appendFileSync(serverLog, `${line}\n`)
      const address = /listening on (http:\/\/\S+)/.exec(line)?.[1]
      if (address === undefined) return
      const startupMs = performance.now() - started
      const token = async (scope?: string) => {
        const response = await fetch(`${address}/v1/oauth/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ grant_type: 'client_credentials', client_id: ADMIN.id, client_secret: ADMIN.secret, ...(scope === undefined ? {} : { scope }) }),
        })
        const body = await response.json() as { access_token: string }
        return body.access_token
      }
      resolve({
        url: address, dataDir, child, startupMs, token,
        stop: () => new Promise((done) => {
          child.removeAllListeners('exit')
          child.once('exit', () => {
            // A data directory made here goes with the server; a given one is the caller's.
            if (options.dataDir === undefined) fs.rmSync(dataDir, { recursive: true, force: true })
            done()
          })
          child.kill('SIGTERM')
        }),
      })
    })
  })

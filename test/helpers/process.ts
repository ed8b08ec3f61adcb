import { spawn, type ChildProcess } from 'node:child_process'
import path from 'node:path'
import readline from 'node:readline'
import { missingNodeFlags } from '../../src/shared/nodeFlags.js'

export const binPath = path.resolve(import.meta.dirname, '../../bin/credit-service.js')

/**
 * The environment of a process a test starts: this one's, less the hook tap adds to NODE_OPTIONS to track the
 * processes a test starts (for coverage, which is off); it hooks every module the process loads, which costs a service start about half a second.
 */
export const childEnv = (env: Record<string, string>): NodeJS.ProcessEnv => {
  const options = (process.env['NODE_OPTIONS'] ?? '').split(/\s+/).filter((option) => option !== '')
  const kept = options.filter((option, i) => !option.includes('@tapjs/processinfo') && !(option === '--import' && options[i + 1]?.includes('@tapjs/processinfo')))
  return { ...process.env, NODE_OPTIONS: kept.join(' '), ...env }
}

export interface ServerProcess {
  child: ChildProcess
  url: string
  /** Every line the process printed so far. */
  lines: string[]
  exited: Promise<number | null>
  /**
   * The first line, printed already or later, that satisfies `wanted`. The
   * plain lines the CLI prints and pino's JSON lines reach the pipes in no
   * fixed order, so a test needing a log line waits for it.
   */
  lineWhere: (wanted: (line: string) => boolean, timeoutMs?: number) => Promise<string>
}

/**
 * Starts `credit-service serve` as a separate process and resolves once it
 * listens. Given the service's V8 flags, bin/credit-service.js runs the
 * service in that process, so a SIGKILL to it is a crash of the service
 * itself; `asCommand` starts it as an operator would, through the re-start
 * that adds them.
 */
export const spawnServer = (env: Record<string, string>, options: { asCommand?: boolean } = {}): Promise<ServerProcess> =>
  new Promise((resolve, reject) => {
    const flags = options.asCommand === true ? [] : missingNodeFlags([], process.env['NODE_OPTIONS'])
    const child = spawn(process.execPath, [...flags, binPath, 'serve'], {
      env: childEnv({ PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env }),
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    const lines: string[] = []
    const waiters = new Set<(line: string) => void>()
    const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)))
    // 'close' comes once the pipes are drained too (the service a command started may hold them longer).
    const closed = new Promise<void>((done) => child.once('close', () => done()))
    const lineWhere = (wanted: (line: string) => boolean, timeoutMs = 10_000): Promise<string> =>
      new Promise((found, missing) => {
        const seen = lines.find(wanted)
        if (seen !== undefined) {
          found(seen)
          return
        }
        const stop = () => {
          clearTimeout(deadline)
          waiters.delete(waiter)
        }
        const waiter = (line: string) => {
          if (!wanted(line)) return
          stop()
          found(line)
        }
        const deadline = setTimeout(() => {
          stop()
          missing(new Error(`no such line within ${timeoutMs} ms:\n${lines.join('\n')}`))
        }, timeoutMs)
        waiters.add(waiter)
        void closed.then(() => {
          if (!waiters.has(waiter)) return
          stop()
          missing(new Error(`the process closed its output first:\n${lines.join('\n')}`))
        })
      })
    const record = (line: string) => {
      lines.push(line)
      for (const waiter of [...waiters]) waiter(line)
    }
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${lines.join('\n')}`)), 30_000)
    const onLine = (line: string) => {
      record(line)
      const match = /listening on (http:\/\/\S+)/.exec(line)
      if (match?.[1] !== undefined) {
        clearTimeout(timer)
        resolve({ child, url: match[1], lines, exited, lineWhere })
      }
    }
    if (child.stdout !== null) readline.createInterface({ input: child.stdout }).on('line', onLine)
    if (child.stderr !== null) readline.createInterface({ input: child.stderr }).on('line', record)
    void exited.then((code) => {
      clearTimeout(timer)
      reject(new Error(`server exited with ${code}:\n${lines.join('\n')}`))
    })
  })

export const runCli = (args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> =>
  new Promise((resolve) => {
    const child = spawn(process.execPath, [binPath, ...args], { env: childEnv({ LOG_LEVEL: 'silent', ...env }) })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString() })
    child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
    child.once('exit', (code) => resolve({ code, stdout, stderr }))
  })

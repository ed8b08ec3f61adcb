import { spawn, type ChildProcess } from 'node:child_process'
import path from 'node:path'
import readline from 'node:readline'
import { missingNodeFlags } from '../../src/shared/nodeFlags.js'

export const binPath = path.resolve(import.meta.dirname, '../../bin/credit-service.js')

export interface ServerProcess {
  child: ChildProcess
  url: string
  /** Every line the process printed so far. */
  lines: string[]
  exited: Promise<number | null>
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
      env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    const lines: string[] = []
    const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)))
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${lines.join('\n')}`)), 30_000)
    const onLine = (line: string) => {
      lines.push(line)
      const match = /listening on (http:\/\/\S+)/.exec(line)
      if (match?.[1] !== undefined) {
        clearTimeout(timer)
        resolve({ child, url: match[1], lines, exited })
      }
    }
    if (child.stdout !== null) readline.createInterface({ input: child.stdout }).on('line', onLine)
    if (child.stderr !== null) readline.createInterface({ input: child.stderr }).on('line', (line) => lines.push(line))
    void exited.then((code) => {
      clearTimeout(timer)
      reject(new Error(`server exited with ${code}:\n${lines.join('\n')}`))
    })
  })

export const runCli = (args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> =>
  new Promise((resolve) => {
    const child = spawn(process.execPath, [binPath, ...args], { env: { ...process.env, LOG_LEVEL: 'silent', ...env } })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString() })
    child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
    child.once('exit', (code) => resolve({ code, stdout, stderr }))
  })

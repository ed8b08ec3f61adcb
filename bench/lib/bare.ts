import { spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import readline from 'node:readline'
import { scratchDir } from './scratch.js'

export interface BareServer {
  url: string
  stop(): Promise<void>
}

/** Runs a bench server script (under `bench/lib`) in its own process; resolves once it prints `listening on <url>`. */
export const startChildServer = (script: string, args: string[] = []): Promise<BareServer> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(import.meta.dirname, script), ...args], { stdio: ['ignore', 'pipe', 'inherit'] })
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)))
    if (child.stdout === null) return reject(new Error('no stdout'))
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      const url = /listening on (http:\/\/\S+)/.exec(line)?.[1]
      if (url === undefined) return
      resolve({
        url,
        stop: () => new Promise((done) => {
          child.removeAllListeners('exit')
          child.once('exit', () => done())
          child.kill('SIGTERM')
        }),
      })
    })
  })

/** Starts the baseline: one fastify route returning `body` through `schema`, in its own process. */
export const startBareServer = (route: { path: string; body: unknown; schema: object }): Promise<BareServer> => {
  const file = path.join(scratchDir('bare'), 'config.json')
  fs.writeFileSync(file, JSON.stringify(route))
  return startChildServer('bareServer.ts', [file])
}

#!/usr/bin/env node
// Runs the TypeScript sources through tsx, so `npm start` needs no build step.
import { spawn } from 'node:child_process'
import { register } from 'tsx/esm/api'

register()
const { missingNodeFlags, superviseFromParent } = await import('../src/shared/nodeFlags.ts')
const missing = missingNodeFlags(process.execArgv, process.env.NODE_OPTIONS)
if (missing.length === 0) {
  superviseFromParent()
  await import('../src/cli.ts')
} else {
  // V8 sizes its heap at start-up: the service runs as a child given its flags, and this process exits (or dies by the signal) as it does.
  // The IPC channel closes when this process dies, even by SIGKILL, and the child then stops too (superviseFromParent).
  const child = spawn(process.execPath, [...missing, ...process.execArgv, ...process.argv.slice(1)], { stdio: ['inherit', 'inherit', 'inherit', 'ipc'] })
  const forwarded = ['SIGTERM', 'SIGINT', 'SIGHUP']
  for (const signal of forwarded) process.on(signal, () => child.kill(signal))
  child.once('exit', (code, signal) => {
    if (signal === null) process.exit(code ?? 1)
    for (const name of forwarded) process.removeAllListeners(name)
    process.kill(process.pid, signal)
  })
}

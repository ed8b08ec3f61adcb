/**
 * V8 flags every process of the service runs with. A rebuild allocates a
 * parsed event and new document versions for every event, most of which die
 * young: with V8's default young generation (16 MiB semi-spaces) a million-event
 * rebuild spent a sixth of its time in the scavenger, promoting objects that
 * were garbage moments later. V8 sizes its heap once, at start-up
 * (`v8.setFlagsFromString` has no effect on it then), so bin/credit-service.js
 * starts the service again with these when they are missing.
 */
export const SERVICE_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=32']

const nameOf = (flag: string): string => (flag.split('=')[0] ?? flag).replaceAll('_', '-')

/** The service's flags that neither the command line nor NODE_OPTIONS sets (an operator's own value wins). */
export const missingNodeFlags = (execArgv: readonly string[], nodeOptions = ''): string[] => {
  const given = new Set([...execArgv, ...nodeOptions.split(/\s+/)].filter((arg) => arg.startsWith('--')).map(nameOf))
  return SERVICE_NODE_FLAGS.filter((flag) => !given.has(nameOf(flag)))
}

/**
 * In the child bin/credit-service.js started: when that parent goes away
 * (its IPC channel closes, which happens even when it is killed outright),
 * the service stops as on SIGTERM rather than running on unsupervised.
 */
export const superviseFromParent = (): void => {
  if (process.channel === undefined) return
  process.channel.unref()
  process.once('disconnect', () => process.kill(process.pid, 'SIGTERM'))
}

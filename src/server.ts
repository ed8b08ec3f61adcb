import type { FastifyInstance } from 'fastify'
import { buildApp } from './http/app.js'
import { bootstrap, type BootstrapResult } from './identity/bootstrap.js'
import { createRuntime, type Runtime, type RuntimeOptions } from './runtime.js'
import { ConfigError, type Config } from './shared/config.js'
import { errorCode } from './shared/errors.js'

export interface RunningServer {
  app: FastifyInstance
  runtime: Runtime
  bootstrap: BootstrapResult
  address: string
  close(): Promise<void>
}

/** Why the server cannot listen where the settings say, when the settings are the cause: the operator's to fix, in one line. */
const listenProblem = (error: unknown, config: Config): ConfigError | null => {
  const where = `${config.host}:${config.port}`
  switch (errorCode(error)) {
    case 'EADDRINUSE': return new ConfigError(`PORT ${config.port} is in use on HOST ${config.host} by another process`)
    case 'EACCES': return new ConfigError(`PORT ${config.port} needs privileges this process lacks (${where})`)
    case 'EADDRNOTAVAIL': return new ConfigError(`HOST ${config.host} is not an address of this machine`)
    case 'ENOTFOUND':
    case 'EAI_AGAIN': return new ConfigError(`HOST ${config.host} does not resolve to an address`)
    default: return null
  }
}

/** Opens the stores, catches the read models up, bootstraps on first start, and listens. */
export const startServer = async (config: Config, options: RuntimeOptions = {}): Promise<RunningServer> => {
  const runtime = await createRuntime(config, options)
  try {
    await runtime.start()
    const result = await bootstrap(runtime)
    const app = await buildApp(runtime)
    const address = await app.listen({ port: config.port, host: config.host }).catch((error: unknown) => {
      throw listenProblem(error, config) ?? error
    })
    let closing: Promise<void> | undefined
    const close = () => {
      closing ??= (async () => {
        const timer = setTimeout(() => runtime.logger.warn('in-flight requests did not finish in time'), config.shutdownTimeoutMs)
        try {
          await Promise.race([app.close(), new Promise((resolve) => setTimeout(resolve, config.shutdownTimeoutMs))])
        } finally {
          clearTimeout(timer)
          await runtime.close()
        }
      })()
      return closing
    }
    return { app, runtime, bootstrap: result, address, close }
  } catch (error) {
    await runtime.close().catch(() => undefined)
    throw error
  }
}

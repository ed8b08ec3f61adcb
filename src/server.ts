import type { FastifyInstance } from 'fastify'
import { buildApp } from './http/app.js'
import { bootstrap, type BootstrapResult } from './identity/bootstrap.js'
import { createRuntime, type Runtime, type RuntimeOptions } from './runtime.js'
import type { Config } from './shared/config.js'

export interface RunningServer {
  app: FastifyInstance
  runtime: Runtime
  bootstrap: BootstrapResult
  address: string
  close(): Promise<void>
}

/** Opens the stores, catches the read models up, bootstraps on first start, and listens. */
export const startServer = async (config: Config, options: RuntimeOptions = {}): Promise<RunningServer> => {
  const runtime = await createRuntime(config, options)
  try {
    await runtime.start()
    const result = await bootstrap(runtime)
    const app = await buildApp(runtime)
    const address = await app.listen({ port: config.port, host: config.host })
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

import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify'
import { pino } from 'pino'
import { buildApp } from '../../src/http/app.js'
import { bootstrap } from '../../src/identity/bootstrap.js'
import { createRuntime, type Runtime } from '../../src/runtime.js'
import type { Clock } from '../../src/shared/clock.js'
import type { Config } from '../../src/shared/config.js'
import { testConfig } from './config.js'

export interface TestApp {
  app: FastifyInstance
  runtime: Runtime
  config: Config
  organizationId: string
  adminToken: string
  /** A client-credentials token for any client. */
  clientToken(clientId: string, secret: string, scope?: string): Promise<string>
  /** JSON request with a bearer token and (optionally) an Organization-ID header. */
  call(options: InjectOptions & { token?: string; organizationId?: string }): Promise<LightMyRequestResponse>
  close(): Promise<void>
}

export interface TestAppOptions {
  config?: Partial<Config>
  clock?: Clock
  /** Runs on the runtime before it starts (e.g. to register test data sets the process managers will need). */
  beforeStart?: (runtime: Runtime) => void
}

interface Teardown {
  teardown(fn: () => unknown): void
}

const formBody = (fields: Record<string, string>) => new URLSearchParams(fields).toString()

export const requestToken = async (app: FastifyInstance, fields: Record<string, string>): Promise<LightMyRequestResponse> =>
  app.inject({
    method: 'POST',
    url: '/v1/oauth/token',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: formBody(fields),
  })

/** A fresh service on embedded stores in a temp DATA_DIR, bootstrapped, with an administrator token. */
export const createTestApp = async (t: Teardown, options: TestAppOptions = {}): Promise<TestApp> => {
  const config = testConfig(options.config)
  const runtime = await createRuntime(config, { logger: pino({ level: 'silent' }), ...(options.clock === undefined ? {} : { clock: options.clock }) })
  options.beforeStart?.(runtime)
  await runtime.start()
  const boot = await bootstrap(runtime)
  const app = await buildApp(runtime)
  await app.ready()
  const clientToken = async (clientId: string, secret: string, scope?: string) => {
    const response = await requestToken(app, {
      grant_type: 'client_credentials', client_id: clientId, client_secret: secret, ...(scope === undefined ? {} : { scope }),
    })
    if (response.statusCode !== 200) throw new Error(`token request failed: ${response.statusCode} ${response.body}`)
    const body: { access_token: string } = response.json()
    return body.access_token
  }
  const adminToken = await clientToken(config.adminClientId ?? '', config.adminClientSecret ?? '')
  let closed = false
  const close = async () => {
    if (closed) return
    closed = true
    await app.close()
    await runtime.close()
  }
  t.teardown(close)
  return {
    app, runtime, config, organizationId: boot.organizationId, adminToken, clientToken, close,
    call: ({ token, organizationId, headers, ...rest }) => app.inject({
      ...rest,
      headers: {
        ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
        ...(organizationId === undefined ? {} : { 'organization-id': organizationId }),
        ...headers,
      },
    }),
  }
}

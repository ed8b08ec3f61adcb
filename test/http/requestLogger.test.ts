import { Writable } from 'node:stream'
import Fastify from 'fastify'
import { pino } from 'pino'
import t, { type Test } from 'tap'
import { requestLoggerFactory } from '../../src/http/requestLogger.js'

const capture = (level: string) => {
  const lines: Array<Record<string, unknown>> = []
  const fastifyLines: Array<Record<string, unknown>> = []
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (line === '') continue
        const entry = JSON.parse(line) as Record<string, unknown>
        // Fastify's own lines about every request are checked once, in their own test.
        if (entry['msg'] === 'incoming request' || entry['msg'] === 'request completed') fastifyLines.push(entry)
        else lines.push(entry)
      }
      done()
    },
  })
  return { lines, fastifyLines, logger: pino({ level }, stream) }
}

const appWith = async (t: Test, level: string) => {
  const { lines, fastifyLines, logger } = capture(level)
  let sequence = 0
  const app = Fastify({ loggerInstance: logger, childLoggerFactory: requestLoggerFactory, genReqId: () => `req-${++sequence}` })
  app.get('/warn', async (request) => {
    request.log.info('routine detail')
    request.log.warn({ part: 'payment' }, 'something odd')
    return { ok: true }
  })
  app.get('/chatty', { logLevel: 'debug' }, async (request) => {
    request.log.debug('route-level detail')
    return { ok: true }
  })
  app.get('/child', async (request) => {
    request.log.child({ step: 'inner' }).warn('from a child')
    return { ok: true }
  })
  t.teardown(() => app.close())
  return { app, lines, fastifyLines }
}

t.test('a request\'s log lines carry its request id, and only enabled levels are written', async (t) => {
  const { app, lines } = await appWith(t, 'warn')
  await app.inject({ method: 'GET', url: '/warn' })
  await app.inject({ method: 'GET', url: '/warn' })
  t.same(lines.map((line) => [line['reqId'], line['msg'], line['part']]), [['req-1', 'something odd', 'payment'], ['req-2', 'something odd', 'payment']])
})

t.test('a route with its own log level logs at that level', async (t) => {
  const { app, lines } = await appWith(t, 'warn')
  await app.inject({ method: 'GET', url: '/chatty' })
  t.same(lines.map((line) => [line['reqId'], line['msg']]), [['req-1', 'route-level detail']])
})

t.test('a child of a request\'s logger keeps the request id and adds its own fields', async (t) => {
  const { app, lines } = await appWith(t, 'info')
  await app.inject({ method: 'GET', url: '/child' })
  t.same(lines.map((line) => [line['reqId'], line['step'], line['msg']]), [['req-1', 'inner', 'from a child']])
})

t.test('the level of the application logger, changed at run time, applies to the next request', async (t) => {
  const { app, lines } = await appWith(t, 'warn')
  app.log.level = 'info'
  await app.inject({ method: 'GET', url: '/warn' })
  t.same(lines.map((line) => line['msg']), ['routine detail', 'something odd'])
})

t.test('fastify\'s lines about each request carry its id at info level, and are not written at warn', async (t) => {
  const quiet = await appWith(t, 'warn')
  await quiet.app.inject({ method: 'GET', url: '/warn' })
  t.same(quiet.fastifyLines, [])
  const verbose = await appWith(t, 'info')
  await verbose.app.inject({ method: 'GET', url: '/warn' })
  t.same(verbose.fastifyLines.map((line) => [line['reqId'], line['msg']]), [['req-1', 'incoming request'], ['req-1', 'request completed']])
})

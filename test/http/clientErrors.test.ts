import net from 'node:net'
import t from 'tap'
import { createTestApp } from '../helpers/app.js'

/**
 * Writes raw bytes to the server (`pauseMs` between parts) and collects what it answers until it closes the
 * connection, or until `closeAfterMs` when given; `written` counts the parts sent before that.
 */
const exchange = (port: number, parts: readonly string[], options: { pauseMs?: number; closeAfterMs?: number } = {}) =>
  new Promise<{ text: string; written: number; closedByServer: boolean }>((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1')
    let text = ''
    let written = 0
    let closedByServer = true
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => { text += chunk })
    socket.on('error', reject)
    socket.on('close', () => resolve({ text, written, closedByServer }))
    if (options.closeAfterMs !== undefined) {
      setTimeout(() => { closedByServer = socket.destroyed; socket.destroy() }, options.closeAfterMs)
    }
    socket.on('connect', async () => {
      for (const part of parts) {
        if (socket.destroyed) return
        socket.write(part)
        written += 1
        if (options.pauseMs !== undefined) await new Promise((r) => setTimeout(r, options.pauseMs))
      }
    })
  })

const answerOf = (text: string) => {
  const [head = '', body = ''] = text.split('\r\n\r\n')
  return { status: Number(head.split(' ')[1]), head: head.toLowerCase(), body: JSON.parse(body) as unknown }
}

const listening = async (t: Parameters<typeof createTestApp>[0]) => {
  const svc = await createTestApp(t, { config: { requestTimeoutMs: 600, exportsSseHeartbeatMs: 200 } })
  await svc.app.listen({ port: 0, host: '127.0.0.1' })
  const address = svc.app.server.address()
  if (address === null || typeof address === 'string') throw new Error('not listening on TCP')
  return { port: address.port, svc }
}

t.test('a request whose body does not arrive within REQUEST_TIMEOUT_MS is answered 408 in the envelope and its connection closed', async (t) => {
  const { port } = await listening(t)
  const { text } = await exchange(port, ['POST /v1/oauth/token HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\ngrant_type='])
  const answer = answerOf(text)
  t.equal(answer.status, 408)
  t.match(answer.head, /content-type: application\/json/)
  t.match(answer.head, /connection: close/)
  t.same(answer.body, { status: 'fail', data: { code: 'REQUEST_TIMEOUT', message: 'the request did not arrive in full in time (REQUEST_TIMEOUT_MS)' } })
})

t.test('a body trickled slower than the limit is cut off too: the limit is on the whole request, not on silence', async (t) => {
  const { port } = await listening(t)
  const trickle = Array.from({ length: 40 }, () => 'a')
  const { text, written } = await exchange(port, ['POST /v1/oauth/token HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 40\r\n\r\n', ...trickle], { pauseMs: 100 })
  t.equal(answerOf(text).status, 408)
  t.ok(written < 1 + trickle.length, `closed before the whole body was sent (${written - 1} of ${trickle.length} bytes, one every 100 ms)`)
})

t.test('bytes that are not HTTP are answered 400 BAD_REQUEST in the envelope', async (t) => {
  const { port } = await listening(t)
  const answer = answerOf((await exchange(port, ['NOT HTTP AT ALL\r\n\r\n'])).text)
  t.equal(answer.status, 400)
  t.same(answer.body, { status: 'fail', data: { code: 'BAD_REQUEST', message: 'the request is not valid HTTP/1.1' } })
})

t.test('headers over the size limit are answered 431 HEADERS_TOO_LARGE in the envelope', async (t) => {
  const { port } = await listening(t)
  const answer = answerOf((await exchange(port, [`GET /v1/health HTTP/1.1\r\nHost: localhost\r\nX-Filler: ${'x'.repeat(20_000)}\r\n\r\n`])).text)
  t.equal(answer.status, 431)
  t.match(answer.body, { status: 'fail', data: { code: 'HEADERS_TOO_LARGE' } })
})

t.test('a request that arrives in time is not affected, and the connection stays open for the next one', async (t) => {
  const { port } = await listening(t)
  const request = 'GET /v1/health HTTP/1.1\r\nHost: localhost\r\n\r\n'
  const { text } = await exchange(port, [request, `${request.replace('\r\n\r\n', '\r\nConnection: close\r\n\r\n')}`], { pauseMs: 300 })
  t.equal(text.match(/HTTP\/1\.1 200 OK/g)?.length, 2, 'two answers on one connection, 300 ms apart')
})

t.test('a stream the service sends (SSE) outlives REQUEST_TIMEOUT_MS: the limit is on receiving the request', async (t) => {
  const { port, svc } = await listening(t)
  const request = `GET /v1/exports/sse HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${svc.adminToken}\r\nOrganization-ID: ${svc.organizationId}\r\n\r\n`
  const { text, closedByServer } = await exchange(port, [request], { closeAfterMs: 1800 })
  t.match(text, /^HTTP\/1\.1 200 OK/)
  t.match(text, /text\/event-stream/)
  t.notMatch(text, /HTTP\/1\.1 408/)
  t.equal(closedByServer, false, 'still open three times the request timeout later')
})

t.test('bytes that are not HTTP after an answer on the same connection close it without writing into what was sent', async (t) => {
  const { port } = await listening(t)
  const { text } = await exchange(port, ['GET /v1/health HTTP/1.1\r\nHost: localhost\r\n\r\n', 'NOT HTTP AT ALL\r\n\r\n'], { pauseMs: 200 })
  t.equal(text.match(/HTTP\/1\.1 /g)?.length, 1, 'the health answer only')
  t.match(text, /^HTTP\/1\.1 200 OK/)
})

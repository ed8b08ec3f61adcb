import type { Socket } from 'node:net'
import { STATUS_CODES } from 'node:http'
import { AppError } from '../shared/errors.js'
import { failureBody } from './plugins/errors.js'

/** What Node's HTTP parser refused, as the AppError the client is told about. */
const refusalOf = (code: unknown): AppError => {
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return new AppError('REQUEST_TIMEOUT', 'the request did not arrive in full in time (REQUEST_TIMEOUT_MS)')
  if (code === 'HPE_HEADER_OVERFLOW') return new AppError('HEADERS_TOO_LARGE', 'the request\'s headers are larger than the server accepts')
  return new AppError('BAD_REQUEST', 'the request is not valid HTTP/1.1')
}

/**
 * Fastify's clientErrorHandler: errors of Node's HTTP parser (bytes that are
 * not HTTP, headers over the size limit, a request slower than
 * REQUEST_TIMEOUT_MS) come before any request object exists, so the answer is
 * written to the socket by hand, in the same failure envelope as every other
 * 4xx, and the connection closed. Fastify's own default writes a body of its own shape,
 * and writes it even after earlier answers on the connection.
 */
export const answerClientError = (error: Error & { code?: unknown }, socket: Socket): void => {
  if (error.code === 'ECONNRESET' || socket.destroyed) return
  const refusal = refusalOf(error.code)
  const body = JSON.stringify(failureBody(refusal))
  // As Node's own default: an answer only on a connection that has written nothing, never into a response (an SSE stream) under way.
  if (socket.writable && socket.bytesWritten === 0) {
    socket.end(`HTTP/1.1 ${refusal.status} ${STATUS_CODES[refusal.status] ?? ''}\r\nContent-Type: application/json; charset=utf-8\r\n`
      + `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`)
  }
  socket.destroySoon()
}

import http from 'node:http'
import type { AddressInfo } from 'node:net'

export interface SinkRequest {
  method: string
  path: string
  headers: http.IncomingHttpHeaders
  body: string
}

export interface SinkRoute {
  status?: number
  headers?: Record<string, string>
  body?: unknown
  /** Never answer (for timeouts); the sink closes such sockets when it stops. */
  hang?: boolean
}

/** A local HTTP server the tests send webhooks to: records every request, answers as each path is told. */
export interface Sink {
  url: string
  requests: SinkRequest[]
  route(path: string, answer: SinkRoute): void
  close(): Promise<void>
}

export const startSink = async (t: { teardown(fn: () => unknown): void }): Promise<Sink> => {
  const requests: SinkRequest[] = []
  const routes = new Map<string, SinkRoute>()
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const path = req.url ?? '/'
      requests.push({ method: req.method ?? '', path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') })
      const answer = routes.get(path.split('?')[0] ?? path) ?? {}
      if (answer.hang === true) return
      const body = answer.body === undefined ? '{"ok":true}' : typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body)
      res.writeHead(answer.status ?? 200, { 'content-type': 'application/json', ...answer.headers })
      res.end(body)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  const close = async () => {
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }
  t.teardown(close)
  return { url: `http://127.0.0.1:${port}`, requests, route: (path, answer) => routes.set(path, answer), close }
}

// A local webhook destination: answers every POST with 200 `{}` and, for
// POST /hook, records when the request arrived and the correlation fields of
// its JSON body. GET /arrivals hands them over; POST /reset forgets them.
import http from 'node:http'

interface Arrival {
  at: number
  body: unknown
}

const arrivals: Arrival[] = []
const now = () => performance.timeOrigin + performance.now()

const server = http.createServer({ keepAliveTimeout: 60_000 }, (request, response) => {
  const chunks: Buffer[] = []
  request.on('data', (chunk: Buffer) => chunks.push(chunk))
  request.on('end', () => {
    const at = now()
    if (request.method === 'GET' && request.url === '/arrivals') {
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(arrivals))
      return
    }
    if (request.method === 'POST' && request.url === '/reset') {
      arrivals.length = 0
      response.writeHead(204).end()
      return
    }
    const text = Buffer.concat(chunks).toString('utf8')
    let body: unknown = null
    try {
      body = JSON.parse(text)
    } catch {
      body = text
    }
    if (request.url === '/hook') arrivals.push({ at, body })
    response.writeHead(200, { 'content-type': 'application/json' }).end('{}')
  })
})

server.listen(0, '127.0.0.1', () => {
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('no address')
  process.stdout.write(`listening on http://127.0.0.1:${address.port}\n`)
})
process.once('SIGTERM', () => server.close(() => process.exit(0)))

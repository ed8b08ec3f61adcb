import dns from 'node:dns'
import t from 'tap'
import { createWebhookAgent } from '../../src/webhooks/destination.js'
import { exchange } from '../../src/webhooks/http.js'

t.test('a send whose DNS lookup never answers ends as a timeout within the send timeout', async (t) => {
  const lookup = dns.promises.lookup
  // A resolver that stalls: the lookup cannot be cancelled, so only the send's own timeout can end the wait.
  Object.assign(dns.promises, { lookup: () => new Promise(() => undefined) })
  t.teardown(() => { Object.assign(dns.promises, { lookup }) })
  const agent = createWebhookAgent(false)
  t.teardown(() => agent.close())
  const stalled = exchange({ method: 'POST', url: 'https://hooks.example.com/x', headers: {}, body: '{}' },
    { agent, timeoutMs: 100, maxResponseBytes: 1024, allowPrivate: false })
  const hung = new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 10_000).unref())
  const result = await Promise.race([stalled, hung])
  if (result === 'hung') return t.fail('the send still waits for the lookup')
  t.equal(result.response, null)
  t.same(result.error, { code: 'TIMEOUT', message: 'no complete answer within 100 ms' })
})

t.test('a name that resolves publicly at the check and to loopback at connect time is refused as DESTINATION_REFUSED, nothing reached', async (t) => {
  const { createServer } = await import('node:http')
  let reached = 0
  const server = createServer((_request, response) => { reached++; response.end('{}') })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
  const address = server.address()
  const port = typeof address === 'object' && address !== null ? address.port : 0
  const { lookup: promisesLookup } = dns.promises
  const { lookup } = dns
  Object.assign(dns.promises, { lookup: async () => [{ address: '93.184.216.34', family: 4 }] })
  Object.assign(dns, { lookup: (_host: string, _options: unknown, callback: (error: null, addresses: dns.LookupAddress[]) => void) => callback(null, [{ address: '127.0.0.1', family: 4 }]) })
  t.teardown(() => {
    Object.assign(dns.promises, { lookup: promisesLookup })
    Object.assign(dns, { lookup })
  })
  const agent = createWebhookAgent(false)
  t.teardown(() => agent.close())
  const result = await exchange({ method: 'POST', url: `http://rebind.example:${port}/x`, headers: {}, body: '{}' },
    { agent, timeoutMs: 2_000, maxResponseBytes: 1024, allowPrivate: false })
  t.equal(result.error?.code, 'DESTINATION_REFUSED', 'the documented code, not the lookup\'s internal one')
  t.notMatch(result.error?.message ?? '', /127\.0\.0\.1/, 'the address it resolved to is not told')
  t.equal(reached, 0)
})

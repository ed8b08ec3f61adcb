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

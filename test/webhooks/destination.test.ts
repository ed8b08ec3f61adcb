import t from 'tap'
import { checkDestination, isPublicAddress } from '../../src/webhooks/destination.js'

t.test('only global unicast addresses are public (IPv6 within 2000::/3: the IPv4-compatible ::a.b.c.d is not)', async (t) => {
  for (const address of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.100.100.200', '0.0.0.0', '::1', 'fe80::1',
    'fd00:ec2::254', '::ffff:127.0.0.1', '::ffff:10.0.0.1', '224.0.0.1', '255.255.255.255',
    '::127.0.0.1', '::a00:1', '2001:db8::1', '4000::1', 'c000::1']) {
    t.notOk(isPublicAddress(address), `${address} is refused`)
  }
  for (const address of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8']) t.ok(isPublicAddress(address), `${address} is public`)
})

t.test('destinations are refused before any connection unless private networks are allowed', async (t) => {
  const refused = async (url: string, code: string) => {
    await t.rejects(checkDestination(url, false), { code }, url)
  }
  await refused('http://127.0.0.1:9/x', 'DESTINATION_REFUSED')
  await refused('http://[::1]/x', 'DESTINATION_REFUSED')
  await refused('http://169.254.169.254/latest/meta-data', 'DESTINATION_REFUSED')
  await refused('http://localhost/x', 'DESTINATION_REFUSED')
  await refused('http://[::127.0.0.1]/x', 'DESTINATION_REFUSED')
  await t.rejects(checkDestination('http://localhost/x', false), { message: /^localhost is not a public address/ }, 'the address a name resolves to is not told')
  await refused('ftp://example.com/x', 'DESTINATION_REFUSED')
  await refused('file:///etc/passwd', 'DESTINATION_REFUSED')
  await refused('http://user:pass@127.0.0.1/', 'DESTINATION_REFUSED')
  await refused('not a url', 'DESTINATION_REFUSED')
  await refused('http://name-that-does-not-exist.invalid/', 'DNS_FAILURE')
  t.equal((await checkDestination('http://127.0.0.1:9/x', true)).hostname, '127.0.0.1', 'allowed when WEBHOOK_ALLOW_PRIVATE_NETWORKS=true')
})

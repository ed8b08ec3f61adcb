import dns from 'node:dns'
import type { LookupAddress, LookupOptions } from 'node:dns'
import ipaddr from 'ipaddr.js'
import { Agent } from 'undici'
import { errorMessage } from '../shared/errors.js'

/**
 * Where a webhook may go: http and https only, and, unless private networks
 * are allowed, only public unicast addresses. The check runs before the
 * request and again inside the connection's DNS lookup, so a name that
 * resolves to a public address at the check and a private one at connect time
 * (DNS rebinding) is still refused.
 */
export class DestinationError extends Error {
  constructor(readonly code: 'DESTINATION_REFUSED' | 'DNS_FAILURE', message: string) {
    super(message)
    this.name = 'DestinationError'
  }
}

/**
 * Only global unicast addresses are public; IPv4-mapped IPv6 is judged as
 * IPv4. An IPv6 address must also lie in 2000::/3, the global unicast block:
 * ipaddr.js calls whatever no special range names `unicast`, the deprecated
 * IPv4-compatible `::a.b.c.d` (`::127.0.0.1`) among them.
 */
export const isPublicAddress = (address: string): boolean => {
  if (!ipaddr.isValid(address)) return false
  let parsed = ipaddr.parse(address)
  if (parsed instanceof ipaddr.IPv6) {
    if (parsed.isIPv4MappedAddress()) parsed = parsed.toIPv4Address()
    else if (!inGlobalUnicastBlock(parsed)) return false
  }
  return parsed.range() === 'unicast'
}

const inGlobalUnicastBlock = (address: ipaddr.IPv6): boolean => {
  const [first = 0] = address.parts
  return first >= 0x2000 && first <= 0x3fff
}

// The address is left out: a tenant would otherwise learn what the service's internal names resolve to.
const refuse = (host: string) =>
  new DestinationError('DESTINATION_REFUSED', `${host} is not a public address: loopback, private, link-local, metadata and reserved addresses are refused`)

const checkAddresses = (host: string, addresses: readonly string[], allowPrivate: boolean): void => {
  if (allowPrivate) return
  const blocked = addresses.find((address) => !isPublicAddress(address))
  if (blocked !== undefined) throw refuse(host)
}

const hostOf = (url: URL): string => url.hostname.replace(/^\[(.*)\]$/, '$1')

/** Checks a URL before sending; resolves the name once to give a clear DNS error. */
export const checkDestination = async (rawUrl: string, allowPrivate: boolean): Promise<URL> => {
  let url: URL
  try {
    url = new URL(rawUrl)
  } catch {
    throw new DestinationError('DESTINATION_REFUSED', `not a valid URL: ${JSON.stringify(rawUrl.slice(0, 200))}`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new DestinationError('DESTINATION_REFUSED', `only http and https are allowed, not ${url.protocol}`)
  if (url.username !== '' || url.password !== '') throw new DestinationError('DESTINATION_REFUSED', 'credentials in the URL are not allowed; use a header')
  const host = hostOf(url)
  if (ipaddr.isValid(host)) {
    checkAddresses(host, [host], allowPrivate)
    return url
  }
  let addresses: LookupAddress[]
  try {
    addresses = await dns.promises.lookup(host, { all: true, verbatim: true })
  } catch (error) {
    throw new DestinationError('DNS_FAILURE', `cannot resolve ${host}: ${errorMessage(error)}`)
  }
  checkAddresses(host, addresses.map((a) => a.address), allowPrivate)
  return url
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void

/** net.connect's `lookup` that refuses what checkDestination refuses. */
const checkedLookup = (allowPrivate: boolean) => (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
  dns.lookup(hostname, { ...options, all: true, verbatim: true }, (error, addresses) => {
    if (error !== null) return callback(error, [])
    try {
      checkAddresses(hostname, addresses.map((a) => a.address), allowPrivate)
    } catch (refusal) {
      // A new error for undici to carry: the refusal's own `code` stays DESTINATION_REFUSED, which the send records.
      return callback(Object.assign(new Error(errorMessage(refusal), { cause: refusal }), { code: 'EDESTINATIONREFUSED' }), [])
    }
    if (options.all === true) return callback(null, addresses)
    const [first] = addresses
    if (first === undefined) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), [])
    return callback(null, first.address, first.family)
  })
}

/** The undici dispatcher of webhook sends: no connection reuse across checks is needed, but keep-alive is harmless. */
export const createWebhookAgent = (allowPrivate: boolean): Agent =>
  new Agent({ connect: { lookup: checkedLookup(allowPrivate) }, keepAliveTimeout: 4_000 })

import { Pool } from 'undici'
import type { BenchServer } from './server.js'

/**
 * A small JSON client over the running service, for seeding benchmarks and
 * driving the webhook bench's approvals. It goes through an undici `Pool`
 * rather than `fetch`: on these two cores the client shares the CPU with the
 * service, and `fetch` spent 559–762 µs of CPU per approval against 100–229
 * µs for the pool's `request` (docs/benchmarks.md, "The load generator's share").
 */
export const apiClient = async (server: BenchServer) => {
  const pool = new Pool(server.url)
  // Its connections end with the server process; the pool goes with them.
  server.child.once('exit', () => { void pool.close() })
  const token = await server.token()
  const authorization = `Bearer ${token}`
  const organizations = await (await fetch(`${server.url}/v1/organizations`, { headers: { authorization } })).json() as { data: Array<{ id: string }> }
  const organizationId = organizations.data[0]?.id
  if (organizationId === undefined) throw new Error('no organization after bootstrap')
  const headers = { authorization, 'organization-id': organizationId, 'config-organization-id': organizationId, 'content-type': 'application/json' }
  const call = async <T>(method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE', path: string, body?: object, expected = [200, 201]): Promise<T> => {
    const response = await pool.request({ method, path, headers, body: body === undefined ? null : JSON.stringify(body) })
    const text = await response.body.text()
    if (!expected.includes(response.statusCode)) throw new Error(`${method} ${path}: ${response.statusCode} ${text}`)
    return JSON.parse(text) as T
  }
  let debtors = 0
  return {
    token, organizationId, headers, call,
    creditLine: async (overrides: Record<string, unknown> = {}) => (await call<{ data: { creditLine: { ID: string } } }>('POST', '/v1/credit-lines', {
      name: 'Crédito de consumo', description: 'Libre inversión', principalMin: '500000.00', principalMax: '50000000.00', principalDefault: '1000000.00',
      timeMin: 6, timeMax: 60, timeDefault: 12, rate: '24', rateType: 'FIXED', currency: 'COP', jurisdictionCode: 'CO', provider: 'manual',
      gatewayMethods: [['credit_card', 'pse'], ['cash']], disbursementMethods: [['bank_transfer']], conditions: [['Mayor de edad']], benefits: [['Sin cuota de manejo']],
      availableDays: 30, ...overrides,
    })).data.creditLine.ID,
    debtor: async () => {
      debtors += 1
      return (await call<{ data: { ID: string } }>('POST', '/v1/profiles', {
        type: 'natural', natural: { firstName: 'Bench', lastName: `Debtor ${debtors}`, documentType: 'CC', documentNumber: `${1_000_000_000 + debtors}` },
      })).data.ID
    },
    disbursedCredit: async (creditLineId: string, debtorId: string, term = 12) => {
      const requested = await call<{ data: { credit: { ID: string } } }>('POST', '/v1/credits', { creditLineId, debtorId, principal: '1000000.00', term })
      const id = requested.data.credit.ID
      await call('POST', `/v1/credits/${id}/approve`, {})
      const disbursed = await call<{ data: { credit: { ID: string; installments: Array<{ ID: string }> } } }>('POST', `/v1/credits/${id}/disburse`, { method: 'bank_transfer' })
      return disbursed.data.credit
    },
  }
}

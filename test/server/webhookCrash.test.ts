import t from 'tap'
import { deterministicId } from '../../src/shared/ids.js'
import { tempDir } from '../helpers/config.js'
import { lineBody } from '../helpers/lending.js'
import { spawnServer, type ServerProcess } from '../helpers/process.js'
import { startSink } from '../helpers/sink.js'

const env = { ADMIN_CLIENT_ID: 'ops-admin', ADMIN_CLIENT_SECRET: 'ops-admin-secret', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', LOG_LEVEL: 'warn' }
const organizationId = deterministicId('bootstrap', 'organization')

const client = async (server: ServerProcess) => {
  const tokenResponse = await fetch(`${server.url}/v1/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from('ops-admin:ops-admin-secret').toString('base64')}` },
    body: 'grant_type=client_credentials',
  })
  const { access_token: token } = await tokenResponse.json() as { access_token: string }
  return async <T = { ID: string }>(method: string, path: string, body?: object): Promise<T> => {
    const response = await fetch(`${server.url}/v1${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`, 'organization-id': organizationId, 'config-organization-id': organizationId,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
    const json = await response.json() as { data: T }
    if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json)}`)
    return json.data
  }
}

/** Checks again every 20 ms until `check` holds (a wait, not a timed assertion: it gives up only after 30 s). */
const eventually = async (check: () => boolean | Promise<boolean>): Promise<void> => {
  for (const deadline = Date.now() + 30_000; !(await check());) {
    if (Date.now() > deadline) throw new Error('the condition never held')
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

type Api = Awaited<ReturnType<typeof client>>

const disbursedCredit = async (api: Api, creditLineId: string): Promise<string> => {
  const debtor = await api('POST', '/profiles', { type: 'natural', natural: { firstName: 'Ana', lastName: 'Gómez', documentType: 'CC', documentNumber: `10${Date.now() % 1e8}` } })
  const { credit } = await api<{ credit: { ID: string } }>('POST', '/credits', { creditLineId, debtorId: debtor.ID })
  await api('POST', `/credits/${credit.ID}/approve`, {})
  await api('POST', `/credits/${credit.ID}/disburse`, { method: 'bank_transfer', reference: 'TRF-1' })
  return credit.ID
}

const logsOf = (api: Api, creditId: string) =>
  api<Array<{ webhookID: string; status: string; error: { code: string } | null }>>('GET', `/credits/${creditId}/webhook-logs`)

const createLine = async (api: Api, webhooks: string[]) =>
  (await api<{ creditLine: { ID: string } }>('POST', '/credit-lines', lineBody({ onDeliveredWebhooks: webhooks }))).creditLine.ID

t.test('over real processes: SIGKILL while a firing\'s request is on the wire leaves it unknown, and nothing is sent twice after the restart', async (t) => {
  const sink = await startSink(t)
  sink.route('/hang', { hang: true })
  const dataDir = tempDir()
  const first = await spawnServer({ ...env, DATA_DIR: dataDir })
  t.teardown(() => { first.child.kill('SIGKILL') })
  const api = await client(first)
  const hanging = (await api('POST', '/webhook', { tag: 'hang', url: `${sink.url}/hang`, requestBody: '{"credit": {{ .Credit.ID | quote }}}' })).ID
  const answered = (await api('POST', '/webhook', { tag: 'ok', url: `${sink.url}/ok`, requestBody: '{}' })).ID
  const creditId = await disbursedCredit(api, await createLine(api, [hanging, answered]))
  await eventually(async () => sink.requests.some((r) => r.path === '/hang')
    && (await logsOf(api, creditId)).some((l) => l.webhookID === answered && l.status === 'delivered'))
  first.child.kill('SIGKILL')
  await first.exited

  const second = await spawnServer({ ...env, DATA_DIR: dataDir })
  t.teardown(() => { second.child.kill('SIGKILL') })
  const again = await client(second)
  const sentinel = (await again('POST', '/webhook', { tag: 'sentinel', url: `${sink.url}/sentinel`, requestBody: '{}' })).ID
  const sentinelCredit = await disbursedCredit(again, await createLine(again, [sentinel]))
  // The firing process handles triggers in log order: once the sentinel is delivered, a redelivered disbursement was handled too.
  await eventually(async () => (await logsOf(again, sentinelCredit)).some((l) => l.status === 'delivered'))

  t.same(sink.requests.map((r) => r.path).filter((p) => p !== '/sentinel').sort(), ['/hang', '/ok'], 'each webhook reached its destination once')
  const logs = await logsOf(again, creditId)
  t.equal(logs.length, 2)
  t.match(logs.find((l) => l.webhookID === hanging), { status: 'unknown', error: { code: 'OUTCOME_UNKNOWN' } }, 'the interrupted send is recorded as unknown')
  t.match(logs.find((l) => l.webhookID === answered), { status: 'delivered' })
})

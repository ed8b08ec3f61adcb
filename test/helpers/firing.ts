import { concatMap, filter, firstValueFrom, merge, of, timeout } from 'rxjs'
import type { WebhookSendDoc } from '../../src/projections/webhookSends.js'
import type { Runtime } from '../../src/runtime.js'
import { organizationApi } from './api.js'
import type { TestApp } from './app.js'
import { lending, type Lending } from './lending.js'
import type { Sink } from './sink.js'

/** Resolves once `check` holds, checking again after every projected event (no sleeping, no timing). */
export const until = async (runtime: Runtime, check: () => Promise<boolean>): Promise<void> => {
  await firstValueFrom(merge(of(null), runtime.hub.events$).pipe(concatMap(() => check()), filter(Boolean), timeout(30_000)))
}

export interface Firing {
  l: Lending
  api: ReturnType<typeof organizationApi>
  sink: Sink
  /** Creates a webhook through the API (url relative to the sink) and answers its ID. */
  webhook(body: Record<string, unknown> & { tag: string; path: string }): Promise<string>
  line(links: { onOrderWebhooks?: string[]; onDeliveredWebhooks?: string[] }): Promise<string>
  /** The send records of a credit, newest first. */
  sendsOf(creditId: string): Promise<WebhookSendDoc[]>
  /** Waits until the credit has `count` sends with an outcome. */
  settled(creditId: string, count: number): Promise<WebhookSendDoc[]>
  /** Approves a new payment order on an installment (default: the first) and answers it. */
  approvedOrder(creditId: string, installmentId: string, body?: Record<string, unknown>): Promise<{ ID: string } & Record<string, unknown>>
  /**
   * Fires one more trigger (a disbursement on a line of its own) and waits for
   * its send: the firing process handles triggers in log order, so every
   * earlier trigger has started all its sends by then.
   */
  quiesce(): Promise<void>
  /** What the sink received, without the quiesce sends. */
  received(): Sink['requests']
}

export const firing = async (svc: TestApp, sink: Sink, organizationId = svc.organizationId): Promise<Firing> => {
  const l = await lending(svc, organizationId)
  const api = organizationApi(svc, organizationId)
  let sentinelLine: string | null = null
  const ok = async (response: Awaited<ReturnType<typeof api>>, status: number) => {
    if (response.statusCode !== status) throw new Error(`expected ${status}, got ${response.statusCode}: ${response.body}`)
    return response.json()
  }
  const self: Firing = {
    l, api, sink,
    async webhook({ path, ...body }) {
      return (await ok(await api('POST', '/webhook', { url: `${sink.url}${path}`, ...body }), 201)).data.ID
    },
    line: (links) => l.createLine(links),
    async sendsOf(creditId) {
      return (await svc.runtime.queries.webhookSends.byCredit(creditId, { organizationId: l.organizationId, offset: 0, limit: 100 })).items
    },
    async settled(creditId, count) {
      let sends: WebhookSendDoc[] = []
      await until(svc.runtime, async () => {
        sends = (await self.sendsOf(creditId)).filter((s) => s.status !== 'started')
        return sends.length >= count
      })
      return sends
    },
    async approvedOrder(creditId, installmentId, body = {}) {
      const url = `/v1/payables/${creditId}/installments/${installmentId}/orders`
      const created = await l.call('POST', url, body)
      if (created.statusCode !== 201) throw new Error(`order: ${created.body}`)
      const order = created.json().order
      const approved = await l.call('POST', `${url}/${order.ID}/approve`)
      if (approved.statusCode !== 200) throw new Error(`approve: ${approved.body}`)
      return approved.json().order
    },
    async quiesce() {
      if (sentinelLine === null) {
        const sentinel = await self.webhook({ tag: 'sentinel', path: '/sentinel', requestBody: '{}' })
        sentinelLine = await self.line({ onDeliveredWebhooks: [sentinel] })
      }
      const credit = await l.disbursedCredit({ creditLineId: sentinelLine })
      await self.settled(credit.ID, 1)
    },
    received: () => sink.requests.filter((r) => r.path !== '/sentinel'),
  }
  return self
}

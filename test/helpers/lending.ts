import { firstValueFrom, filter, timeout } from 'rxjs'
import { profileAggregate } from '../../src/commands/profile.js'
import { webhookAggregate } from '../../src/commands/webhook.js'
import type { DomainEventType, RecordedEvent } from '../../src/events/catalogue.js'
import type { Runtime } from '../../src/runtime.js'
import { newId } from '../../src/shared/ids.js'
import type { TestApp } from './app.js'
import { createOrganization as newOrganization, memberToken as memberOf } from './organizations.js'

/** A consumer credit line in COP: 1% a month (12% nominal), 1,000,000 default over 12 months. */
export const lineBody = (overrides: Record<string, unknown> = {}) => ({
  name: 'Crédito de consumo', description: 'Libre inversión', principalMin: '500000.00', principalMax: '20000000.00', principalDefault: '1000000.00',
  timeMin: 6, timeMax: 36, timeDefault: 12, rate: '12', rateType: 'FIXED_NOMINAL', currency: 'COP', jurisdictionCode: 'CO',
  gatewayMethods: [['credit_card', 'pse'], ['cash']], disbursementMethods: [['bank_transfer']], conditions: [['Mayor de edad']], benefits: [['Sin cuota de manejo']],
  ...overrides,
})

/** An active natural-person debtor in the organization, created through the profile contract (issue 3 builds its routes). */
export const createDebtor = async (runtime: Runtime, organizationId: string, firstName = 'Ana'): Promise<string> => {
  const profileId = newId()
  const result = await runtime.commands.execute(profileAggregate, profileId, {
    type: 'CreateProfile', profileId, organizationId, ownerId: 'test', profileType: 'natural',
    natural: { firstName, lastName: 'Gómez', documentType: 'CC', documentNumber: `10${Math.floor(Math.random() * 1e8)}`, email: 'ana@example.co' },
    legal: null, copiedFrom: null, now: runtime.clock.now().toISOString(),
  }, { organizationId, actorId: 'test', correlationId: newId() })
  await runtime.settle(result.position)
  return profileId
}

export interface Lending {
  svc: TestApp
  organizationId: string
  call(method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object, token?: string): ReturnType<TestApp['call']>
  createLine(overrides?: Record<string, unknown>): Promise<string>
  requestCredit(body: Record<string, unknown>): Promise<{ ID: string; installments: Array<{ ID: string; number: number; amount: string }> } & Record<string, unknown>>
  /** A credit taken through request, approval and disbursement. */
  disbursedCredit(overrides?: Record<string, unknown>): Promise<{ ID: string; disbursedAt: string; installments: Array<{ ID: string; number: number; dueDate: string; principal: string; interest: string; amount: string; outstanding: string }> }>
}

export const lending = async (svc: TestApp, organizationId = svc.organizationId): Promise<Lending> => {
  const call: Lending['call'] = (method, url, payload, token = svc.adminToken) =>
    svc.call({ method, url, token, organizationId, ...(payload === undefined ? {} : { payload }) })
  const ok = async (response: Awaited<ReturnType<TestApp['call']>>, status: number) => {
    if (response.statusCode !== status) throw new Error(`expected ${status}, got ${response.statusCode}: ${response.body}`)
    return response.json()
  }
  const self: Lending = {
    svc, organizationId, call,
    async createLine(overrides = {}) {
      return (await ok(await call('POST', '/v1/credit-lines', lineBody(overrides)), 201)).data.creditLine.ID
    },
    async requestCredit(body) {
      return (await ok(await call('POST', '/v1/credits', body), 201)).data.credit
    },
    async disbursedCredit(overrides = {}) {
      const creditLineId = typeof overrides['creditLineId'] === 'string' ? overrides['creditLineId'] : await self.createLine()
      const debtorId = await createDebtor(svc.runtime, organizationId)
      const credit = await self.requestCredit({ creditLineId, debtorId, ...overrides })
      await ok(await call('POST', `/v1/credits/${credit.ID}/approve`, {}), 200)
      return (await ok(await call('POST', `/v1/credits/${credit.ID}/disburse`, { method: 'bank_transfer', reference: 'TRF-1' }), 200)).data.credit
    },
  }
  return self
}

/** Resolves with the first projected event of the type that matches; subscribe before causing it. */
export const nextEvent = (runtime: Runtime, type: DomainEventType, match: (event: RecordedEvent) => boolean = () => true): Promise<RecordedEvent> =>
  firstValueFrom(runtime.hub.events$.pipe(filter((event) => event.type === type && match(event)), timeout(30_000)))

/** A new organization (created by the platform administrator). */
export const createOrganization = async (svc: TestApp, name: string): Promise<string> => (await newOrganization(svc, name)).id

/** A token of a new client that is a member of the organization with one of its built-in role templates. */
export const memberToken = (svc: TestApp, organizationId: string, role: 'administrator' | 'analyst' = 'administrator'): Promise<string> =>
  memberOf(svc, organizationId, role)

/** A webhook configured in the organization through its contract (issue 5 builds the routes). */
export const createWebhook = async (runtime: Runtime, organizationId: string, archived = false): Promise<string> => {
  const webhookId = newId()
  const context = { organizationId, actorId: 'test', correlationId: newId() }
  const now = runtime.clock.now().toISOString()
  const created = await runtime.commands.execute(webhookAggregate, webhookId, { type: 'CreateWebhook', mayReadScores: true, webhookId, organizationId, now, configuration: {
    tag: 'crm', url: 'https://crm.example.co/hooks', requestHeader: '{}', requestBody: '{"id":"{{.Credit.ID}}"}', authEnabled: false, authUrl: '',
    authMethod: '', authRequestBody: '', authRequestHeader: '', tokenSourceKey: '', tokenType: '', authHeader: '', tokenHeader: '', responseQueries: {},
    signingSecret: null,
  } }, context)
  const result = archived ? await runtime.commands.execute(webhookAggregate, webhookId, { type: 'ArchiveWebhook', now }, context) : created
  await runtime.settle(result.position)
  return webhookId
}

export const archiveWebhook = async (runtime: Runtime, organizationId: string, webhookId: string) => {
  const result = await runtime.commands.execute(webhookAggregate, webhookId, { type: 'ArchiveWebhook', now: runtime.clock.now().toISOString() },
    { organizationId, actorId: 'test', correlationId: newId() })
  await runtime.settle(result.position)
}

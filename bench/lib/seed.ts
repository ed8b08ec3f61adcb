// A production-like event log for the benchmarks that need a big one (rebuild,
// start-up): organizations with taxes, webhooks and credit lines; debtors with
// profiles and credit limits; credits requested, decided, disbursed and paid
// installment by installment through payment orders, with the taxes, credit-
// limit exposure and webhook sends that the service's process managers record.
// Every event comes out of the real deciders (src/commands) given ids and a
// clock, and goes into the embedded store through its own writer in large
// groups. The file is cached by seed version and size, outside the repository.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type Database from 'better-sqlite3'
import type { CreditState } from '../../src/events/creditState.js'
import { creditAggregate } from '../../src/commands/credit.js'
import { creditLimitAggregate, creditLimitIdOf } from '../../src/commands/creditLimit.js'
import { creditLineAggregate } from '../../src/commands/creditLine.js'
import type { Aggregate } from '../../src/commands/decider.js'
import type { CommandContext } from '../../src/commands/handler.js'
import { organizationAggregate } from '../../src/commands/organization.js'
import { paymentOrderAggregate } from '../../src/commands/paymentOrder.js'
import { orderRequestHash } from '../../src/commands/payments.js'
import { profileAggregate } from '../../src/commands/profile.js'
import { taxAggregate } from '../../src/commands/tax.js'
import { webhookAggregate } from '../../src/commands/webhook.js'
import { webhookSendAggregate } from '../../src/commands/webhookSend.js'
import type { DomainEvent } from '../../src/events/catalogue.js'
import type { CreditLineConfiguration } from '../../src/events/creditLine.js'
import type { TaxFields, TaxRate } from '../../src/events/tax.js'
import type { WebhookConfiguration } from '../../src/events/webhook.js'
import { openEventDatabase } from '../../src/events/sqliteSchema.js'
import { SqliteWriter, type WriteRequest } from '../../src/events/sqliteWriter.js'
import { schemaVersionOf } from '../../src/events/upcasters.js'
import { firingSendId } from '../../src/processes/webhookFiring.js'
import { dayOf } from '../../src/shared/amortization.js'
import { newId } from '../../src/shared/ids.js'
import { owedFor } from '../../src/shared/installments.js'
import { isZero, toMoneyText } from '../../src/shared/exactDecimal.js'

/** Bump when the mix changes: cached logs of another version are not reused. */
export const SEED_VERSION = 2

const ORGANIZATIONS = 4
/** Appends committed per transaction while seeding. */
const GROUP = 4000

export interface SeededLog {
  file: string
  events: number
  /** Null when the cached file was reused. */
  seedSeconds: number | null
  /** Events by type, as written. */
  mix: Record<string, number>
}

/** Small deterministic generator, so every seed of a version has the same shape. */
const random = (seed: number) => {
  let state = seed >>> 0
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  return { next, int: (min: number, max: number) => min + Math.floor(next() * (max - min + 1)), pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T }
}

/** Runs commands through deciders against states it keeps, and appends their events through the embedded store's writer. */
class LogWriter {
  readonly mix: Record<string, number> = {}
  written = 0
  private readonly writer: SqliteWriter
  private readonly revisions = new Map<string, number>()
  private group: WriteRequest[] = []
  private grouped = 0

  constructor(private readonly db: Database.Database) {
    this.writer = new SqliteWriter(db)
  }

  /** Decides `command` on `state`, appends the events (ids and time given) and answers the next state and the stored events' ids. */
  run<C, E extends DomainEvent, S>(aggregate: Aggregate<C, E, S>, id: string, state: S, command: C, context: CommandContext, now: string) {
    const events = aggregate.decide(command, state)
    const streamId = `${aggregate.streamType}-${id}`
    const current = this.revisions.get(streamId)
    const ids = events.map(() => newId())
    if (events.length > 0) {
      this.group.push({
        streamId,
        expected: current ?? 'no_stream',
        events: events.map((event, index) => ({
          id: ids[index] ?? newId(), type: event.type, data: JSON.stringify(event.data), recordedAt: now,
          metadata: JSON.stringify({
            organizationId: context.organizationId, actorId: context.actorId, correlationId: context.correlationId,
            causationId: context.causationId ?? null, occurredAt: now, schemaVersion: schemaVersionOf(event.type),
          }),
        })),
      })
      this.revisions.set(streamId, (current ?? -1) + events.length)
      for (const event of events) this.mix[event.type] = (this.mix[event.type] ?? 0) + 1
      this.written += events.length
      this.grouped += events.length
      if (this.grouped >= GROUP) this.flush()
    }
    return { state: events.reduce((s, e) => aggregate.evolve(s, e), state), events, ids }
  }

  flush(): void {
    if (this.group.length === 0) return
    const outcomes = this.writer.commit(this.group)
    const refused = outcomes.find((o) => !('ok' in o))
    if (refused !== undefined) throw new Error(`seed append refused: ${JSON.stringify(refused)}`)
    this.group = []
    this.grouped = 0
  }

  close(): void {
    this.flush()
    this.db.pragma('wal_checkpoint(TRUNCATE)')
    this.db.close()
  }
}

const lineConfiguration = (name: string, configId: string, webhooks: { onOrder: string; onDelivered: string }, overrides: Partial<CreditLineConfiguration>): CreditLineConfiguration => ({
  name, description: `${name} para clientes`, principalMin: '500000.00', principalMax: '30000000.00', principalDefault: '3000000.00', timeMin: 6, timeMax: 36,
  timeDefault: 12, rate: '24.5', rateType: 'FIXED', entityConfigID: configId, currency: 'COP', jurisdictionCode: 'CO', jurisdiction: { code: 'CO', name: 'Colombia' },
  gatewayMethods: [['pse', 'credit_card'], ['cash']], disbursementMethods: [['bank_transfer', 'nequi']], availableDays: 30,
  conditions: [['Mayor de edad', 'Cuenta bancaria a nombre del deudor']], benefits: [['Sin cuota de manejo'], ['Abonos a capital sin penalidad']],
  active: true, provider: 'manual', requireDistinctApprover: false, onOrderWebhooks: [webhooks.onOrder], onDeliveredWebhooks: [webhooks.onDelivered], ...overrides,
})

const webhookConfiguration = (tag: string): WebhookConfiguration => ({
  tag, url: `http://127.0.0.1:9/${tag}`, requestHeader: '{"Content-Type":"application/json"}',
  requestBody: '{"credit":"{{.Credit.ID}}","amount":"{{.Order.Amount}}","event":"{{.Trigger.Type}}"}',
  authEnabled: false, authUrl: '', authMethod: 'POST', authRequestBody: '', authRequestHeader: '', tokenSourceKey: '', tokenType: '', authHeader: '', tokenHeader: '',
  responseQueries: { reference: '$.reference' }, signingSecret: null,
})

const taxes: Record<string, TaxFields> = {
  iva: { name: 'IVA', description: 'Impuesto al valor agregado', percentage: '19', type: 'VAT', appliesTo: ['FEE', 'PAYMENT'], minimumAmount: '0' },
  gmf: { name: 'GMF', description: 'Gravamen a los movimientos financieros', percentage: '0.4', type: 'OTHER', appliesTo: ['CREDIT'], minimumAmount: '0' },
}

const firstNames = ['Ana', 'Bruno', 'Carmen', 'Diego', 'Elena', 'Felipe', 'Gloria', 'Hernán', 'Isabel', 'Jorge', 'Laura', 'Mateo']
const lastNames = ['Gómez', 'Martínez', 'Rojas', 'Restrepo', 'Díaz', 'Herrera', 'Salcedo', 'Vélez', 'Ospina', 'Castro']

interface Organization {
  organizationId: string
  context: CommandContext
  lines: Array<{ creditLineId: string; configuration: CreditLineConfiguration }>
  webhooks: Record<'onOrder' | 'onDelivered', { webhookId: string; tag: string }>
  rates: TaxRate[]
}

const at = (base: number, minutes: number) => new Date(base + minutes * 60_000).toISOString()

const setUpOrganization = (log: LogWriter, index: number, now: string): Organization => {
  const organizationId = newId()
  const context = { organizationId, actorId: newId(), correlationId: newId() }
  log.run(organizationAggregate, organizationId, organizationAggregate.initialState(), {
    type: 'CreateOrganization', organizationId, name: `Financiera ${index + 1} S.A.S.`, defaultConfigId: newId(), now,
  }, context, now)
  const rates: TaxRate[] = []
  for (const fields of Object.values(taxes)) {
    const taxId = newId()
    log.run(taxAggregate, taxId, taxAggregate.initialState(), { type: 'CreateTax', taxId, organizationId, isActive: true, fields, now }, context, now)
    rates.push({ taxId, organizationId, name: fields.name, type: fields.type, isActive: true, percentage: fields.percentage, appliesTo: fields.appliesTo, minimumAmount: fields.minimumAmount })
  }
  const webhook = (tag: string) => {
    const webhookId = newId()
    log.run(webhookAggregate, webhookId, webhookAggregate.initialState(), { type: 'CreateWebhook', mayReadScores: true, webhookId, organizationId, configuration: webhookConfiguration(tag), now }, context, now)
    return { webhookId, tag }
  }
  const webhooks = { onOrder: webhook('erp-pagos'), onDelivered: webhook('core-desembolsos') }
  const links = { onOrder: webhooks.onOrder.webhookId, onDelivered: webhooks.onDelivered.webhookId }
  const configId = newId()
  const lines = [
    lineConfiguration('Crédito de consumo', configId, links, {}),
    lineConfiguration('Libranza', configId, links, { rate: '18.9', timeMax: 60, principalMax: '80000000.00' }),
    lineConfiguration('Microcrédito', configId, links, { rate: '32', principalMax: '12000000.00', timeMax: 24, provider: 'sandbox' }),
  ].map((configuration) => {
    const creditLineId = newId()
    log.run(creditLineAggregate, creditLineId, creditLineAggregate.initialState(), { type: 'CreateCreditLine', creditLineId, organizationId, configuration, now }, context, now)
    return { creditLineId, configuration }
  })
  return { organizationId, context, lines, webhooks, rates }
}

/** The start and outcome of one automatic webhook send, as the firing process records them. */
const webhookSend = (log: LogWriter, org: Organization, which: 'onOrder' | 'onDelivered', trigger: { type: 'PaymentOrderApproved' | 'CreditDisbursed'; eventId: string },
  refs: { creditId: string; orderId: string | null }, context: CommandContext, now: string) => {
  const { webhookId, tag } = org.webhooks[which]
  const sendId = firingSendId(trigger.eventId, webhookId)
  const body = JSON.stringify({ credit: refs.creditId, order: refs.orderId, event: trigger.type })
  const request = { method: 'POST', url: `http://127.0.0.1:9/${tag}`, headers: { 'content-type': 'application/json' }, body, bodyBytes: body.length, bodyTruncated: false }
  const sendContext = { ...context, causationId: trigger.eventId }
  const started = log.run(webhookSendAggregate, sendId, webhookSendAggregate.initialState(), {
    type: 'StartWebhookSend', sendId, organizationId: org.organizationId, webhookId, tag, trigger: { type: trigger.type, eventId: trigger.eventId, logId: null },
    creditId: refs.creditId, orderId: refs.orderId, request, now,
  }, sendContext, now)
  const reference = `REF-${sendId.slice(-12)}`
  const responseBody = JSON.stringify({ ok: true, reference })
  log.run(webhookSendAggregate, sendId, started.state, {
    type: 'CompleteWebhookSend', outcome: 'delivered', request,
    response: { status: 200, headers: { 'content-type': 'application/json' }, body: responseBody, bodyBytes: responseBody.length, bodyTruncated: false },
    auth: null, error: null, responseQueryResults: { reference }, durationMs: 42, now,
  }, sendContext, now)
}

/** A disbursed credit paid installment by installment: order, approval, application, limit release, webhook send. */
const payInstallments = (log: LogWriter, org: Organization, line: Organization['lines'][number], credit: CreditState, limitState: ReturnType<typeof creditLimitAggregate.initialState>,
  paid: number, context: CommandContext, rng: ReturnType<typeof random>) => {
  let state = credit
  let limit = limitState
  const creditLimitId = creditLimitIdOf(org.organizationId, state.debtorId, state.currency)
  for (const installment of credit.installments.slice(0, paid)) {
    const now = `${installment.dueDate}T${String(rng.int(8, 18)).padStart(2, '0')}:15:00.000Z`
    const owed = owedFor(state.installments, installment.installmentId)
    if (owed === null || isZero(owed)) continue
    const orderId = newId()
    const collectionCosts = rng.next() < 0.4 ? '8500.00' : '0.00'
    const body = { Amount: toMoneyText(owed, state.currency), CollectionCosts: collectionCosts }
    const created = log.run(paymentOrderAggregate, orderId, paymentOrderAggregate.initialState(), {
      type: 'CreatePaymentOrder', taxes: org.rates.filter((r) => r.appliesTo.includes('PAYMENT') || r.appliesTo.includes('FEE')), order: {
        orderId, organizationId: org.organizationId, creditId: state.creditId, creditLineId: state.creditLineId, installmentId: installment.installmentId,
        installmentNumber: installment.number, amount: body.Amount, currency: state.currency, collectionCosts, type: 'payment', provider: line.configuration.provider,
        method: 'pse', gatewayOption: '', overrideMethod: '', key: '', requestHash: orderRequestHash(installment.installmentId, body), paymentDate: now,
        creatorId: context.actorId ?? '', requireDistinctApprover: false, createdAt: now,
      },
    }, context, now)
    const approvedAt = at(Date.parse(now), rng.int(1, 90))
    const approved = log.run(paymentOrderAggregate, orderId, created.state, { type: 'ApprovePaymentOrder', approverId: newId(), lineRequiresDistinctApprover: false, now: approvedAt }, context, approvedAt)
    const approval = approved.events[0]
    const approvalId = approved.ids[0] ?? ''
    if (approval?.type !== 'PaymentOrderApproved') throw new Error('the order was not approved')
    const caused = { ...context, causationId: approvalId }
    const applied = log.run(creditAggregate, state.creditId, state, {
      type: 'ApplyPayment', orderId, installmentId: approval.data.installmentId, installmentNumber: approval.data.installmentNumber,
      amount: approval.data.amount, collectionCosts: approval.data.collectionCosts, valueDate: approval.data.paymentDate ?? approvedAt, orderedAt: approval.data.createdAt, now: approvedAt,
    }, caused, approvedAt)
    state = applied.state
    for (const effect of applied.events) {
      if (effect.type !== 'CreditPaymentApplied' && effect.type !== 'CreditPaid') continue
      const remaining = effect.type === 'CreditPaid' ? '0' : effect.data.outstanding.principal
      limit = log.run(creditLimitAggregate, creditLimitId, limit, {
        type: 'ReleaseCreditLimit', creditId: state.creditId, remaining, reason: effect.type === 'CreditPaid' ? 'paid' : 'payment', now: approvedAt,
      }, caused, approvedAt).state
    }
    webhookSend(log, org, 'onOrder', { type: 'PaymentOrderApproved', eventId: approvalId }, { creditId: state.creditId, orderId }, context, approvedAt)
  }
  return limit
}

/** One debtor's whole history: profile, maybe an update and a credit limit, and one to three credits. */
const debtorHistory = (log: LogWriter, org: Organization, index: number, start: number, rng: ReturnType<typeof random>) => {
  const context = { ...org.context, correlationId: newId() }
  const profileId = newId()
  const created = at(start, 0)
  const natural = rng.next() < 0.85
  let profile = log.run(profileAggregate, profileId, profileAggregate.initialState(), {
    type: 'CreateProfile', profileId, organizationId: org.organizationId, ownerId: context.actorId ?? '', profileType: natural ? 'natural' : 'legal', copiedFrom: null, now: created,
    natural: natural ? {
      firstName: rng.pick(firstNames), lastName: rng.pick(lastNames), secondLastName: rng.pick(lastNames), documentType: 'CC', documentNumber: String(1_000_000_000 + index),
      birthDate: `19${rng.int(60, 99)}-0${rng.int(1, 9)}-1${rng.int(0, 9)}`, gender: rng.next() < 0.5 ? 'female' : 'male', email: `deudor${index}@example.co`,
      phone: `+57300${String(index).padStart(7, '0')}`, monthlyIncome: `${rng.int(1, 12) * 850000}.00`, employmentType: rng.pick(['formal', 'independent', 'informal'] as const),
    } : null,
    legal: natural ? null : {
      businessName: `Comercializadora ${index} S.A.S.`, documentType: 'NIT', documentNumber: String(900_000_000 + index), taxId: `${900_000_000 + index}-1`,
      legalRepresentative: { firstName: rng.pick(firstNames), lastName: rng.pick(lastNames), documentType: 'CC', documentNumber: String(80_000_000 + index) },
      email: `finanzas${index}@example.co`, monthlyIncome: `${rng.int(20, 200) * 1_000_000}.00`,
    },
  }, context, created).state
  if (rng.next() < 0.3) {
    const updated = at(start, 60 * 24 * rng.int(1, 30))
    profile = log.run(profileAggregate, profileId, profile, natural
      ? { type: 'UpdateProfile', natural: { phone: `+57310${String(index).padStart(7, '0')}`, address: `Calle ${rng.int(1, 150)} # ${rng.int(1, 99)}-${rng.int(1, 99)}` }, now: updated }
      : { type: 'UpdateProfile', legal: { phone: `+57601${String(index).padStart(7, '0')}` }, now: updated }, context, updated).state
  }
  const creditLimitId = creditLimitIdOf(org.organizationId, profileId, 'COP')
  let limit = creditLimitAggregate.initialState()
  if (rng.next() < 0.4) {
    limit = log.run(creditLimitAggregate, creditLimitId, limit, {
      type: 'CreateCreditLimit', creditLimitId, organizationId: org.organizationId, debtorId: profileId, currency: 'COP', maxAmount: '100000000.00',
      expirationDate: '2030-12-31', today: dayOf(created), now: created,
    }, context, created).state
  }
  const credits = rng.next() < 0.25 ? 2 : rng.next() < 0.1 ? 3 : 1
  for (let c = 0; c < credits; c++) {
    const line = rng.pick(org.lines)
    const config = line.configuration
    const creditId = newId()
    const requested = at(start, 60 * 24 * 45 * c + 90)
    const term = rng.int(config.timeMin, Math.min(config.timeMax, 36))
    let credit = log.run(creditAggregate, creditId, creditAggregate.initialState(), {
      type: 'RequestCredit', creditId, organizationId: org.organizationId, creditLineId: line.creditLineId, creditLineName: config.name, debtorId: profileId,
      principal: `${rng.int(1, 24) * 500000}.00`, term, rate: config.rate, rateType: config.rateType, currency: config.currency, availableDays: config.availableDays,
      requestedFirstDueDate: null, bounds: { principalMin: config.principalMin, principalMax: config.principalMax, timeMin: config.timeMin, timeMax: config.timeMax }, now: requested,
    }, context, requested).state
    const outcome = rng.next()
    const decided = at(Date.parse(requested), 120)
    if (outcome < 0.08) {
      log.run(creditAggregate, creditId, credit, { type: 'RejectCredit', reason: 'Capacidad de pago insuficiente', by: context.actorId ?? '', now: decided }, context, decided)
      continue
    }
    if (outcome < 0.11) continue
    credit = log.run(creditAggregate, creditId, credit, { type: 'ApproveCredit', by: context.actorId ?? '', now: decided }, context, decided).state
    if (outcome < 0.14) {
      const cancelled = at(Date.parse(decided), 600)
      log.run(creditAggregate, creditId, credit, { type: 'CancelCredit', reason: 'Desistimiento del cliente', by: context.actorId ?? '', now: cancelled }, context, cancelled)
      continue
    }
    const disbursedAt = at(Date.parse(decided), 60 * 20)
    limit = log.run(creditLimitAggregate, creditLimitId, limit, {
      type: 'ReserveCreditLimit', creditLimitId, organizationId: org.organizationId, debtorId: profileId, currency: credit.currency, creditId, amount: credit.principal,
      check: true, today: dayOf(disbursedAt), now: disbursedAt,
    }, context, disbursedAt).state
    const disbursed = log.run(creditAggregate, creditId, credit, {
      type: 'DisburseCredit', method: 'bank_transfer', reference: `TRF-${creditId.slice(-8)}`, allowedMethods: ['bank_transfer', 'nequi'],
      taxes: org.rates.filter((r) => r.appliesTo.includes('CREDIT')), by: context.actorId ?? '', now: disbursedAt,
    }, context, disbursedAt)
    credit = disbursed.state
    webhookSend(log, org, 'onDelivered', { type: 'CreditDisbursed', eventId: disbursed.ids[0] ?? '' }, { creditId, orderId: null }, context, disbursedAt)
    // Most credits are part-way through their schedule; some are paid off.
    const paid = rng.next() < 0.15 ? credit.term : rng.int(0, credit.term)
    limit = payInstallments(log, org, line, credit, limit, paid, context, rng)
  }
}

const cacheFile = (events: number) => path.join(os.tmpdir(), 'credit-bench-cache', `mixed-log-v${SEED_VERSION}-${events}.sqlite`)

/** Writes a mixed log of about `target` events into `file` (no cache): the benches' seed, also used by tests. */
export const writeLog = (file: string, target: number): Record<string, number> => {
  const log = new LogWriter(openEventDatabase(file, 'NORMAL'))
  const rng = random(8)
  const start = Date.parse('2024-01-02T09:00:00.000Z')
  const organizations = Array.from({ length: ORGANIZATIONS }, (_, i) => setUpOrganization(log, i, at(start, -60 * 24 + i)))
  for (let debtor = 0; log.written < target; debtor++) {
    debtorHistory(log, organizations[debtor % ORGANIZATIONS] as Organization, debtor, start + debtor * 53_000, rng)
  }
  log.close()
  return log.mix
}

/**
 * The embedded store's file holding at least `events` mixed events (a
 * debtor's history is never cut), seeded once per SEED_VERSION and size and
 * then reused. Callers copy it before opening it as a service's store.
 */
export const seededLog = (events: number, progress: (line: string) => void = () => {}): SeededLog => {
  const file = cacheFile(events)
  const mixFile = `${file}.json`
  if (fs.existsSync(file) && fs.existsSync(mixFile)) {
    const cached = JSON.parse(fs.readFileSync(mixFile, 'utf8')) as { events: number; mix: Record<string, number> }
    return { file, events: cached.events, seedSeconds: null, mix: cached.mix }
  }
  fs.mkdirSync(path.dirname(file), { recursive: true })
  const partial = `${file}.partial`
  for (const stale of [partial, `${partial}-wal`, `${partial}-shm`]) fs.rmSync(stale, { force: true })
  progress(`seeding ${events.toLocaleString('en-US')} mixed events into ${file}…`)
  const started = performance.now()
  const mix = writeLog(partial, events)
  const seedSeconds = (performance.now() - started) / 1000
  const written = Object.values(mix).reduce((n, c) => n + c, 0)
  fs.renameSync(partial, file)
  fs.writeFileSync(mixFile, JSON.stringify({ events: written, mix }))
  progress(`seeded ${written.toLocaleString('en-US')} events in ${seedSeconds.toFixed(1)} s`)
  return { file, events: written, seedSeconds, mix }
}

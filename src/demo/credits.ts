import { creditAggregate } from '../commands/credit.js'
import { followCreditExposure, isExposureEvent } from '../commands/creditExposure.js'
import { creditLineAggregate } from '../commands/creditLine.js'
import type { CommandContext } from '../commands/handler.js'
import { createCreditLine, disburseCredit, requestCredit } from '../commands/lending.js'
import { paymentOrderAggregate } from '../commands/paymentOrder.js'
import { applyApprovedPayment, createPaymentOrder, type OrderRequest } from '../commands/payments.js'
import type { CreditLineConfiguration } from '../events/creditLine.js'
import type { CreditState } from '../events/creditState.js'
import type { Runtime } from '../runtime.js'
import { deterministicId } from '../shared/ids.js'
import { creditTransitions, ZERO_INSTALLMENT, type CreditStateName } from '../shared/lending.js'
import type { DemoState, DemoStep } from './index.js'

/** Credit lines, credits in every state with their schedules, and payment orders, for every GET and export to show. */

const line = (overrides: Partial<CreditLineConfiguration> & Pick<CreditLineConfiguration, 'name'>, configId: string): CreditLineConfiguration => ({
  description: '', principalMin: '500000.00', principalMax: '20000000.00', principalDefault: '3000000.00', timeMin: 6, timeMax: 36, timeDefault: 12,
  rate: '24.5', rateType: 'FIXED', entityConfigID: configId, currency: 'COP', jurisdictionCode: 'CO', jurisdiction: { code: 'CO', name: 'Colombia' },
  gatewayMethods: [['pse', 'credit_card'], ['cash']], disbursementMethods: [['bank_transfer', 'nequi']], availableDays: 30,
  conditions: [['Mayor de edad', 'Cuenta bancaria a nombre del deudor']], benefits: [['Sin cuota de manejo'], ['Abonos a capital sin penalidad']],
  active: true, provider: 'manual', requireDistinctApprover: false, onOrderWebhooks: [], onDeliveredWebhooks: [], ...overrides,
})

const demoLines = (configId: string): Record<string, CreditLineConfiguration> => ({
  'consumo': line({ name: 'Crédito de consumo', description: 'Libre inversión para personas naturales' }, configId),
  'capital-trabajo': line({
    name: 'Capital de trabajo PYME', description: 'Capital de trabajo para empresas', principalMin: '10000000.00', principalMax: '500000000.00',
    principalDefault: '50000000.00', timeMin: 12, timeMax: 60, timeDefault: 24, rate: '18', rateType: 'FIXED_NOMINAL', provider: 'sandbox',
    requireDistinctApprover: true, gatewayMethods: [['pse', 'bank_transfer']], disbursementMethods: [['bank_transfer']], availableDays: 15,
  }, configId),
  'dolares': line({
    name: 'Crédito en dólares', description: 'Financiación de importaciones (pausada)', principalMin: '1000.00', principalMax: '50000.00',
    principalDefault: '10000.00', rate: '9.5', currency: 'USD', jurisdictionCode: 'US', jurisdiction: { code: 'US', name: 'United States' }, active: false,
  }, configId),
})

interface DemoCredit {
  line: string
  debtor: string
  principal: string
  term: number
  /** The state the credit is taken to, and how long ago its life began. */
  target: CreditStateName
  daysAgo: number
}

const demoCredits: Record<string, DemoCredit> = {
  'ana-solicitado': { line: 'consumo', debtor: 'ana', principal: '2000000.00', term: 12, target: 'Solicitado', daysAgo: 1 },
  'bruno-rechazado': { line: 'consumo', debtor: 'bruno', principal: '1000000.00', term: 6, target: 'Rechazado', daysAgo: 10 },
  'carmen-aprobado': { line: 'consumo', debtor: 'carmen', principal: '8000000.00', term: 24, target: 'Aprobado', daysAgo: 3 },
  'carmen-anulado': { line: 'consumo', debtor: 'carmen', principal: '600000.00', term: 6, target: 'Anulado', daysAgo: 20 },
  'ana-desembolsado': { line: 'consumo', debtor: 'ana', principal: '3000000.00', term: 12, target: 'Desembolsado', daysAgo: 125 },
  'andes-desembolsado': { line: 'capital-trabajo', debtor: 'andes-coffee', principal: '120000000.00', term: 24, target: 'Desembolsado', daysAgo: 40 },
  'caribe-pagado': { line: 'capital-trabajo', debtor: 'caribe-logistica', principal: '15000000.00', term: 12, target: 'Pagado', daysAgo: 70 },
}

/** The path from Solicitado to each state. */
const pathTo: Record<CreditStateName, CreditStateName[]> = {
  Solicitado: [], Aprobado: ['Aprobado'], Rechazado: ['Rechazado'], Anulado: ['Anulado'],
  Desembolsado: ['Aprobado', 'Desembolsado'], Pagado: ['Aprobado', 'Desembolsado'],
}

const at = (runtime: Runtime, daysAgo: number, plusMinutes = 0) =>
  new Date(runtime.clock.now().getTime() - daysAgo * 86_400_000 + plusMinutes * 60_000).toISOString()

const moveCredit = async (runtime: Runtime, creditId: string, to: CreditStateName, now: string, context: CommandContext, organizationId: string) => {
  const by = context.actorId ?? 'demo'
  switch (to) {
    case 'Aprobado':
      return runtime.commands.execute(creditAggregate, creditId, { type: 'ApproveCredit', by, now }, context)
    case 'Rechazado':
      return runtime.commands.execute(creditAggregate, creditId, { type: 'RejectCredit', reason: 'Capacidad de pago insuficiente', by, now }, context)
    case 'Anulado':
      return runtime.commands.execute(creditAggregate, creditId, { type: 'CancelCredit', reason: 'Solicitud duplicada', by, now }, context)
    case 'Desembolsado':
      return disburseCredit(runtime.commands, {
        creditId, organizationId, method: 'bank_transfer', reference: `TRF-${creditId.slice(0, 8)}`,
        taxes: await runtime.queries.taxes.ratesFor(organizationId, ['CREDIT']), by, now,
      }, context)
    default:
      return undefined
  }
}

/** Creates (or finds, by its Key) an order, approves it when asked, and applies it as the payment applier would. */
const pay = async (
  runtime: Runtime,
  input: { credit: CreditState; installment: string; key: string; body?: OrderRequest; approve: 'approve' | 'reject' | 'leave'; approver: string; now: string },
  context: CommandContext,
) => {
  const { commands } = runtime
  const created = await createPaymentOrder(commands, {
    organizationId: input.credit.organizationId, creditId: input.credit.creditId, installmentId: input.installment,
    body: { Key: input.key, ...input.body }, taxes: await runtime.queries.taxes.ratesFor(input.credit.organizationId, ['PAYMENT', 'FEE']),
    creatorId: context.actorId ?? 'demo', now: input.now,
  }, context)
  const orderId = created.order.order?.orderId ?? ''
  if (input.approve === 'leave') return
  if (created.order.status === 'pending') {
    await commands.execute(paymentOrderAggregate, orderId, input.approve === 'approve'
      ? { type: 'ApprovePaymentOrder', approverId: input.approver, lineRequiresDistinctApprover: false, now: input.now }
      : { type: 'RejectPaymentOrder', reason: 'Soporte de pago ilegible', actorId: input.approver, now: input.now }, context)
  }
  // The demo runs with the process managers stopped, so it applies approvals, and follows the credit limit, itself (idempotently, as they would).
  const { events } = await commands.load(paymentOrderAggregate, orderId, { withEvents: true })
  for (const event of events) {
    if (event.type !== 'PaymentOrderApproved') continue
    const applied = await applyApprovedPayment(commands, event.data, { ...context, causationId: event.id })
    for (const effect of applied.events) if (isExposureEvent(effect)) await followCreditExposure(commands, effect, context)
  }
}

const paymentsOf = async (runtime: Runtime, key: string, creditId: string, state: DemoState, context: CommandContext) => {
  const { state: credit } = await runtime.commands.load(creditAggregate, creditId)
  const approver = state.clients['integration']?.clientId ?? 'demo-integration'
  const installment = (n: number) => credit.installments[n - 1]?.installmentId ?? ''
  const spec = demoCredits[key]
  if (spec === undefined || credit.status === 'none') return
  const day = (offset: number) => at(runtime, spec.daysAgo - offset)
  if (key === 'ana-desembolsado') {
    await pay(runtime, { credit, installment: installment(1), key: 'ana-cuota-1', approve: 'approve', approver, now: day(32) }, context)
    await pay(runtime, { credit, installment: installment(2), key: 'ana-cuota-2', approve: 'approve', approver, now: day(61) }, context)
    await pay(runtime, { credit, installment: installment(3), key: 'ana-cuota-3-parcial', body: { Amount: '50000.00', OverrideMethod: 'cash' }, approve: 'approve', approver, now: day(95) }, context)
    await pay(runtime, { credit, installment: installment(3), key: 'ana-cuota-3-rechazada', body: { Amount: '20000.00' }, approve: 'reject', approver, now: day(100) }, context)
    await pay(runtime, { credit, installment: installment(3), key: 'ana-cuota-3-pendiente', approve: 'leave', approver, now: day(120) }, context)
  }
  if (key === 'andes-desembolsado') {
    await pay(runtime, { credit, installment: installment(1), key: 'andes-cuota-1', body: { Provider: 'manual', CollectionCosts: '35000.00' }, approve: 'approve', approver, now: day(35) }, context)
    await pay(runtime, { credit, installment: installment(2), key: 'andes-cuota-2-sandbox', approve: 'leave', approver, now: day(39) }, context)
  }
  if (key === 'caribe-pagado') {
    await pay(runtime, { credit, installment: installment(1), key: 'caribe-cuota-1', body: { Provider: 'manual' }, approve: 'approve', approver, now: day(30) }, context)
    await pay(runtime, { credit, installment: ZERO_INSTALLMENT, key: 'caribe-pago-total', body: { Provider: 'manual' }, approve: 'approve', approver, now: day(60) }, context)
  }
}

export const demoCreditLineId = (key: string): string => deterministicId('demo', 'creditLine', key)
export const demoCreditId = (key: string): string => deterministicId('demo', 'credit', key)

export const creditsDemo: DemoStep = {
  name: 'credit lines, credits and payment orders',
  async run(runtime, state) {
    const { commands } = runtime
    const owner = state.users['demo.admin'] ?? 'demo'
    const context: CommandContext = { organizationId: state.organizationId, actorId: owner, correlationId: deterministicId('demo', 'credits') }
    for (const [key, configuration] of Object.entries(demoLines(state.defaultConfigId))) {
      const creditLineId = demoCreditLineId(key)
      const { state: existing } = await commands.load(creditLineAggregate, creditLineId)
      if (!existing.exists) {
        await createCreditLine(commands, { creditLineId, organizationId: state.organizationId, configuration, now: at(runtime, 200) }, context)
      }
      state.ids[`creditLine.${key}`] = creditLineId
    }
    for (const [key, spec] of Object.entries(demoCredits)) {
      const creditId = demoCreditId(key)
      const { state: existing } = await commands.load(creditAggregate, creditId)
      if (existing.status === 'none') {
        await requestCredit(commands, {
          creditId, organizationId: state.organizationId, creditLineId: demoCreditLineId(spec.line), debtorId: state.ids[`profile.${spec.debtor}`] ?? '',
          principal: spec.principal, term: spec.term, now: at(runtime, spec.daysAgo),
        }, context)
      }
      for (const [step, to] of pathTo[spec.target].entries()) {
        const { state: credit } = await commands.load(creditAggregate, creditId)
        if (credit.status === 'none' || !creditTransitions[credit.status].includes(to)) continue
        await moveCredit(runtime, creditId, to, at(runtime, spec.daysAgo, 60 * (step + 1)), context, state.organizationId)
      }
      await paymentsOf(runtime, key, creditId, state, context)
      state.ids[`credit.${key}`] = creditId
    }
  },
}

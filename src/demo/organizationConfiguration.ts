import { creditLimitAggregate, creditLimitIdOf, utcDate } from '../commands/creditLimit.js'
import { scoringConfigurationAggregate } from '../commands/scoringConfiguration.js'
import { taxAggregate } from '../commands/tax.js'
import type { ScoringModelDefinition } from '../events/scoringModel.js'
import type { TaxFields } from '../events/tax.js'
import { deterministicId } from '../shared/ids.js'
import type { DemoStep } from './index.js'

/** The demo's default scoring model: the hand-checked model of docs/scoring.md. */
export const demoScoringModel: ScoringModelDefinition = {
  name: 'Consumo básico', description: 'Edad, ingresos y tipo de empleo', category: 'consumer', metadata: { owner: 'riesgo' },
  variables: [
    { field: 'age', weight: 0.3, type: 'numeric', categories: [],
      ranges: [{ min: 18, max: 25, score: 50 }, { min: 26, max: 40, score: 80 }, { min: 41, max: 65, score: 100 }] },
    { field: 'monthlyIncome', weight: 0.5, type: 'numeric', categories: [],
      ranges: [{ min: 0, max: 1999999.99, score: 20 }, { min: 2000000, max: 4999999.99, score: 60 }, { min: 5000000, max: 1000000000, score: 100 }] },
    { field: 'employmentType', weight: 0.2, type: 'categorical', ranges: [],
      categories: [{ value: 'formal', score: 100 }, { value: 'independent', score: 70 }, { value: 'informal', score: 40 }] },
  ],
  thresholds: { approve: 70, review: 50, reject: 30 },
  penalties: [{ condition: 'age < 21', penalty: 15, description: 'Menor de 21 años' }],
  bonuses: [{ condition: 'monthlyIncome >= 2000000 && employmentType == "formal"', bonus: 5, description: 'Empleo formal y solvente' }],
}

const demoTaxes: Record<string, TaxFields> = {
  iva: { name: 'IVA', description: 'Impuesto al valor agregado', percentage: '19', type: 'VAT', appliesTo: ['FEE', 'PAYMENT'], minimumAmount: '0' },
  retefuente: { name: 'Retención en la fuente', description: 'Retención sobre pagos', percentage: '2.5', type: 'RETENTION', appliesTo: ['PAYMENT'], minimumAmount: '1000000' },
}

/** A default scoring model, two taxes and a credit limit for each natural demo debtor; ids land in `state.ids`. */
export const organizationConfigurationDemo: DemoStep = {
  name: 'scoring model, taxes and credit limits',
  async run(runtime, state) {
    const { commands, clock } = runtime
    const now = clock.now()
    const context = { organizationId: state.organizationId, actorId: state.users['demo.admin'] ?? 'demo', correlationId: deterministicId('demo', 'configuration', now.toISOString()) }
    const modelId = deterministicId('demo', 'scoringModel', 'consumer')
    const { state: configuration } = await commands.load(scoringConfigurationAggregate, state.defaultConfigId)
    if (!configuration.models.has(modelId)) {
      await commands.execute(scoringConfigurationAggregate, state.defaultConfigId, {
        type: 'CreateScoringModel', configId: state.defaultConfigId, organizationId: state.organizationId, modelId, version: '1.0',
        definition: demoScoringModel, validFrom: now.toISOString(), isActive: true, isDefault: true, now: now.toISOString(),
      }, context)
    }
    state.ids['scoringModel.consumer'] = modelId
    for (const [key, fields] of Object.entries(demoTaxes)) {
      const taxId = deterministicId('demo', 'tax', key)
      if (!(await commands.load(taxAggregate, taxId)).state.exists) {
        await commands.execute(taxAggregate, taxId, { type: 'CreateTax', taxId, organizationId: state.organizationId, isActive: true, fields, now: now.toISOString() }, context)
      }
      state.ids[`tax.${key}`] = taxId
    }
    const expirationDate = `${now.getUTCFullYear() + 1}-12-31`
    for (const [key, maxAmount] of [['ana', '8000000.00'], ['bruno', '1500000.00'], ['carmen', '20000000.00']] as const) {
      const debtorId = state.ids[`profile.${key}`]
      if (debtorId === undefined) continue
      const creditLimitId = creditLimitIdOf(state.organizationId, debtorId, 'COP')
      if ((await commands.load(creditLimitAggregate, creditLimitId)).state.status === 'none') {
        await commands.execute(creditLimitAggregate, creditLimitId, {
          type: 'CreateCreditLimit', creditLimitId, organizationId: state.organizationId, debtorId, currency: 'COP', maxAmount, expirationDate,
          today: utcDate(now), now: now.toISOString(),
        }, context)
      }
      state.ids[`creditLimit.${key}`] = creditLimitId
    }
  },
}

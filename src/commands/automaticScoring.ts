import { isEventOf, type RecordedEvent } from '../events/catalogue.js'
import type { ScoringModelDefinition } from '../events/scoringModel.js'
import type { ScoringResult } from './scoringEvaluation.js'

export interface ModelInForce {
  modelId: string
  version: string
  versionNumber: number
  definition: ScoringModelDefinition
}

interface ModelHistory {
  isActive: boolean
  versions: Array<Omit<ModelInForce, 'modelId'> & { validFrom: string }>
}

/**
 * The configuration's default model and its version in force at `at`, from the
 * configuration stream's events as they stood then: null when there is no
 * default, it is inactive, or none of its versions has taken effect yet. A
 * version is in force from its `validFrom`; the latest such version wins.
 */
export const scoringModelInForce = (events: readonly RecordedEvent[], at: string): ModelInForce | null => {
  const models = new Map<string, ModelHistory>()
  let defaultModelId: string | null = null
  for (const event of events) {
    if (!isEventOf(event, ['ScoringModelCreated', 'ScoringModelRevised', 'ScoringModelActivated', 'ScoringModelDeactivated', 'DefaultScoringModelChanged'])) continue
    switch (event.type) {
      case 'ScoringModelCreated':
      case 'ScoringModelRevised': {
        const { modelId, version, versionNumber, definition, validFrom } = event.data
        const model = models.get(modelId) ?? { isActive: event.type === 'ScoringModelCreated' && event.data.isActive, versions: [] }
        models.set(modelId, { ...model, versions: [...model.versions, { version, versionNumber, definition, validFrom }] })
        break
      }
      case 'ScoringModelActivated':
      case 'ScoringModelDeactivated': {
        const model = models.get(event.data.modelId)
        if (model !== undefined) models.set(event.data.modelId, { ...model, isActive: event.type === 'ScoringModelActivated' })
        break
      }
      case 'DefaultScoringModelChanged':
        defaultModelId = event.data.modelId
        break
      default: {
        const _never: never = event
        return _never
      }
    }
  }
  const model = defaultModelId === null ? undefined : models.get(defaultModelId)
  if (defaultModelId === null || model === undefined || !model.isActive) return null
  const inForce = model.versions.filter((v) => v.validFrom <= at).sort((a, b) => b.versionNumber - a.versionNumber)[0]
  if (inForce === undefined) return null
  const { validFrom: _validFrom, ...version } = inForce
  return { modelId: defaultModelId, ...version }
}

const signed = (amount: number, sign: '+' | '−') => `${sign}${amount}`

/** The score explained in a few lines, as the credit keeps it: each variable, each penalty and bonus that held, the decision. */
export const scoreReasons = (result: ScoringResult): string[] => [
  ...result.variables.map((v) => (v.matched
    ? `${v.field} = ${String(v.value)}: ${v.score} × ${v.weight} = ${v.contribution}`
    : `${v.field}${v.value === null ? '' : ` = ${String(v.value)}`}: ${v.reason ?? 'no match'}, 0`)),
  ...result.penalties.filter((p) => p.applied).map((p) => `penalty ${signed(p.amount, '−')}: ${p.description} (${p.condition})`),
  ...result.bonuses.filter((b) => b.applied).map((b) => `bonus ${signed(b.amount, '+')}: ${b.description} (${b.condition})`),
  `score ${result.score}: ${result.decision} (approve from ${result.thresholds.approve}, review from ${result.thresholds.review})`,
]

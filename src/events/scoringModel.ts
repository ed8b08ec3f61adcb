import type { Event, RequestKey } from './types.js'

export type ScoringVariableType = 'numeric' | 'categorical' | 'boolean'

/** An inclusive range of a numeric variable: `min <= value <= max` scores `score`. */
export interface ScoringRange {
  min: number
  max: number
  score: number
}

/** A category of a categorical or boolean variable (boolean values are the strings `true` and `false`). */
export interface ScoringCategory {
  value: string
  score: number
}

export interface ScoringVariable {
  /** A field of the scoring field catalogue (src/commands/scoringFields.ts). */
  field: string
  weight: number
  type: ScoringVariableType
  ranges: ScoringRange[]
  categories: ScoringCategory[]
}

export interface ScoringThresholds {
  approve: number
  review: number
  reject: number
}

export interface ScoringPenalty {
  /** A CEL expression over scoring fields. */
  condition: string
  penalty: number
  description: string
}

export interface ScoringBonus {
  condition: string
  bonus: number
  description: string
}

/** Everything a version of a model fixes: what is scored and how. */
export interface ScoringModelDefinition {
  name: string
  description: string
  category: string
  variables: ScoringVariable[]
  thresholds: ScoringThresholds
  penalties: ScoringPenalty[]
  bonuses: ScoringBonus[]
  metadata: Record<string, string>
}

/** What every version of a model records: the whole definition and when it takes effect. */
interface ScoringModelVersionData {
  configId: string
  organizationId: string
  modelId: string
  /** 1 for the first version, then 2, 3… */
  versionNumber: number
  /** The label the client gave (e.g. `1.0`), unique within the model. */
  version: string
  definition: ScoringModelDefinition
  validFrom: string
  createdAt: string
}

/**
 * Every scoring model of a configuration lives in one stream, `scoringConfiguration-<configId>`,
 * so "one default model per configuration" and unique version labels are decided atomically.
 */
export type ScoringModelCreated = Event<'ScoringModelCreated', ScoringModelVersionData & {
  isActive: boolean
  /** The creator's `Idempotency-Key` and a hash of its request; absent when it sent none. */
  idempotency?: RequestKey
}>
/** A new version of a model: a full definition that takes effect at `validFrom`. */
export type ScoringModelRevised = Event<'ScoringModelRevised', ScoringModelVersionData>
export type ScoringModelActivated = Event<'ScoringModelActivated', { configId: string; organizationId: string; modelId: string; at: string }>
export type ScoringModelDeactivated = Event<'ScoringModelDeactivated', { configId: string; organizationId: string; modelId: string; at: string }>
/** The configuration's default model changed; `modelId: null` leaves the configuration without one. */
export type DefaultScoringModelChanged = Event<'DefaultScoringModelChanged', {
  configId: string
  organizationId: string
  modelId: string | null
  previousModelId: string | null
  at: string
}>

export type ScoringModelEvent =
  | ScoringModelCreated
  | ScoringModelRevised
  | ScoringModelActivated
  | ScoringModelDeactivated
  | DefaultScoringModelChanged

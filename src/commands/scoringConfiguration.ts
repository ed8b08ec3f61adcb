import type { ScoringModelDefinition, ScoringModelEvent } from '../events/scoringModel.js'
import type { RequestKey } from '../events/types.js'
import { AppError } from '../shared/errors.js'
import { deterministicId } from '../shared/ids.js'
import type { Aggregate } from './decider.js'
import type { CommandContext, CommandHandler } from './handler.js'
import { canonical, createOnceUnderKey, hashRequest } from './idempotency.js'
import { requireValidDefinition } from './scoringModelRules.js'

export type ScoringConfigurationCommand =
  | {
    type: 'CreateScoringModel'
    configId: string
    organizationId: string
    modelId: string
    version: string
    definition: ScoringModelDefinition
    validFrom: string
    isActive: boolean
    isDefault: boolean
    now: string
    /** The creator's `Idempotency-Key` (the id from `keyedScoringModelId`) and its request's hash (`scoringModelRequestHash`). */
    idempotency?: RequestKey
  }
  | { type: 'ReviseScoringModel'; modelId: string; version: string; definition: ScoringModelDefinition; validFrom: string; isActive?: boolean; isDefault?: boolean; now: string }
  | { type: 'ChangeScoringModelStatus'; modelId: string; isActive?: boolean; isDefault?: boolean; now: string }

export interface ScoringModelState {
  versions: readonly string[]
  isActive: boolean
  /** The `Idempotency-Key` it was created with, and its request's hash; absent when it was created without one. */
  idempotency?: RequestKey
}

/** The scoring models of one configuration: their version labels, activity, and which one is the default. */
export interface ScoringConfigurationState {
  configId: string
  organizationId: string
  models: ReadonlyMap<string, ScoringModelState>
  defaultModelId: string | null
}

const requireModel = (state: ScoringConfigurationState, modelId: string): ScoringModelState => {
  const model = state.models.get(modelId)
  if (model === undefined) throw new AppError('NOT_FOUND', `scoring model ${modelId} not found`, { resource: 'scoringModel' })
  return model
}

type Flags = { isActive?: boolean | undefined; isDefault?: boolean | undefined }

/** The events that bring a model's activity and default flag to what the command asks; none when they already are. */
const flagEvents = (state: ScoringConfigurationState, modelId: string, current: boolean, wanted: Flags, at: string): ScoringModelEvent[] => {
  const ids = { configId: state.configId, organizationId: state.organizationId, modelId }
  const events: ScoringModelEvent[] = []
  if (wanted.isActive === true && !current) events.push({ type: 'ScoringModelActivated', data: { ...ids, at } })
  if (wanted.isActive === false && current) events.push({ type: 'ScoringModelDeactivated', data: { ...ids, at } })
  const isDefault = state.defaultModelId === modelId
  if (wanted.isDefault === true && !isDefault) {
    events.push({ type: 'DefaultScoringModelChanged', data: { ...ids, previousModelId: state.defaultModelId, at } })
  }
  if (wanted.isDefault === false && isDefault) {
    events.push({ type: 'DefaultScoringModelChanged', data: { ...ids, modelId: null, previousModelId: modelId, at } })
  }
  return events
}

export const scoringConfigurationAggregate: Aggregate<ScoringConfigurationCommand, ScoringModelEvent, ScoringConfigurationState> = {
  streamType: 'scoringConfiguration',
  eventTypes: ['ScoringModelCreated', 'ScoringModelRevised', 'ScoringModelActivated', 'ScoringModelDeactivated', 'DefaultScoringModelChanged'],
  initialState: () => ({ configId: '', organizationId: '', models: new Map(), defaultModelId: null }),
  decide(command, state) {
    switch (command.type) {
      case 'CreateScoringModel': {
        if (state.models.has(command.modelId)) {
          // A creation with a Key that lost a race to the same Key: the caller compares it with the model the first one made.
          if (command.idempotency !== undefined) return []
          throw new AppError('ALREADY_EXISTS', `scoring model ${command.modelId} already exists`)
        }
        if (state.organizationId !== '' && state.organizationId !== command.organizationId) {
          throw new AppError('NOT_FOUND', 'configuration not found', { resource: 'configuration' })
        }
        requireValidDefinition(command.definition)
        const created: ScoringModelEvent = { type: 'ScoringModelCreated', data: {
          configId: command.configId, organizationId: command.organizationId, modelId: command.modelId, versionNumber: 1,
          version: command.version, definition: command.definition, validFrom: command.validFrom, isActive: command.isActive, createdAt: command.now,
          ...(command.idempotency === undefined ? {} : { idempotency: command.idempotency }),
        } }
        const scoped = { ...state, configId: command.configId, organizationId: command.organizationId }
        return [created, ...flagEvents(scoped, command.modelId, command.isActive, { isDefault: command.isDefault }, command.now)]
      }
      case 'ReviseScoringModel': {
        const model = requireModel(state, command.modelId)
        if (model.versions.includes(command.version)) {
          throw new AppError('SCORING_MODEL_VERSION_EXISTS', `version "${command.version}" of this model already exists; a new version needs a new label`, {
            version: command.version,
          })
        }
        requireValidDefinition(command.definition)
        return [
          { type: 'ScoringModelRevised', data: {
            configId: state.configId, organizationId: state.organizationId, modelId: command.modelId, versionNumber: model.versions.length + 1,
            version: command.version, definition: command.definition, validFrom: command.validFrom, createdAt: command.now,
          } },
          ...flagEvents(state, command.modelId, model.isActive, command, command.now),
        ]
      }
      case 'ChangeScoringModelStatus': {
        const model = requireModel(state, command.modelId)
        return flagEvents(state, command.modelId, model.isActive, command, command.now)
      }
      default: {
        const _never: never = command
        return _never
      }
    }
  },
  evolve(state, event) {
    const withModel = (modelId: string, change: (model: ScoringModelState) => ScoringModelState) => {
      const model = state.models.get(modelId)
      return model === undefined ? state : { ...state, models: new Map(state.models).set(modelId, change(model)) }
    }
    switch (event.type) {
      case 'ScoringModelCreated':
        return {
          ...state, configId: event.data.configId, organizationId: event.data.organizationId,
          models: new Map(state.models).set(event.data.modelId, {
            versions: [event.data.version], isActive: event.data.isActive,
            ...(event.data.idempotency === undefined ? {} : { idempotency: event.data.idempotency }),
          }),
        }
      case 'ScoringModelRevised':
        return withModel(event.data.modelId, (model) => ({ ...model, versions: [...model.versions, event.data.version] }))
      case 'ScoringModelActivated':
        return withModel(event.data.modelId, (model) => ({ ...model, isActive: true }))
      case 'ScoringModelDeactivated':
        return withModel(event.data.modelId, (model) => ({ ...model, isActive: false }))
      case 'DefaultScoringModelChanged':
        return { ...state, defaultModelId: event.data.modelId }
      default: {
        const _never: never = event
        return _never
      }
    }
  },
}

/** The id of the scoring model an organization's `Idempotency-Key` names: one model per Key, whatever the concurrency. */
export const keyedScoringModelId = (organizationId: string, key: string): string => deterministicId('scoringModel-key', organizationId, key)

/**
 * What makes two creations with one Key "the same": the definition (its keys
 * in any order), the version label, the flags and `validFrom` as given (absent
 * stays absent: it defaults to the moment of each request).
 */
export const scoringModelRequestHash = (
  definition: ScoringModelDefinition, version: string, flags: { isActive: boolean; isDefault: boolean }, validFrom: string | null,
): string => hashRequest([canonical(definition), version, flags.isActive, flags.isDefault, validFrom])

/**
 * A scoring model's creation under an `Idempotency-Key`: the first creates it
 * in the configuration, the same request again gets it back (`created: false`)
 * whatever it has become, another request with the Key is 409
 * `IDEMPOTENCY_KEY_REUSED`. Models are the organization's, so whoever may
 * create one may have it back.
 */
export const createScoringModelOnce = (
  commands: CommandHandler, command: Extract<ScoringConfigurationCommand, { type: 'CreateScoringModel' }> & { idempotency: RequestKey },
  context: CommandContext,
): Promise<{ created: boolean; position: number }> => createOnceUnderKey({
  requested: command.idempotency, what: 'scoring model creation request', details: { modelId: command.modelId },
  load: () => commands.load(scoringConfigurationAggregate, command.configId),
  exists: (state) => state.models.has(command.modelId), recordedKey: (state) => state.models.get(command.modelId)?.idempotency,
  create: () => commands.execute(scoringConfigurationAggregate, command.configId, command, context),
})

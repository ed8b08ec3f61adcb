import type { ScoringModelDefinition } from '../events/scoringModel.js'
import { applyAt, defineProjection, updateAt } from './projection.js'
import type { Filter, ReadStore } from './readStore.js'

export interface ScoringModelVersionSummary {
  versionNumber: number
  version: string
  validFrom: string
  createdAt: string
}

/** A model as its latest version defines it, with the list of all its versions. */
export interface ScoringModelDoc extends ScoringModelDefinition {
  _id: string
  _position?: number
  organizationId: string
  configId: string
  version: string
  versionNumber: number
  validFrom: string
  isActive: boolean
  isDefault: boolean
  createdAt: string
  updatedAt: string
  versions: ScoringModelVersionSummary[]
}

/** One version of a model, kept whole: evaluation reads the version in force. */
export interface ScoringModelVersionDoc {
  _id: string
  _position?: number
  modelId: string
  organizationId: string
  configId: string
  versionNumber: number
  version: string
  validFrom: string
  createdAt: string
  definition: ScoringModelDefinition
}

const models = { name: 'scoring_models', indexes: [{ configId: 1 }, { organizationId: 1 }, { organizationId: 1, configId: 1, createdAt: 1, _id: 1 }] } as const
const versions = { name: 'scoring_model_versions', indexes: [{ modelId: 1, versionNumber: -1 }] } as const

const versionKey = (modelId: string, versionNumber: number) => `${modelId}:${versionNumber}`

export const scoringModelsProjection = defineProjection({
  name: 'scoringModels',
  handles: ['ScoringModelCreated', 'ScoringModelRevised', 'ScoringModelActivated', 'ScoringModelDeactivated', 'DefaultScoringModelChanged'],
  collections: [models, versions],
  async project(store, event, position) {
    const modelDocs = store.collection<ScoringModelDoc>(models)
    const versionDocs = store.collection<ScoringModelVersionDoc>(versions)
    switch (event.type) {
      case 'ScoringModelCreated':
      case 'ScoringModelRevised': {
        const { modelId, organizationId, configId, versionNumber, version, validFrom, definition } = event.data
        const createdAt = event.data.createdAt
        await applyAt(versionDocs, versionKey(modelId, versionNumber), position, () => ({
          _id: versionKey(modelId, versionNumber), modelId, organizationId, configId, versionNumber, version, validFrom, createdAt, definition,
        }))
        const summary = { versionNumber, version, validFrom, createdAt }
        if (event.type === 'ScoringModelCreated') {
          return applyAt(modelDocs, modelId, position, () => ({
            _id: modelId, organizationId, configId, ...definition, version, versionNumber, validFrom, isActive: event.data.isActive, isDefault: false,
            createdAt, updatedAt: createdAt, versions: [summary],
          }))
        }
        return updateAt(modelDocs, modelId, position, (doc) => ({
          ...doc, ...definition, version, versionNumber, validFrom, updatedAt: createdAt, versions: [...doc.versions, summary],
        }))
      }
      case 'ScoringModelActivated':
      case 'ScoringModelDeactivated':
        return updateAt(modelDocs, event.data.modelId, position, (doc) => ({
          ...doc, isActive: event.type === 'ScoringModelActivated', updatedAt: event.data.at,
        }))
      case 'DefaultScoringModelChanged': {
        const { modelId, previousModelId, at } = event.data
        if (previousModelId !== null) await updateAt(modelDocs, previousModelId, position, (doc) => ({ ...doc, isDefault: false, updatedAt: at }))
        if (modelId !== null) await updateAt(modelDocs, modelId, position, (doc) => ({ ...doc, isDefault: true, updatedAt: at }))
        return
      }
      default: {
        const _never: never = event
        return _never
      }
    }
  },
})

export interface ScoringModelListQuery {
  organizationId: string
  configId: string
  isActive?: boolean
  isDefault?: boolean
  category?: string
  offset: number
  limit: number
}

export const scoringModelQueries = (store: ReadStore) => {
  const modelDocs = store.collection<ScoringModelDoc>(models)
  const versionDocs = store.collection<ScoringModelVersionDoc>(versions)
  const versionInForce = async (modelId: string, at: string) =>
    (await versionDocs.find({ modelId, validFrom: { $lte: at } }, { sort: { versionNumber: -1 }, limit: 1 }))[0] ?? null
  return {
    /** A model of this organization's configuration, or null (also for another organization's). */
    get: async (organizationId: string, configId: string, id: string) => {
      const doc = await modelDocs.get(id)
      return doc !== null && doc.organizationId === organizationId && doc.configId === configId ? doc : null
    },
    list: async (query: ScoringModelListQuery) => {
      const filter: Filter = { organizationId: query.organizationId, configId: query.configId }
      if (query.isActive !== undefined) filter['isActive'] = query.isActive
      if (query.isDefault !== undefined) filter['isDefault'] = query.isDefault
      if (query.category !== undefined) filter['category'] = query.category
      const total = await modelDocs.count(filter)
      const items = query.offset >= total ? [] : await modelDocs.find(filter, { sort: { createdAt: 1, _id: 1 }, skip: query.offset, limit: query.limit })
      return { items, total }
    },
    /** A version by its label. */
    version: async (modelId: string, version: string) => versionDocs.findOne({ modelId, version }),
    /** The latest version (by creation) whose validFrom is at or before `at`: later versions supersede earlier ones once they take effect. */
    versionInForce,
    /** The configuration's default model, when it is active and has a version in force at `at`. */
    defaultInForce: async (configId: string, at: string) => {
      const model = await modelDocs.findOne({ configId, isDefault: true, isActive: true })
      if (model === null) return null
      const version = await versionInForce(model._id, at)
      return version === null ? null : { model, version }
    },
  }
}

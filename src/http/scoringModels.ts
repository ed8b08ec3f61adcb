import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { Type, type Static, type TSchema } from 'typebox'
import { profileAggregate } from '../commands/profile.js'
import { createScoringModelOnce, keyedScoringModelId, scoringConfigurationAggregate, scoringModelRequestHash } from '../commands/scoringConfiguration.js'
import { evaluateScoringModel } from '../commands/scoringEvaluation.js'
import { scoringFieldCatalogue, scoringFieldNames, scoringFieldsOfProfile, type ScoringFieldKind, type ScoringFieldValues } from '../commands/scoringFields.js'
import { scoringModelCategories } from '../commands/scoringModelRules.js'
import type { ScoringModelDefinition } from '../events/scoringModel.js'
import { canViewProfile } from '../projections/profiles.js'
import type { ScoringModelDoc, ScoringModelVersionDoc } from '../projections/scoringModels.js'
import type { Services } from '../services.js'
import { baseUrl } from '../shared/config.js'
import { AppError, invalidFields, notFound } from '../shared/errors.js'
import { newId } from '../shared/ids.js'
import { NON_NEGATIVE_DECIMAL_PATTERN } from '../shared/money.js'
import { commandContext, organizationOf, principalOf, type OrganizationContext } from './context.js'
import { ConfigOrganizationHeaders, failures, IdempotencyKeyHeader, NonBlankText, Pagination, pagination, PageQuery, Timestamp, Uuid } from './schemas.js'

/** Scores, penalties, bonuses and thresholds stay within ±10⁹, so a model's sums (at most 50 variables, 50 penalties, 50 bonuses) are exact and finite. */
const MAX_POINTS = 1_000_000_000
const Points = (minimum = -MAX_POINTS) => Type.Number({ minimum, maximum: MAX_POINTS })
const Range = Type.Object({ min: Type.Number(), max: Type.Number(), score: Points() }, { additionalProperties: false })
const Category = Type.Object({ value: Type.String({ minLength: 1, maxLength: 100 }), score: Points() }, { additionalProperties: false })
const VariableType = Type.Enum(['numeric', 'categorical', 'boolean'])
const Variable = Type.Object({
  field: Type.String({ enum: scoringFieldNames, description: 'a scoring field (see docs/scoring.md)' }),
  weight: Type.Number({ exclusiveMinimum: 0, maximum: 1, description: 'the weights of a model add up to 1' }),
  type: VariableType,
  ranges: Type.Optional(Type.Array(Range, { maxItems: 50, description: 'numeric: inclusive, non-overlapping ranges' })),
  categories: Type.Optional(Type.Array(Category, { maxItems: 100, description: 'categorical and boolean (values "true" and "false")' })),
}, { additionalProperties: false })
const Thresholds = Type.Object({ approve: Points(), review: Points(), reject: Points() }, {
  additionalProperties: false, description: 'reject <= review <= approve: approve from `approve` up, review from `review` up, reject below `review`',
})
const Condition = Type.String({ minLength: 1, maxLength: 500, description: 'CEL expression over scoring fields, e.g. `age < 21`' })
const Penalty = Type.Object({ condition: Condition, penalty: Points(0), description: Type.Optional(Type.String({ maxLength: 500 })) }, { additionalProperties: false })
const Bonus = Type.Object({ condition: Condition, bonus: Points(0), description: Type.Optional(Type.String({ maxLength: 500 })) }, { additionalProperties: false })
const Metadata = Type.Record(Type.String(), Type.String({ maxLength: 500 }), { maxProperties: 50 })

const ModelBody = Type.Object({
  name: NonBlankText({ maxLength: 200 }),
  description: Type.Optional(Type.String({ maxLength: 2000 })),
  version: NonBlankText({ maxLength: 50, description: 'label of this version, unique within the model' }),
  category: Type.Enum(scoringModelCategories),
  variables: Type.Array(Variable, { minItems: 1, maxItems: 50 }),
  thresholds: Thresholds,
  penalties: Type.Optional(Type.Array(Penalty, { maxItems: 50 })),
  bonuses: Type.Optional(Type.Array(Bonus, { maxItems: 50 })),
  isActive: Type.Optional(Type.Boolean({ description: 'default true' })),
  isDefault: Type.Optional(Type.Boolean({ description: 'default false; true clears the flag on the configuration\'s other models' })),
  validFrom: Type.Optional(Type.String({ format: 'date-time', description: 'when this version takes effect; default now' })),
  metadata: Type.Optional(Metadata),
}, { additionalProperties: false })

const summaryProperties = {
  ID: Uuid,
  name: Type.String(),
  version: Type.String(),
  category: Type.String(),
  configId: Uuid,
  entityId: Uuid,
  isActive: Type.Boolean(),
  isDefault: Type.Boolean(),
  createdAt: Timestamp,
  validFrom: Timestamp,
  accessUrl: Type.String({ description: 'address of the model under the organization/config/scoring-model path' }),
}
const ModelSummary = Type.Object(summaryProperties)
const ModelDetail = Type.Object({
  ...summaryProperties,
  description: Type.String(),
  versionNumber: Type.Integer({ description: '1 for the first version, then 2, 3…' }),
  updatedAt: Timestamp,
  variables: Type.Array(Variable),
  thresholds: Thresholds,
  penalties: Type.Array(Penalty),
  bonuses: Type.Array(Bonus),
  metadata: Metadata,
  versions: Type.Array(Type.Object({ versionNumber: Type.Integer(), version: Type.String(), validFrom: Timestamp, createdAt: Timestamp })),
})

const fieldSchemaOf: Record<ScoringFieldKind, () => TSchema> = {
  integer: () => Type.Integer({ minimum: 0, maximum: 10_000 }),
  money: () => Type.String({ pattern: NON_NEGATIVE_DECIMAL_PATTERN, maxLength: 40 }),
  string: () => Type.String({ maxLength: 200 }),
  boolean: () => Type.Boolean(),
}
/** The scoring fields as an evaluation request gives them, one property per catalogue entry. */
const FieldValues = Type.Unsafe<ScoringFieldValues>(Type.Object(
  Object.fromEntries(scoringFieldNames.map((name) => [name, Type.Optional(Type.Unsafe({
    ...fieldSchemaOf[scoringFieldCatalogue[name].kind](), description: scoringFieldCatalogue[name].description,
  }))])),
  { additionalProperties: false },
))
const FieldValue = Type.Union([Type.String(), Type.Number(), Type.Boolean()])
const Adjustment = Type.Object({ condition: Type.String(), description: Type.String(), amount: Type.Number(), applied: Type.Boolean(), error: Type.Union([Type.String(), Type.Null()]) })
const Evaluation = Type.Object({
  modelId: Uuid,
  version: Type.String(),
  versionNumber: Type.Integer(),
  profileId: Type.Union([Uuid, Type.Null()]),
  evaluatedAt: Timestamp,
  fields: Type.Record(Type.String(), FieldValue, { description: 'the field values the evaluation used' }),
  score: Type.Number(),
  decision: Type.Enum(['approve', 'review', 'reject']),
  baseScore: Type.Number({ description: 'Σ weight × score over the variables' }),
  totalPenalty: Type.Number(),
  totalBonus: Type.Number(),
  thresholds: Thresholds,
  variables: Type.Array(Type.Object({
    field: Type.String(),
    type: VariableType,
    weight: Type.Number(),
    value: Type.Union([FieldValue, Type.Null()]),
    matched: Type.Boolean(),
    matchedBy: Type.Union([Type.Object({ min: Type.Number(), max: Type.Number() }), Type.Object({ value: Type.String() }), Type.Null()]),
    score: Type.Number(),
    contribution: Type.Number(),
    reason: Type.Union([Type.String(), Type.Null()]),
  })),
  penalties: Type.Array(Adjustment),
  bonuses: Type.Array(Adjustment),
})

const Params = Type.Object({ entityid: Uuid, configid: Uuid })
const OneParams = Type.Object({ entityid: Uuid, configid: Uuid, id: Uuid })
const tags = ['Scoring models']

const definitionOf = (body: Static<typeof ModelBody>): ScoringModelDefinition => ({
  name: body.name,
  description: body.description ?? '',
  category: body.category,
  variables: body.variables.map((v) => ({ field: v.field, weight: v.weight, type: v.type, ranges: v.ranges ?? [], categories: v.categories ?? [] })),
  thresholds: body.thresholds,
  penalties: (body.penalties ?? []).map((p) => ({ condition: p.condition, penalty: p.penalty, description: p.description ?? '' })),
  bonuses: (body.bonuses ?? []).map((b) => ({ condition: b.condition, bonus: b.bonus, description: b.description ?? '' })),
  metadata: body.metadata ?? {},
})

/**
 * Scoring models of an organization's configuration. `Config-Organization-ID`
 * names the organization being configured (the legacy `Organization-ID` must be
 * sent too, but the former wins); the path's `entityid` must name the same one.
 */
export const scoringModelRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const { queries } = services

  /** The checked organization, after making sure path and header agree and `configid` is its configuration. */
  const configurationOf = (request: FastifyRequest, params: { entityid: string; configid: string }): OrganizationContext => {
    const organization = organizationOf(request)
    if (params.entityid !== organization.id) {
      throw new AppError('ORGANIZATION_MISMATCH', 'the path names another organization than Config-Organization-ID', {
        pathOrganizationId: params.entityid, headerOrganizationId: organization.id,
      })
    }
    if (params.configid !== organization.defaultConfigId) throw notFound('configuration', params.configid)
    return organization
  }

  const accessUrl = (doc: { organizationId: string; configId: string }, id: string) =>
    `${baseUrl(services.config)}/v1/organization/${doc.organizationId}/config/${doc.configId}/scoring-model/${id}`

  const summary = (doc: ScoringModelDoc) => ({
    ID: doc._id, name: doc.name, version: doc.version, category: doc.category, configId: doc.configId, entityId: doc.organizationId,
    isActive: doc.isActive, isDefault: doc.isDefault, createdAt: doc.createdAt, validFrom: doc.validFrom, accessUrl: accessUrl(doc, doc._id),
  })

  const detail = (doc: ScoringModelDoc, version?: ScoringModelVersionDoc) => {
    const definition = version?.definition ?? doc
    return {
      ...summary(doc),
      ...(version === undefined ? {} : { version: version.version, validFrom: version.validFrom }),
      name: definition.name, category: definition.category, description: definition.description,
      versionNumber: version?.versionNumber ?? doc.versionNumber, updatedAt: doc.updatedAt,
      variables: definition.variables, thresholds: definition.thresholds, penalties: definition.penalties, bonuses: definition.bonuses,
      metadata: definition.metadata, versions: doc.versions,
    }
  }

  const load = async (organization: OrganizationContext, configId: string, id: string) => {
    const doc = await queries.scoringModels.get(organization.id, configId, id)
    if (doc === null) throw notFound('scoring model', id)
    return doc
  }

  const validFromOf = (given: string | undefined) => (given === undefined ? services.clock.now() : new Date(given)).toISOString()

  app.post('/organization/:entityid/config/:configid/scoring-model', {
    config: { organization: 'config-header', permissions: ['WriteScoringModel'] },
    schema: {
      summary: 'Create a scoring model in a configuration',
      description: 'With an `Idempotency-Key` header the request can be sent again safely (a retry after a timeout, an import script run again): ' +
        'the first creates the model (201), the same request again (the body\'s keys in any order) answers 200 with the model as it is now, ' +
        'another request with the Key 409 IDEMPOTENCY_KEY_REUSED; concurrent duplicates create one model. Keys are per organization and kept ' +
        'for good. Without one, every request creates a model.',
      tags,
      params: Params,
      headers: Type.Object({ ...ConfigOrganizationHeaders.properties, 'idempotency-key': IdempotencyKeyHeader }, { additionalProperties: true }),
      body: ModelBody,
      response: {
        201: Type.Object({ message: Type.String(), data: ModelSummary }),
        200: Type.Object({ message: Type.String(), data: ModelSummary }, { description: 'the model this Idempotency-Key already created' }),
        ...failures(400, 401, 403, 404, 409),
      },
    },
  }, async (request, reply) => {
    const organization = configurationOf(request, request.params)
    const key = request.headers['idempotency-key']
    const modelId = key === undefined ? newId() : keyedScoringModelId(organization.id, key)
    const { version, isActive = true, isDefault = false, validFrom } = request.body
    const definition = definitionOf(request.body)
    const command = {
      type: 'CreateScoringModel' as const, configId: organization.defaultConfigId, organizationId: organization.id, modelId, version,
      definition, validFrom: validFromOf(validFrom), isActive, isDefault, now: services.clock.now().toISOString(),
    }
    let created = true
    if (key === undefined) {
      await services.execute(scoringConfigurationAggregate, organization.defaultConfigId, command, commandContext(request))
    } else {
      const requestHash = scoringModelRequestHash(definition, version, { isActive, isDefault }, validFrom === undefined ? null : new Date(validFrom).toISOString())
      const once = await createScoringModelOnce(services.commands, { ...command, idempotency: { key, requestHash } }, commandContext(request))
      await services.settle(once.position)
      created = once.created
    }
    const doc = await load(organization, organization.defaultConfigId, modelId)
    return reply.code(created ? 201 : 200).header('location', accessUrl(doc, modelId))
      .send({ message: created ? 'scoring model created' : 'scoring model already created with this Idempotency-Key', data: summary(doc) })
  })

  app.get('/organization/:entityid/config/:configid/scoring-model', {
    config: { organization: 'config-header', permissions: ['ReadScoringModel'] },
    schema: {
      summary: 'List the scoring models of a configuration',
      tags,
      params: Params,
      headers: ConfigOrganizationHeaders,
      querystring: Type.Object({
        ...PageQuery.properties,
        isActive: Type.Optional(Type.Boolean()),
        isDefault: Type.Optional(Type.Boolean()),
        category: Type.Optional(Type.Enum(scoringModelCategories)),
      }, { additionalProperties: false }),
      response: { 200: Type.Object({ message: Type.String(), data: Type.Array(ModelSummary), pagination: Pagination }), ...failures(400, 401, 403, 404) },
    },
  }, async (request) => {
    const organization = configurationOf(request, request.params)
    const { page, limit, isActive, isDefault, category } = request.query
    const { items, total } = await queries.scoringModels.list({
      organizationId: organization.id, configId: organization.defaultConfigId, offset: (page - 1) * limit, limit,
      ...(isActive === undefined ? {} : { isActive }), ...(isDefault === undefined ? {} : { isDefault }), ...(category === undefined ? {} : { category }),
    })
    return { message: 'scoring models', data: items.map(summary), pagination: pagination(page, limit, total) }
  })

  app.get('/organization/:entityid/config/:configid/scoring-model/:id', {
    config: { organization: 'config-header', permissions: ['ReadScoringModel'] },
    schema: {
      summary: 'One scoring model: its latest version, or the version named by `version`',
      tags,
      params: OneParams,
      headers: ConfigOrganizationHeaders,
      querystring: Type.Object({ version: Type.Optional(Type.String({ minLength: 1, maxLength: 50 })) }, { additionalProperties: false }),
      response: { 200: Type.Object({ message: Type.String(), data: ModelDetail }), ...failures(400, 401, 403, 404) },
    },
  }, async (request) => {
    const organization = configurationOf(request, request.params)
    const doc = await load(organization, request.params.configid, request.params.id)
    if (request.query.version === undefined) return { message: 'scoring model', data: detail(doc) }
    const version = await queries.scoringModels.version(doc._id, request.query.version)
    if (version === null) throw notFound('scoring model version', request.query.version)
    return { message: 'scoring model', data: detail(doc, version) }
  })

  app.put('/organization/:entityid/config/:configid/scoring-model/:id', {
    config: { organization: 'config-header', permissions: ['WriteScoringModel'] },
    schema: {
      summary: 'Create a new version of a scoring model',
      description: 'The body is a whole model, as on creation, with a `version` label the model has not used; the new version takes effect at `validFrom`. ' +
        'Earlier versions stay readable with `?version=`.',
      tags,
      params: OneParams,
      headers: ConfigOrganizationHeaders,
      body: ModelBody,
      response: { 200: Type.Object({ message: Type.String(), data: ModelSummary }), ...failures(400, 401, 403, 404, 409) },
    },
  }, async (request) => {
    const organization = configurationOf(request, request.params)
    await load(organization, request.params.configid, request.params.id)
    const { version, isActive, isDefault, validFrom } = request.body
    await services.execute(scoringConfigurationAggregate, organization.defaultConfigId, {
      type: 'ReviseScoringModel', modelId: request.params.id, version, definition: definitionOf(request.body), validFrom: validFromOf(validFrom),
      ...(isActive === undefined ? {} : { isActive }), ...(isDefault === undefined ? {} : { isDefault }), now: services.clock.now().toISOString(),
    }, commandContext(request))
    return { message: 'scoring model version created', data: summary(await load(organization, request.params.configid, request.params.id)) }
  })

  app.patch('/organization/:entityid/config/:configid/scoring-model/:id', {
    config: { organization: 'config-header', permissions: ['WriteScoringModel'] },
    schema: {
      summary: 'Activate, deactivate, or make a model the default (no new version)',
      tags,
      params: OneParams,
      headers: ConfigOrganizationHeaders,
      body: Type.Object({ isActive: Type.Optional(Type.Boolean()), isDefault: Type.Optional(Type.Boolean()) }, { additionalProperties: false, minProperties: 1 }),
      response: { 200: Type.Object({ message: Type.String(), data: ModelSummary }), ...failures(400, 401, 403, 404) },
    },
  }, async (request) => {
    const organization = configurationOf(request, request.params)
    await load(organization, request.params.configid, request.params.id)
    const { isActive, isDefault } = request.body
    await services.execute(scoringConfigurationAggregate, organization.defaultConfigId, {
      type: 'ChangeScoringModelStatus', modelId: request.params.id, now: services.clock.now().toISOString(),
      ...(isActive === undefined ? {} : { isActive }), ...(isDefault === undefined ? {} : { isDefault }),
    }, commandContext(request))
    return { message: 'scoring model updated', data: summary(await load(organization, request.params.configid, request.params.id)) }
  })

  app.post('/organization/:entityid/config/:configid/scoring-model/:id/evaluate', {
    // The answer shows the model's thresholds, the range each field matched and its conditions: reading the model's part.
    config: { organization: 'config-header', permissions: ['WriteAnalysis', 'ReadScoringModel'] },
    schema: {
      summary: 'Score a debtor with a model',
      description: 'Give `profileId` (a profile of the organization) or `fields` (scoring field values). Without `version`, the version in force now is used. ' +
        'Nothing is recorded: this is a what-if.',
      tags,
      params: OneParams,
      headers: ConfigOrganizationHeaders,
      body: Type.Object({
        profileId: Type.Optional(Uuid),
        fields: Type.Optional(FieldValues),
        version: Type.Optional(Type.String({ minLength: 1, maxLength: 50, description: 'a version label; default: the version in force now' })),
      }, { additionalProperties: false }),
      response: { 200: Type.Object({ message: Type.String(), data: Evaluation }), ...failures(400, 401, 403, 404, 409) },
    },
  }, async (request) => {
    const organization = configurationOf(request, request.params)
    const doc = await load(organization, request.params.configid, request.params.id)
    const { profileId, fields: given, version: label } = request.body
    if ((profileId === undefined) === (given === undefined)) {
      throw invalidFields([{ field: 'body', message: 'give exactly one of profileId and fields' }])
    }
    const now = services.clock.now()
    const version = label === undefined ? await queries.scoringModels.versionInForce(doc._id, now.toISOString()) : await queries.scoringModels.version(doc._id, label)
    if (version === null && label !== undefined) throw notFound('scoring model version', label)
    if (version === null) throw new AppError('SCORING_MODEL_NOT_IN_FORCE', 'no version of this model is in force yet; name one with `version`', { modelId: doc._id })
    let fields: ScoringFieldValues = given ?? {}
    if (profileId !== undefined) {
      // The answer shows the profile's income, age and employment: reading them is reading the profile.
      if (!organization.permissions.has('ReadProfile')) throw new AppError('FORBIDDEN', 'permission ReadProfile is required to score a profile', { permission: 'ReadProfile' })
      const { state: profile } = await services.commands.load(profileAggregate, profileId)
      const visible = profile.exists && profile.organizationId === organization.id && canViewProfile(profile, principalOf(request).id, organization.isAdministrator)
      if (!visible) throw notFound('profile', profileId)
      fields = scoringFieldsOfProfile(profile, now)
    }
    const result = evaluateScoringModel(version.definition, fields)
    return {
      message: 'scoring result',
      data: {
        modelId: doc._id, version: version.version, versionNumber: version.versionNumber, profileId: profileId ?? null,
        evaluatedAt: now.toISOString(), fields, ...result,
      },
    }
  })
}

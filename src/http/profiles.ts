import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyContextConfig, FastifyRequest } from 'fastify'
import { Type, type Static } from 'typebox'
import { createProfileOnce, keyedProfileId, profileAggregate, profileCopyRequestHash, profileRequestHash, type ProfileCommand } from '../commands/profile.js'
import type { LegalPerson, NaturalPerson, ProfileType } from '../events/profile.js'
import { canViewProfile, type ProfileDoc } from '../projections/profiles.js'
import { cityCatalogue } from '../reference/cities.js'
import type { Services } from '../services.js'
import { AppError, invalidFields, notFound } from '../shared/errors.js'
import { newId } from '../shared/ids.js'
import { commandContext, organizationOf, principalOf } from './context.js'
import { organizationAccess, requirePermissions } from './plugins/organization.js'
import { LegalInput, LegalPatch, NaturalInput, NaturalPatch, ProfileEnvelope, ProfileSchema } from './profileSchemas.js'
import { fullProfileView, parseExpand, profileView } from './profileViews.js'
import { ConfigOrganizationHeaders, failures, IdempotencyKeyHeader, ProseText, Uuid } from './schemas.js'

const IdParams = Type.Object({ id: Uuid })
const ExpandValue = Type.String({ pattern: '^(entity|natural|legal|city)(,(entity|natural|legal|city))*$' })

const typeNames: Record<1 | 2, ProfileType> = { 1: 'natural', 2: 'legal' }

const NaturalProfileBody = Type.Object({ type: Type.Literal('natural'), natural: NaturalInput }, { additionalProperties: false, title: 'natural' })
const LegalProfileBody = Type.Object({ type: Type.Literal('legal'), legal: LegalInput }, { additionalProperties: false, title: 'legal' })

/**
 * POST /profiles: a oneOf discriminated by `type`, as POST /exports' body, so a body is checked only against the
 * shape its type names (a bad natural field is reported alone, not beside the legal shape's `body.legal is
 * required`), and a missing or unknown type is one error on `body.type`.
 */
const CreateProfileBody = Type.Unsafe<Static<typeof NaturalProfileBody> | Static<typeof LegalProfileBody>>({
  type: 'object',
  oneOf: [NaturalProfileBody, LegalProfileBody],
  discriminator: { propertyName: 'type' },
  description: 'discriminated by `type`: `natural` with `natural`, or `legal` with `legal`',
})

const reads: FastifyContextConfig = { organization: 'config-header', permissions: ['ReadProfile'] }
const writes: FastifyContextConfig = { organization: 'config-header', permissions: ['WriteProfile'] }

/** A city id must name a city of GET /cities (null clears it on PATCH). */
const unknownCity = (type: ProfileType, person: { cityId?: string | null | undefined } | undefined): void => {
  const cityId = person?.cityId
  if (typeof cityId === 'string' && cityCatalogue().get(cityId) === null) {
    throw invalidFields([{ field: `body.${type}.cityId`, message: 'is not the id of a city of GET /cities' }])
  }
}

/**
 * Profiles of natural and legal persons. The owner (creator), the users it is
 * shared with and the organization's administrators see a profile; anyone else
 * gets 404. Changing data and files needs WriteProfile and sight of the
 * profile; activation and sharing are for the owner or an administrator.
 */
export const profileRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const { queries, clock } = services
  const now = () => clock.now().toISOString()

  /** The profile if the caller may see it; anything else is 404. */
  const visible = async (request: FastifyRequest, id: string): Promise<ProfileDoc> => {
    const organization = organizationOf(request)
    const doc = await queries.profiles.get(organization.id, id)
    if (doc === null || !canViewProfile(doc, principalOf(request).id, organization.isAdministrator)) throw notFound('profile', id)
    return doc
  }

  const ownedOrAdministered = async (request: FastifyRequest, id: string, action: string): Promise<ProfileDoc> => {
    const doc = await visible(request, id)
    if (doc.ownerId !== principalOf(request).id && !organizationOf(request).isAdministrator) {
      throw new AppError('FORBIDDEN', `only the profile's owner or an administrator may ${action} it`)
    }
    return doc
  }

  const respond = async (request: FastifyRequest, id: string, message: string) => {
    const organization = organizationOf(request)
    const doc = await queries.profiles.get(organization.id, id)
    if (doc === null) throw new AppError('INTERNAL', 'profile not visible after the write')
    return { message, data: fullProfileView(doc, await queries.organizations.get(organization.id), clock.now()) }
  }

  const run = (request: FastifyRequest, id: string, command: ProfileCommand) => services.execute(profileAggregate, id, command, commandContext(request))

  app.get('/profiles', {
    config: reads,
    schema: {
      summary: 'List the profiles the caller may view',
      description: 'Own profiles, plus those shared with the caller when `shared=true`; an administrator sees every profile of the organization. ' +
        'Newest first. `meta` counts the whole filtered result (all pages): `total` = `natural_count` + `legal_count`; ' +
        '`shared_count` is how many of them others shared with the caller.',
      tags: ['Profiles'],
      headers: ConfigOrganizationHeaders,
      querystring: Type.Object({
        expand: Type.Optional(Type.Array(ExpandValue, { description: 'related data to include: entity, natural, legal, city (repeat or comma-separate)' })),
        type: Type.Optional(Type.Union([Type.Literal(1), Type.Literal(2)], { description: '1 natural persons, 2 legal persons' })),
        status: Type.Optional(Type.Boolean({ description: 'true: active only; false: inactive only' })),
        shared: Type.Boolean({ default: false, description: 'true: also profiles shared with the caller' }),
        page: Type.Integer({ minimum: 1, default: 1 }),
        limit: Type.Integer({ minimum: 1, maximum: 100, default: 100 }),
      }, { additionalProperties: false }),
      response: {
        200: Type.Object({
          message: Type.Literal('profiles'),
          data: Type.Array(ProfileSchema),
          meta: Type.Object({
            total: Type.Integer(), natural_count: Type.Integer(), legal_count: Type.Integer(), shared_count: Type.Integer(),
            page: Type.Integer(), limit: Type.Integer(),
          }),
        }),
        ...failures(400, 401, 403),
      },
    },
  }, async (request) => {
    const organization = organizationOf(request)
    const { expand, type, status, shared, page, limit } = request.query
    const result = await queries.profiles.list({
      organizationId: organization.id, viewerId: principalOf(request).id, administrator: organization.isAdministrator, includeShared: shared,
      offset: (page - 1) * limit, limit,
      ...(type === undefined ? {} : { type: typeNames[type] }), ...(status === undefined ? {} : { active: status }),
    })
    const expansions = parseExpand(expand)
    const organizationDoc = expansions.has('entity') ? await queries.organizations.get(organization.id) : null
    const at = clock.now()
    return {
      message: 'profiles' as const,
      data: result.items.map((doc) => profileView(doc, expansions, organizationDoc, at)),
      meta: { total: result.total, natural_count: result.naturalCount, legal_count: result.legalCount, shared_count: result.sharedCount, page, limit },
    }
  })

  app.get('/profiles/:id', {
    config: reads,
    schema: {
      summary: 'One profile, fully expanded, with its files and shares',
      tags: ['Profiles'], headers: ConfigOrganizationHeaders, params: IdParams,
      response: { 200: ProfileEnvelope, ...failures(401, 403, 404) },
    },
  }, async (request) => {
    await visible(request, request.params.id)
    return respond(request, request.params.id, 'profile')
  })

  app.post('/profiles', {
    config: writes,
    schema: {
      summary: 'Create a profile (natural or legal person); the caller becomes its owner',
      description: 'With an `Idempotency-Key` header the request can be sent again safely (a retry after a timeout): the first creates the profile (201), ' +
        'the same request again (the same type and person, in any key order, amounts compared as amounts) answers 200 with that profile as it is now, ' +
        'and another request with the Key 409 IDEMPOTENCY_KEY_REUSED, as does the same request from a caller who does not see the profile; ' +
        'concurrent duplicates create one profile. Keys are per organization and kept for good.',
      tags: ['Profiles'],
      headers: Type.Object({
        ...ConfigOrganizationHeaders.properties,
        'idempotency-key': IdempotencyKeyHeader,
      }, { additionalProperties: true }),
      body: CreateProfileBody,
      response: { 201: ProfileEnvelope, 200: Type.Object(ProfileEnvelope.properties, { description: 'the profile this Idempotency-Key already created' }), ...failures(400, 401, 403, 409) },
    },
  }, async (request, reply) => {
    const { body } = request
    const organization = organizationOf(request)
    const principal = principalOf(request)
    const key = request.headers['idempotency-key']
    const natural: NaturalPerson | null = body.type === 'natural' ? body.natural : null
    const legal: LegalPerson | null = body.type === 'legal' ? body.legal : null
    unknownCity(body.type, natural ?? legal ?? undefined)
    const profileId = key === undefined ? newId() : keyedProfileId(organization.id, key)
    const command = {
      type: 'CreateProfile' as const, profileId, organizationId: organization.id, ownerId: principal.id,
      profileType: body.type, natural, legal, copiedFrom: null, now: now(),
    }
    if (key === undefined) {
      await run(request, profileId, command)
      return reply.code(201).send(await respond(request, profileId, 'profile created'))
    }
    const idempotency = { key, requestHash: profileRequestHash(body.type, body.type === 'natural' ? body.natural : body.legal) }
    const { created, position } = await createProfileOnce(services.commands, { ...command, idempotency },
      (state) => canViewProfile(state, principal.id, organization.isAdministrator), commandContext(request))
    await services.settle(position)
    return reply.code(created ? 201 : 200).send(await respond(request, profileId, 'profile created'))
  })

  app.patch('/profiles/:id', {
    config: writes,
    schema: {
      summary: 'Change some fields of a profile',
      description: 'Send `natural` (natural profiles) or `legal` (legal profiles) with the fields to change; fields not sent stay; ' +
        'a field sent as null is cleared (optional fields only: null on a required one is a 400). ' +
        'A nested `legalRepresentative` is replaced whole, or cleared with null.',
      tags: ['Profiles'], headers: ConfigOrganizationHeaders, params: IdParams,
      body: Type.Object({ natural: Type.Optional(NaturalPatch), legal: Type.Optional(LegalPatch) }, { additionalProperties: false, minProperties: 1 }),
      response: { 200: ProfileEnvelope, ...failures(400, 401, 403, 404) },
    },
  }, async (request) => {
    const doc = await visible(request, request.params.id)
    const { natural, legal } = request.body
    unknownCity(doc.type, doc.type === 'natural' ? natural : legal)
    await run(request, doc._id, {
      type: 'UpdateProfile', now: now(), ...(natural === undefined ? {} : { natural }), ...(legal === undefined ? {} : { legal }),
    })
    return respond(request, doc._id, 'profile updated')
  })

  app.post('/profiles/:id/deactivate', {
    config: writes,
    schema: {
      summary: 'Deactivate a profile (owner or administrator); no new credits are granted to an inactive debtor',
      tags: ['Profiles'], headers: ConfigOrganizationHeaders, params: IdParams,
      body: Type.Object({ reason: ProseText({ maxLength: 500 }) }, { additionalProperties: false }),
      response: { 200: ProfileEnvelope, ...failures(400, 401, 403, 404) },
    },
  }, async (request) => {
    const doc = await ownedOrAdministered(request, request.params.id, 'deactivate')
    await run(request, doc._id, { type: 'DeactivateProfile', reason: request.body.reason, now: now() })
    return respond(request, doc._id, 'profile deactivated')
  })

  app.post('/profiles/:id/activate', {
    config: writes,
    schema: {
      summary: 'Activate a profile again (owner or administrator)',
      tags: ['Profiles'], headers: ConfigOrganizationHeaders, params: IdParams,
      response: { 200: ProfileEnvelope, ...failures(401, 403, 404) },
    },
  }, async (request) => {
    const doc = await ownedOrAdministered(request, request.params.id, 'activate')
    await run(request, doc._id, { type: 'ActivateProfile', now: now() })
    return respond(request, doc._id, 'profile activated')
  })

  app.post('/profiles/:id/shares', {
    config: writes,
    schema: {
      summary: 'Share a profile with another user of the organization (owner or administrator)',
      description: 'The user then sees the profile in GET /profiles?shared=true, and may change it if they hold WriteProfile.',
      tags: ['Profiles'], headers: ConfigOrganizationHeaders, params: IdParams,
      body: Type.Object({ userId: Uuid }, { additionalProperties: false }),
      response: { 201: ProfileEnvelope, ...failures(400, 401, 403, 404) },
    },
  }, async (request, reply) => {
    const doc = await ownedOrAdministered(request, request.params.id, 'share')
    const { userId } = request.body
    const [user, membership] = await Promise.all([queries.principals.user(userId), queries.memberships.of(userId, doc.organizationId)])
    if (user === null || !user.active || membership === null) {
      throw invalidFields([{ field: 'body.userId', message: 'is not an active user of this organization' }])
    }
    await run(request, doc._id, { type: 'ShareProfile', userId, sharedBy: principalOf(request).id, now: now() })
    return reply.code(201).send(await respond(request, doc._id, 'profile shared'))
  })

  app.delete('/profiles/:id/shares/:userId', {
    config: writes,
    schema: {
      summary: 'Stop sharing a profile with a user (owner or administrator)',
      tags: ['Profiles'], headers: ConfigOrganizationHeaders, params: Type.Object({ id: Uuid, userId: Uuid }),
      response: { 200: ProfileEnvelope, ...failures(401, 403, 404) },
    },
  }, async (request) => {
    const doc = await ownedOrAdministered(request, request.params.id, 'unshare')
    if (!doc.sharedWith.includes(request.params.userId)) throw notFound('share', request.params.userId)
    await run(request, doc._id, { type: 'UnshareProfile', userId: request.params.userId, now: now() })
    return respond(request, doc._id, 'profile unshared')
  })

  app.post('/profiles/:id/copy', {
    config: reads,
    schema: {
      summary: 'Copy a profile, usually into another organization',
      description: 'Makes an independent profile with `isCopy: true`, owned by the caller, in `organizationId` (default: the same organization), ' +
        'carrying the person data and the current files of the source. The caller must see the source and hold WriteProfile in the target. ' +
        'An inactive profile is not copied (409 NOT_ACTIVE): a copy would be an active profile of the same person, ready for credit. ' +
        'With an `Idempotency-Key` header (a Key of the target organization, as for POST /profiles) the copy can be asked again safely: ' +
        'the same source copied again with the Key answers 200 with that copy as it is now, anything else with the Key 409 IDEMPOTENCY_KEY_REUSED.',
      tags: ['Profiles'],
      headers: Type.Object({
        ...ConfigOrganizationHeaders.properties,
        'idempotency-key': IdempotencyKeyHeader,
      }, { additionalProperties: true }),
      params: IdParams,
      body: Type.Object({ organizationId: Type.Optional(Uuid) }, { additionalProperties: false }),
      response: {
        201: ProfileEnvelope, 200: Type.Object(ProfileEnvelope.properties, { description: 'the copy this Idempotency-Key already made' }),
        ...failures(400, 401, 403, 404, 409),
      },
    },
  }, async (request, reply) => {
    const source = await visible(request, request.params.id)
    const principal = principalOf(request)
    const target = await organizationAccess(queries, principal, request.body.organizationId ?? source.organizationId)
    requirePermissions(target, ['WriteProfile'])
    const key = request.headers['idempotency-key']
    const { state } = await services.commands.load(profileAggregate, source._id)
    const sourceActive = () => {
      if (!state.active) throw new AppError('NOT_ACTIVE', `profile ${source._id} is inactive: it is not copied until it is activated again`, { profileId: source._id })
    }
    const profileId = key === undefined ? newId() : keyedProfileId(target.id, key)
    const command = {
      type: 'CreateProfile' as const, profileId, organizationId: target.id, ownerId: principal.id, profileType: state.profileType,
      natural: state.natural, legal: state.legal, copiedFrom: { profileId: source._id, organizationId: source.organizationId },
      files: Object.values(state.fileRefs), now: now(),
    }
    const context = { ...commandContext(request), organizationId: target.id }
    let created = true
    if (key === undefined) {
      sourceActive()
      await services.execute(profileAggregate, profileId, command, context)
    } else {
      const once = await createProfileOnce(services.commands, { ...command, idempotency: { key, requestHash: profileCopyRequestHash(source._id) } },
        (copy) => canViewProfile(copy, principal.id, target.isAdministrator), context, sourceActive)
      await services.settle(once.position)
      created = once.created
    }
    const copy = await queries.profiles.get(target.id, profileId)
    if (copy === null) throw new AppError('INTERNAL', 'profile copy not visible after the write')
    return reply.code(created ? 201 : 200).send({ message: 'profile copied', data: fullProfileView(copy, await queries.organizations.get(target.id), clock.now()) })
  })
}

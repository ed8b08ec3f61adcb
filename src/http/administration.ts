import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { createClient, createOrganization, createOrganizationOnce, createUser } from '../commands/identity.js'
import { keyedOrganizationId, organizationAggregate, organizationRequestHash, type OrganizationCommand } from '../commands/organization.js'
import { enrolTotp } from '../identity/totp.js'
import { generateSecret, hashSecret, refuseWeakPassword } from '../identity/passwords.js'
import type { OrganizationDoc } from '../projections/organizations.js'
import type { Services } from '../services.js'
import { AppError } from '../shared/errors.js'
import { newId } from '../shared/ids.js'
import { allScopes, isScope } from '../shared/permissions.js'
import { commandContext, grantorOf, organizationOf, principalOf } from './context.js'
import { organizationAccess, requireAssignable, requireScopesHeld } from './plugins/organization.js'
import { failures, IdempotencyKeyHeader, NonBlankText, PageQuery, Pagination, pagination, ProseText, Timestamp, Uuid } from './schemas.js'

const Organization = Type.Object({
  id: Uuid,
  name: Type.String(),
  defaultConfigId: Type.String({ format: 'uuid', description: 'the organization\'s default configuration (configid / entityConfigID)' }),
  active: Type.Boolean({ description: 'false: every request acting in the organization is refused (403 ORGANIZATION_INACTIVE)' }),
  deactivationReason: Type.Union([Type.String(), Type.Null()], { description: 'why it was deactivated, shown to the platform administrator only; null while active' }),
  deactivatedAt: Type.Union([Timestamp, Type.Null()]),
  createdAt: Timestamp,
  updatedAt: Timestamp,
})

/** The reason is the platform administrator's note: members learn that their organization is inactive, and when, not why. */
const organizationView = (doc: OrganizationDoc, forPlatformAdministrator = true) => ({
  id: doc._id, name: doc.name, defaultConfigId: doc.defaultConfigId, active: doc.active,
  deactivationReason: forPlatformAdministrator ? doc.deactivationReason : null, deactivatedAt: doc.deactivatedAt, createdAt: doc.createdAt, updatedAt: doc.updatedAt,
})

const OrganizationAnswer = Type.Object({ status: Type.Literal('success'), data: Type.Object({ organization: Organization }) })
const OrganizationPath = Type.Object({ entityid: Uuid })

/** The name of an organization or an OAuth client. */
const Name = NonBlankText({ maxLength: 200 })

/** Organizations, their users and OAuth clients: what an operator needs to put the service to use. */
export const administrationRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const { queries, commands } = services

  /** The organization as projected once a write at `position` is visible (read-your-writes), as the platform administrator sees it. */
  const organizationAfter = async (organizationId: string, position: number) => {
    await services.settle(position)
    const doc = await queries.organizations.get(organizationId)
    if (doc === null) throw new AppError('INTERNAL', 'organization not visible after the write')
    return { status: 'success' as const, data: { organization: organizationView(doc) } }
  }

  app.post('/organizations', {
    config: { scopes: ['*'] },
    schema: {
      summary: 'Create an organization (with its default configuration and built-in role templates)',
      description: 'With an `Idempotency-Key` header the request can be sent again safely (a retry after a timeout): the first creates the ' +
        'organization (201), the same name again answers 200 with the organization as it is now (completing its built-in role templates if the ' +
        'first was cut off before them), another name with the Key 409 IDEMPOTENCY_KEY_REUSED; concurrent duplicates create one. Keys are the ' +
        'platform administrator\'s and kept for good. Without one, every request creates an organization.',
      tags: ['Administration'],
      headers: Type.Object({ 'idempotency-key': IdempotencyKeyHeader }, { additionalProperties: true }),
      body: Type.Object({ name: Name }, { additionalProperties: false }),
      response: {
        201: OrganizationAnswer, 200: Type.Object(OrganizationAnswer.properties, { description: 'the organization this Idempotency-Key already created' }),
        ...failures(400, 401, 403, 409),
      },
    },
  }, async (request, reply) => {
    const key = request.headers['idempotency-key']
    const organizationId = key === undefined ? newId() : keyedOrganizationId(key)
    const input = { organizationId, name: request.body.name, defaultConfigId: newId(), now: services.clock.now().toISOString() }
    const context = { ...commandContext(request), organizationId }
    if (key === undefined) {
      const created = await createOrganization(commands, input, context)
      return reply.code(201).send(await organizationAfter(organizationId, created.position))
    }
    const once = await createOrganizationOnce(commands, { ...input, idempotency: { key, requestHash: organizationRequestHash(input.name) } }, context)
    return reply.code(once.created ? 201 : 200).send(await organizationAfter(organizationId, once.position))
  })

  app.get('/organizations', {
    schema: {
      summary: 'Organizations the caller belongs to (every organization for scope *)',
      tags: ['Administration'],
      querystring: PageQuery,
      response: { 200: Type.Object({ status: Type.Literal('success'), data: Type.Array(Organization), pagination: Pagination }), ...failures(400, 401) },
    },
  }, async (request) => {
    const principal = principalOf(request)
    const { page, limit } = request.query
    const ids = principal.isPlatformAdmin ? undefined : await queries.memberships.organizationsOf(principal.id)
    const { items, total } = await queries.organizations.list({ offset: (page - 1) * limit, limit }, ids)
    return { status: 'success' as const, data: items.map((doc) => organizationView(doc, principal.isPlatformAdmin)), pagination: pagination(page, limit, total) }
  })

  app.get('/organizations/:entityid', {
    schema: {
      summary: 'One organization',
      description: 'A member of an inactive organization is refused (403 ORGANIZATION_INACTIVE); the platform administrator (scope `*`) sees it.',
      tags: ['Administration'],
      params: OrganizationPath,
      response: { 200: OrganizationAnswer, ...failures(401, 403, 404) },
    },
  }, async (request) => {
    const organizationId = request.params.entityid
    const principal = principalOf(request)
    if (!principal.isPlatformAdmin) await organizationAccess(queries, principal, organizationId)
    const doc = await queries.organizations.get(organizationId)
    if (doc === null) throw new AppError('NOT_FOUND', 'organization not found', { resource: 'organization' })
    return { status: 'success' as const, data: { organization: organizationView(doc) } }
  })

  /** A platform administrator's change of an organization, answered with the organization as projected after it. */
  const changeOrganization = async (request: FastifyRequest, organizationId: string, command: OrganizationCommand) => {
    const changed = await commands.execute(organizationAggregate, organizationId, command, { ...commandContext(request), organizationId })
    return organizationAfter(organizationId, changed.position)
  }

  app.patch('/organizations/:entityid', {
    config: { scopes: ['*'] },
    schema: {
      summary: 'Rename an organization',
      description: 'The same name again changes nothing. Inactive organizations can be renamed too.',
      tags: ['Administration'],
      params: OrganizationPath,
      body: Type.Object({ name: Name }, { additionalProperties: false }),
      response: { 200: OrganizationAnswer, ...failures(400, 401, 403, 404) },
    },
  }, (request) => changeOrganization(request, request.params.entityid, { type: 'RenameOrganization', name: request.body.name }))

  app.post('/organizations/:entityid/deactivate', {
    config: { scopes: ['*'] },
    schema: {
      summary: 'Deactivate an organization',
      description: 'From then on every request acting in it is refused with 403 ORGANIZATION_INACTIVE, and no user or client can be added to it; ' +
        'nothing is deleted, sign-ins stay valid, and what the service does on its own goes on (export jobs under way, webhook sends of recorded events, ' +
        'the scheduled jobs: arrears, expiries). ' +
        'The reason is kept in the event log and shown as `deactivationReason`. Deactivating an inactive organization changes nothing.',
      tags: ['Administration'],
      params: OrganizationPath,
      body: Type.Object({ reason: ProseText({ maxLength: 500, description: 'why' }) }, { additionalProperties: false }),
      response: { 200: OrganizationAnswer, ...failures(400, 401, 403, 404) },
    },
  }, (request) => changeOrganization(request, request.params.entityid, { type: 'DeactivateOrganization', reason: request.body.reason }))

  app.post('/organizations/:entityid/activate', {
    config: { scopes: ['*'] },
    schema: {
      summary: 'Activate an organization again',
      description: 'Its members act in it again as before, with the roles they held. Activating an active organization changes nothing.',
      tags: ['Administration'],
      params: OrganizationPath,
      response: { 200: OrganizationAnswer, ...failures(401, 403, 404) },
    },
  }, (request) => changeOrganization(request, request.params.entityid, { type: 'ActivateOrganization' }))

  app.post('/organization/:entityid/users', {
    config: { organization: 'path', permissions: ['ManageMembers'] },
    schema: {
      summary: 'Create a user in the organization',
      description: 'With `totp: true` the user is enrolled in TOTP (RFC 6238); the otpauth URI and secret are returned this once only, ' +
        'and the password grant then answers mfa_required. Unless an administrator, the caller must hold every permission of the role template (403 FORBIDDEN).',
      tags: ['Administration'],
      params: Type.Object({ entityid: Uuid }),
      body: Type.Object({
        username: Type.String({ minLength: 3, maxLength: 100, pattern: '^[A-Za-z0-9._@+-]+$' }),
        password: Type.String({ minLength: 8, maxLength: 200 }),
        roleTemplateId: Uuid,
        totp: Type.Optional(Type.Boolean({ default: false })),
      }, { additionalProperties: false }),
      response: {
        201: Type.Object({
          status: Type.Literal('success'),
          data: Type.Object({
            user: Type.Object({ id: Uuid, username: Type.String(), organizationId: Uuid, roleTemplateId: Uuid, totpEnrolled: Type.Boolean(), createdAt: Timestamp }),
            totp: Type.Optional(Type.Object({ uri: Type.String({ description: 'otpauth:// URI, shown once' }), secret: Type.String({ description: 'base32 secret, shown once' }) })),
          }),
        }),
        ...failures(400, 401, 403, 404, 409),
      },
    },
  }, async (request, reply) => {
    const { username, password, roleTemplateId, totp } = request.body
    refuseWeakPassword(password, username, 'body.password')
    const organizationId = request.params.entityid
    await requireAssignable(queries, principalOf(request), organizationOf(request), roleTemplateId)
    const userId = newId()
    const enrolment = totp === true ? enrolTotp(username) : null
    const now = services.clock.now().toISOString()
    const created = await createUser(commands, {
      userId, username, passwordHash: await hashSecret(password), organizationId, roleTemplateId, grantor: grantorOf(request),
      encryptedTotpSecret: enrolment === null ? null : services.dataKey.encrypt(enrolment.secret), now,
    }, commandContext(request))
    await services.settle(created.position)
    return reply.code(201).send({
      status: 'success',
      data: {
        user: { id: userId, username, organizationId, roleTemplateId, totpEnrolled: enrolment !== null, createdAt: now },
        ...(enrolment === null ? {} : { totp: enrolment }),
      },
    })
  })

  app.post('/oauth/clients', {
    config: { organization: 'body', permissions: ['ManageMembers'], scopes: ['clients:write'] },
    schema: {
      summary: 'Register an OAuth client in an organization',
      description: 'The secret is returned this once only. A caller may grant only scopes it holds itself, and (unless an administrator) ' +
        'only a role template whose permissions it holds (403 FORBIDDEN).',
      tags: ['Administration'],
      body: Type.Object({
        name: Name,
        scopes: Type.Array(Type.String(), { uniqueItems: true, description: `from: ${allScopes.join(' ')}` }),
        organizationId: Uuid,
        roleTemplateId: Uuid,
      }, { additionalProperties: false }),
      response: {
        201: Type.Object({
          status: Type.Literal('success'),
          data: Type.Object({
            client: Type.Object({
              client_id: Type.String(), client_secret: Type.String({ description: 'shown once' }), name: Type.String(),
              scopes: Type.Array(Type.String()), organizationId: Uuid, roleTemplateId: Uuid, createdAt: Timestamp,
            }),
          }),
        }),
        ...failures(400, 401, 403, 404, 409),
      },
    },
  }, async (request, reply) => {
    const principal = principalOf(request)
    const { name, scopes, organizationId, roleTemplateId } = request.body
    const unknown = scopes.filter((s) => !isScope(s))
    if (unknown.length > 0) {
      throw new AppError('VALIDATION_ERROR', `unknown scope(s): ${unknown.join(' ')}`, { errors: unknown.map((s) => ({ field: 'body.scopes', message: `unknown scope ${s}` })) })
    }
    requireScopesHeld(principal, scopes, 'cannot grant scopes the caller lacks')
    await requireAssignable(queries, principal, organizationOf(request), roleTemplateId)
    const clientId = newId()
    const secret = generateSecret()
    const now = services.clock.now().toISOString()
    const created = await createClient(commands, {
      clientId, name, secretHash: await hashSecret(secret), scopes, organizationId, roleTemplateId, now, grantor: grantorOf(request),
    }, commandContext(request))
    await services.settle(created.position)
    return reply.code(201).send({
      status: 'success',
      data: { client: { client_id: clientId, client_secret: secret, name, scopes, organizationId, roleTemplateId, createdAt: now } },
    })
  })
}

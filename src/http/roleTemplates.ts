import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { createRoleTemplateOnce, keyedRoleTemplateId, roleTemplateAggregate, roleTemplateRequestHash } from '../commands/roleTemplate.js'
import type { RoleTemplateDoc } from '../projections/roleTemplates.js'
import type { Services } from '../services.js'
import { AppError, notFound } from '../shared/errors.js'
import { newId } from '../shared/ids.js'
import { allPermissions } from '../shared/permissions.js'
import { commandContext, grantorOf, organizationOf, principalOf } from './context.js'
import { requireGrantable } from './plugins/organization.js'
import { failures, IdempotencyKeyHeader, NonBlankText, Pagination, pagination, Timestamp, Uuid } from './schemas.js'

const RoleTemplate = Type.Object({
  id: Uuid,
  name: Type.String(),
  description: Type.String(),
  permissions: Type.Array(Type.String()),
  is_default: Type.Boolean(),
  usage_count: Type.Integer({ description: 'memberships using the template' }),
  created_at: Timestamp,
  updated_at: Timestamp,
})

const view = (doc: RoleTemplateDoc) => ({
  id: doc._id, name: doc.name, description: doc.description, permissions: doc.permissions, is_default: doc.isDefault,
  usage_count: doc.usageCount, created_at: doc.createdAt, updated_at: doc.updatedAt,
})

const Permissions = Type.Array(Type.String({ enum: allPermissions }), { uniqueItems: true, description: 'names from the permission catalogue' })
const Params = Type.Object({ entityid: Uuid })
const OneParams = Type.Object({ entityid: Uuid, id: Uuid })
const One = Type.Object({ status: Type.Literal('success'), data: RoleTemplate })

/** Role templates: named permission sets of an organization. */
export const roleTemplateRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const { queries } = services

  const load = async (organizationId: string, id: string) => {
    const doc = await queries.roleTemplates.get(organizationId, id)
    if (doc === null) throw notFound('role template', id)
    return doc
  }

  app.get('/organization/:entityid/role-template', {
    config: { organization: 'path', permissions: ['ReadRoleTemplate'] },
    schema: {
      summary: 'List the role templates of an organization',
      tags: ['Role templates'],
      params: Params,
      querystring: Type.Object({
        page: Type.Integer({ minimum: 1, default: 1 }),
        limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
        search: Type.Optional(Type.String({ maxLength: 200, description: 'case-insensitive match on name or description' })),
        is_default: Type.Optional(Type.Boolean()),
      }, { additionalProperties: false }),
      response: { 200: Type.Object({ status: Type.Literal('success'), data: Type.Array(RoleTemplate), pagination: Pagination }), ...failures(400, 401, 403) },
    },
  }, async (request) => {
    const { page, limit, search, is_default: isDefault } = request.query
    const { items, total } = await queries.roleTemplates.list({
      organizationId: organizationOf(request).id, offset: (page - 1) * limit, limit,
      ...(search === undefined ? {} : { search }), ...(isDefault === undefined ? {} : { isDefault }),
    })
    return { status: 'success' as const, data: items.map(view), pagination: pagination(page, limit, total) }
  })

  app.get('/organization/:entityid/role-template/:id', {
    config: { organization: 'path', permissions: ['ReadRoleTemplate'] },
    schema: { summary: 'One role template', tags: ['Role templates'], params: OneParams, response: { 200: One, ...failures(401, 403, 404) } },
  }, async (request) => ({ status: 'success' as const, data: view(await load(organizationOf(request).id, request.params.id)) }))

  app.post('/organization/:entityid/role-template', {
    config: { organization: 'path', permissions: ['WriteRoleTemplate'] },
    schema: {
      summary: 'Create a role template',
      description: 'Unless an administrator, the caller may name only permissions it holds itself (403 FORBIDDEN). ' +
        'With an `Idempotency-Key` header the request can be sent again safely (a retry after a timeout): the first creates the template (201), ' +
        'the same request again (permissions in any order, defaults filled in) answers 200 with the template as it is now (404 once deleted), ' +
        'and another request with the Key 409 IDEMPOTENCY_KEY_REUSED; concurrent duplicates create one template. Keys are per organization ' +
        'and kept for good. Without one, every request creates a template.',
      tags: ['Role templates'],
      params: Params,
      headers: Type.Object({ 'idempotency-key': IdempotencyKeyHeader }, { additionalProperties: true }),
      body: Type.Object({
        name: NonBlankText({ maxLength: 100 }),
        description: Type.Optional(Type.String({ maxLength: 500, default: '' })),
        permissions: Permissions,
        is_default: Type.Optional(Type.Boolean({ default: false })),
      }, { additionalProperties: false }),
      response: {
        201: One, 200: Type.Object(One.properties, { description: 'the role template this Idempotency-Key already created' }), ...failures(400, 401, 403, 404, 409),
      },
    },
  }, async (request, reply) => {
    const organization = organizationOf(request)
    const organizationId = organization.id
    const key = request.headers['idempotency-key']
    const id = key === undefined ? newId() : keyedRoleTemplateId(organizationId, key)
    const { name, description = '', permissions, is_default: isDefault = false } = request.body
    requireGrantable(principalOf(request), organization, permissions)
    const command = {
      type: 'CreateRoleTemplate' as const, roleTemplateId: id, organizationId, name, description, permissions, isDefault, now: services.clock.now().toISOString(),
    }
    if (key === undefined) {
      await services.execute(roleTemplateAggregate, id, command, commandContext(request))
      return reply.code(201).send({ status: 'success', data: view(await load(organizationId, id)) })
    }
    const once = await createRoleTemplateOnce(services.commands, {
      ...command, idempotency: { key, requestHash: roleTemplateRequestHash({ name, description, permissions, isDefault }) },
    }, commandContext(request))
    await services.settle(once.position)
    const doc = await queries.roleTemplates.get(organizationId, id)
    if (doc === null) throw new AppError('NOT_FOUND', 'the role template this Idempotency-Key created has been deleted', { resource: 'role template' })
    return reply.code(once.created ? 201 : 200).send({ status: 'success', data: view(doc) })
  })

  app.put('/organization/:entityid/role-template/:id', {
    config: { organization: 'path', permissions: ['WriteRoleTemplate'] },
    schema: {
      summary: 'Update a role template (any subset of its fields)',
      description: 'Unless an administrator, the caller must hold every permission the template holds and is to hold (403 FORBIDDEN). ' +
        'Permissions are a set (their order changes nothing); a name must not be blank (400). The built-in Administrator holds every ' +
        'permission: taking one away answers 409 BUILT_IN_ROLE_TEMPLATE (`removed`), since each start would add it back.',
      tags: ['Role templates'],
      params: OneParams,
      body: Type.Object({
        name: Type.Optional(NonBlankText({ maxLength: 100 })),
        description: Type.Optional(Type.String({ maxLength: 500 })),
        permissions: Type.Optional(Permissions),
        is_default: Type.Optional(Type.Boolean()),
      }, { additionalProperties: false }),
      response: { 200: One, ...failures(400, 401, 403, 404, 409) },
    },
  }, async (request) => {
    const organization = organizationOf(request)
    const organizationId = organization.id
    const stored = await load(organizationId, request.params.id)
    const { name, description, permissions, is_default: isDefault } = request.body
    // The template as stored and the new set must lie within the caller's: no caller widens a template (its own
    // membership's included) past itself, nor edits one holding more than it does (stripping the Administrator's).
    requireGrantable(principalOf(request), organization, [...stored.permissions, ...(permissions ?? [])])
    await services.execute(roleTemplateAggregate, request.params.id, {
      type: 'UpdateRoleTemplate', grantor: grantorOf(request), now: services.clock.now().toISOString(),
      ...(name === undefined ? {} : { name }), ...(description === undefined ? {} : { description }),
      ...(permissions === undefined ? {} : { permissions }), ...(isDefault === undefined ? {} : { isDefault }),
    }, commandContext(request))
    return { status: 'success' as const, data: view(await load(organizationId, request.params.id)) }
  })

  app.delete('/organization/:entityid/role-template/:id', {
    config: { organization: 'path', permissions: ['WriteRoleTemplate'] },
    schema: {
      summary: 'Delete a role template that no membership uses',
      description: 'Unless an administrator, the caller must hold every permission the template holds (403 FORBIDDEN), as for an update.',
      tags: ['Role templates'],
      params: OneParams,
      response: { 204: Type.Null(), ...failures(401, 403, 404, 409) },
    },
  }, async (request, reply) => {
    const organization = organizationOf(request)
    const stored = await load(organization.id, request.params.id)
    // Deleting strips a template as surely as an edit does: the Administrator's is no one's to delete but an administrator's.
    requireGrantable(principalOf(request), organization, stored.permissions)
    const result = await services.execute(roleTemplateAggregate, request.params.id, {
      type: 'DeleteRoleTemplate', grantor: grantorOf(request), now: services.clock.now().toISOString(),
    }, commandContext(request))
    if (result.events.length === 0) throw new AppError('NOT_FOUND', 'role template not found')
    return reply.code(204).send(null)
  })
}

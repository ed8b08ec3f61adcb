import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest, FastifySchemaValidationError } from 'fastify'
import { Type, type TSchema } from 'typebox'
import { blobKinds } from '../exports/blobs.js'
import { exportBodySchemas, exportTypeInfo, exportTypes, PaymentFilters, type ExportType } from '../exports/catalogue.js'
import type { Services } from '../services.js'
import { AppError, invalidFields } from '../shared/errors.js'
import type { Permission } from '../shared/permissions.js'
import { systemContext } from '../processes/exportRunner.js'
import {
  acceptJsonBodiesOnly, createExport, estimateExport, listJobs, ListQuery, loadJobByFileId, sendBlob, sendInlineExport, sendJobFile,
  sourcesBody,
} from './exportHandlers.js'
import { Created, CreationHeaders, Estimate, FileResponse, JobList, Repeated, Sources } from './exports.js'
import { streamExportEvents } from './exportStream.js'
import { fieldErrorsOf } from './plugins/errors.js'
import { failures, OrganizationHeaders } from './schemas.js'

type SunsetGroup = 'exports' | 'reports'

interface LegacyRouteConfig {
  /** `GET /export/receivables`: how calls are counted. */
  route: string
  /** The canonical route that replaces it (the `Link` header). */
  successor: string
  group: SunsetGroup
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Marks a legacy export route: counted, deprecated, retired at its sunset. */
    legacy?: LegacyRouteConfig
  }
  interface FastifySchema {
    /** OpenAPI extension: the date a deprecated route stops answering. */
    'x-sunset'?: string
  }
}

export const sunsetOf = (services: Services, group: SunsetGroup): Date =>
  group === 'reports' ? services.config.exportsLegacyReportsSunset : services.config.exportsLegacySunset

/** Whether the caller may act in the organization it names (so its call can be counted against that organization). */
const memberOrganization = async (services: Services, request: FastifyRequest): Promise<string | null> => {
  const header = request.headers['organization-id']
  const principal = request.principal
  if (typeof header !== 'string' || principal === null) return null
  const organization = await services.queries.organizations.get(header)
  if (organization === null) return null
  if (principal.isPlatformAdmin) return organization._id
  return (await services.queries.memberships.of(principal.id, organization._id)) === null ? null : organization._id
}

const countCall = async (services: Services, request: FastifyRequest, legacy: LegacyRouteConfig, afterSunset: boolean): Promise<void> => {
  const organizationId = await memberOrganization(services, request)
  if (organizationId === null) return
  const result = await services.commands.appendRaw(`legacyExportUsage-${organizationId}`, [{
    type: 'LegacyExportRouteCalled',
    data: { organizationId, route: legacy.route, calledBy: request.principal?.id ?? null, afterSunset, calledAt: services.clock.now().toISOString() },
  }], 'any', { ...systemContext(organizationId, request.id), actorId: request.principal?.id ?? null })
  await services.settle(result.position)
}

const timestampQuery = (description: string) => Type.Optional(Type.String({ format: 'date-time', description }))

/** The canonical body's fields as query parameters (`filters` of payments as a JSON object in one parameter). */
const legacyQueryOf = (type: ExportType): TSchema => {
  const properties: Record<string, TSchema> = type.endsWith('-cutoff')
    ? { before: timestampQuery('the cut-off, not later than now (the default)') }
    : { after: timestampQuery('period start, inclusive'), before: timestampQuery('period end, exclusive') }
  if (type === 'csv-a') properties['typeFile'] = exportBodySchemas['csv-a'].properties.typeFile
  if (type === 'payments') {
    properties['filters'] = Type.Optional(Type.String({ description: `JSON object with the fields of the payments filters: ${Object.keys(PaymentFilters.properties).join(', ')}` }))
  }
  return Type.Object(properties, { additionalProperties: false })
}

/**
 * A legacy GET export's parameters are its body's fields moved to the query:
 * the schema's errors name them `query.*` (not fastify's `querystring.*`), as
 * the checks made on the body they become do.
 */
const queryFieldErrors = (issues: FastifySchemaValidationError[], part: string): AppError =>
  invalidFields(fieldErrorsOf(issues, part === 'querystring' ? 'query' : part), 'BIND_ERROR')

/** Legacy query parameters as a canonical body: the same validation, the same data set. */
const bodyFromQuery = (type: ExportType, query: unknown): Record<string, unknown> => {
  const fields: Record<string, unknown> = typeof query === 'object' && query !== null ? { ...query } : {}
  const filters = fields['filters']
  if (typeof filters === 'string') {
    try {
      fields['filters'] = JSON.parse(filters)
    } catch {
      throw invalidFields([{ field: 'query.filters', message: 'must be a JSON object' }], 'BIND_ERROR')
    }
  }
  return { ...fields, type }
}

const ReportsBody = Type.Object({
  ...exportBodySchemas.reports.properties,
  type: Type.Optional(Type.Literal('reports')),
}, { additionalProperties: false, description: 'the body of POST /exports with type reports (`type` may be left out)' })

const FileIdParams = Type.Object({ fileid: Type.String({ pattern: '^[A-Za-z0-9_-]{1,128}$', description: 'the file identifier of a done export' }) })

/**
 * The 28 routes of Exports API v1, kept until their sunset with the same
 * behaviour as their canonical successors: `Deprecation`, `Sunset` and `Link`
 * headers on every answer, 404 LEGACY_ROUTE_RETIRED from the sunset on, and
 * every call (before or after) counted per organization and route.
 */
export const legacyExportRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  acceptJsonBodiesOnly(app)

  // Before the body is parsed: a legacy call whose body does not parse is still counted, carries the headers, and is retired after the sunset.
  app.addHook('preParsing', async (request, reply) => {
    const legacy = request.routeOptions.config.legacy
    if (legacy === undefined) return
    const sunset = sunsetOf(services, legacy.group)
    const retired = services.clock.now() >= sunset
    await countCall(services, request, legacy, retired)
    if (retired) {
      throw new AppError('LEGACY_ROUTE_RETIRED', `${legacy.route} was retired on ${sunset.toUTCString()}; use ${legacy.successor}`, {
        sunset: sunset.toISOString(), successor: legacy.successor,
      })
    }
    reply.header('deprecation', 'true').header('sunset', sunset.toUTCString()).header('link', `<${legacy.successor}>; rel="successor-version"`)
  })

  const legacy = (method: 'GET' | 'POST', path: string, successor: string, group: SunsetGroup = 'exports') => ({
    config: { legacy: { route: `${method} ${path}`, successor, group } },
    schema: { deprecated: true, 'x-sunset': sunsetOf(services, group).toISOString().slice(0, 10), tags: ['Exports (legacy)'] },
  })

  const succeededBy = (reply: { header(name: string, value: string): unknown }, path: string) =>
    reply.header('link', `<${path}>; rel="successor-version"`)

  for (const type of exportTypes) {
    const path = exportTypeInfo[type].legacyPath
    if (path === null) continue
    const route = legacy('GET', path, '/v1/exports')
    app.get(path, {
      config: { ...route.config, organization: 'header', validationCode: 'BIND_ERROR' },
      schemaErrorFormatter: queryFieldErrors,
      schema: {
        ...route.schema,
        summary: `Export ${type} inline (legacy; use POST /v1/exports with type ${type})`,
        description: `Runs the ${type} data set synchronously and answers the file (200), byte for byte the file of the canonical job.`,
        headers: OrganizationHeaders,
        querystring: legacyQueryOf(type),
        produces: ['text/csv'],
        response: { 200: FileResponse, ...failures(400, 401, 403, 404, 501) },
      },
    }, async (request, reply) => sendInlineExport(services, request, reply, bodyFromQuery(type, request.query)))
  }

  for (const kind of blobKinds) {
    const route = legacy('GET', `/export/${kind}`, `/v1/exports/blobs/${kind}`)
    app.get(`/export/${kind}`, {
      config: { ...route.config, organization: 'header', permissions: ['ReadExport', 'ReadReceivables'] satisfies Permission[] },
      schema: {
        ...route.schema, summary: `Download the ${kind} file (legacy; use GET /v1/exports/blobs/${kind})`,
        headers: OrganizationHeaders, produces: ['text/csv'], response: { 200: FileResponse, ...failures(400, 401, 403, 404) },
      },
    }, async (request, reply) => sendBlob(services, request, reply, kind))
  }

  const list = legacy('GET', '/export/orders/receivables', '/v1/exports')
  app.get('/export/orders/receivables', {
    config: { ...list.config, organization: 'header' },
    schema: { ...list.schema, summary: 'Export jobs (legacy; use GET /v1/exports)', headers: OrganizationHeaders, querystring: ListQuery, response: { 200: JobList, ...failures(400, 401, 403) } },
  }, async (request) => listJobs(services, request, request.query))

  const sse = legacy('GET', '/export/orders/receivables/sse', '/v1/exports/sse')
  app.get('/export/orders/receivables/sse', {
    config: { ...sse.config, organization: 'header', permissions: ['ReadExport', 'ReadOrder'] },
    schema: {
      ...sse.schema, summary: 'Export job events (legacy; use GET /v1/exports/sse)',
      description: 'The same `export.updated` events as GET /v1/exports/sse, and the same cap: its streams count toward ' +
        'EXPORTS_SSE_MAX_STREAMS_PER_PRINCIPAL with the canonical route\'s (429 EXPORT_STREAM_LIMIT_REACHED beyond).',
      headers: OrganizationHeaders, produces: ['text/event-stream'], response: { 200: Type.Unsafe<unknown>({ type: 'string' }), ...failures(400, 401, 403, 429) },
    },
  }, async (request, reply) => streamExportEvents(services, request, reply))

  const fileRoute = (path: string, group: SunsetGroup) => {
    const route = legacy('GET', path, '/v1/exports', group)
    app.get(path, {
      config: { ...route.config, organization: 'header' },
      schema: {
        ...route.schema, summary: 'Download an export file by its file identifier (legacy; use GET /v1/exports/{orderID}/file)',
        headers: OrganizationHeaders, params: FileIdParams, produces: ['text/csv'], response: { 200: FileResponse, ...failures(400, 401, 403, 404, 409, 410) },
      },
    }, async (request, reply) => {
      const doc = await loadJobByFileId(services, request, request.params.fileid)
      succeededBy(reply, `/v1/exports/${doc._id}/file`)
      return sendJobFile(services, reply, doc)
    })
  }
  fileRoute('/export/orders/file/:fileid', 'exports')

  const create = legacy('POST', '/reports/export', '/v1/exports', 'reports')
  app.post('/reports/export', {
    config: { ...create.config, organization: 'header', validationCode: 'BIND_ERROR' },
    schema: {
      ...create.schema, summary: 'Create a reports export (legacy; use POST /v1/exports with type reports)',
      description: 'An `Idempotency-Key` header works as on POST /v1/exports: the same request again answers 200 with the same orderID.',
      headers: CreationHeaders, body: ReportsBody, response: { 202: Created, 200: Repeated, ...failures(400, 401, 403, 409, 429, 501) },
    },
  }, async (request, reply) => {
    const { orderId: orderID, created } = await createExport(services, request, { ...request.body, type: 'reports' }, request.headers['idempotency-key'])
    return reply.code(created ? 202 : 200).header('location', `/v1/exports/${orderID}`).send({ status: 'success', data: { orderID } })
  })

  const estimate = legacy('POST', '/reports/export/estimate', '/v1/exports?dryRun=true', 'reports')
  app.post('/reports/export/estimate', {
    config: { ...estimate.config, organization: 'header', validationCode: 'BIND_ERROR' },
    schema: {
      ...estimate.schema, summary: 'Estimate a reports export (legacy; use POST /v1/exports?dryRun=true)',
      headers: OrganizationHeaders, body: ReportsBody, response: { 200: Estimate, ...failures(400, 401, 403, 501) },
    },
  }, async (request, reply) => {
    return estimateExport(services, request, reply, { ...request.body, type: 'reports' })
  })

  const sources = legacy('GET', '/reports/export/available-sources', '/v1/exports/sources?type=reports', 'reports')
  app.get('/reports/export/available-sources', {
    config: { ...sources.config, organization: 'header', permissions: ['ExportReports'] },
    schema: {
      ...sources.schema, summary: 'Report sources (legacy; use GET /v1/exports/sources?type=reports)',
      headers: OrganizationHeaders, querystring: Type.Object({ type: Type.Optional(Type.Literal('reports')) }, { additionalProperties: false }),
      response: { 200: Sources, ...failures(400, 401, 403) },
    },
  }, async () => sourcesBody(services))

  fileRoute('/reports/export/download/:fileid', 'reports')
}

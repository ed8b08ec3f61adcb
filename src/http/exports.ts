import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { blobKinds } from '../exports/blobs.js'
import { ExportRequestBody } from '../exports/catalogue.js'
import type { Services } from '../services.js'
import {
  acceptJsonBodiesOnly, createExport, estimateExport, jobBody, listJobs, ListQuery, loadJob, sendBlob, sendJobFile, sourcesBody,
} from './exportHandlers.js'
import { streamExportEvents } from './exportStream.js'
import { ExportJob } from './exportViews.js'
import { failures, IdempotencyKeyHeader, OrganizationHeaders, Pagination, pagination, Timestamp, Uuid } from './schemas.js'

export const FileResponse = Type.Unsafe<unknown>({
  type: 'string', format: 'binary', description: 'the file: CSV, UTF-8 without BOM, RFC 4180 (CRLF line ends)',
})

export const Created = Type.Object({
  status: Type.Literal('success'),
  data: Type.Object({ orderID: Uuid }),
}, { description: 'the job is queued; poll Location (every 5 s) or follow GET /exports/sse' })

/** The answer to a request sent again under its `Idempotency-Key`: the job it already made. */
export const Repeated = Type.Object(Created.properties, { description: 'the job this Idempotency-Key already requested, whatever it has become; see Location' })

/** Headers of a job's creation: the organization, and an optional `Idempotency-Key`. */
export const CreationHeaders = Type.Object({ ...OrganizationHeaders.properties, 'idempotency-key': IdempotencyKeyHeader }, { additionalProperties: true })

export const Estimate = Type.Object({
  itemCount: Type.Integer({ description: 'rows the report would have' }),
  overflowed: Type.Boolean({ description: 'itemCount is above EXPORTS_REPORTS_MAX_ROWS: the export would fail' }),
  softWarn: Type.Boolean({ description: 'itemCount is above EXPORTS_REPORTS_SOFT_WARN_ROWS: the export works but is large' }),
})

export const Sources = Type.Object({
  status: Type.Literal('success'),
  data: Type.Object({
    type: Type.Literal('reports'),
    sources: Type.Array(Type.Object({
      name: Type.String(),
      description: Type.String(),
      columns: Type.Array(Type.Object({
        name: Type.String({ description: 'use as `source.column` in `columns` and `filters`' }),
        type: Type.String({ description: 'string | integer | decimal | date | timestamp | boolean' }),
        description: Type.String(),
      })),
    })),
  }),
})

export const JobList = Type.Object({ status: Type.Literal('success'), data: Type.Array(ExportJob), pagination: Pagination })

export const BlobParams = Type.Object({ type: Type.Union(blobKinds.map((kind) => Type.Literal(kind))) })

const tags = ['Exports']

/** The canonical export family: asynchronous jobs, their files, progress events, report sources and pre-built blobs. */
export const exportRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  acceptJsonBodiesOnly(app)

  app.post('/exports', {
    config: { organization: 'header', validationCode: 'BIND_ERROR' },
    schema: {
      summary: 'Create an export job, or estimate a reports export (dryRun=true)',
      description: 'Needs ReadExport plus the type\'s domain permission (ExportReports for reports). A body of the wrong shape, a non-JSON ' +
        'body or query parameters instead of a body answer 400 BIND_ERROR. Reports are capped per organization (429 with Retry-After). ' +
        'With an `Idempotency-Key` header the request can be sent again safely (a retry after a timeout): the first requests the job (202), ' +
        'the same request again (fields in any order) answers 200 with the same orderID whatever the job has become, without counting ' +
        'against the reports cap, and another request with the Key 409 IDEMPOTENCY_KEY_REUSED; concurrent duplicates request one job. ' +
        'Keys are per organization and kept for good. Without one, every request makes a job.',
      tags,
      headers: CreationHeaders,
      querystring: Type.Object({
        dryRun: Type.Optional(Type.Boolean({ default: false, description: 'reports only: count, create nothing (other types: 501)' })),
      }, { additionalProperties: false }),
      body: ExportRequestBody,
      response: { 200: Type.Union([Estimate, Repeated], { description: 'the estimate (dryRun=true), or the job this Idempotency-Key already requested' }), 202: Created, ...failures(400, 401, 403, 409, 429, 501) },
    },
  }, async (request, reply) => {
    if (request.query.dryRun === true) return reply.code(200).send(await estimateExport(services, request, reply, request.body))
    const { orderId: orderID, created } = await createExport(services, request, request.body, request.headers['idempotency-key'])
    return reply.code(created ? 202 : 200).header('location', `/v1/exports/${orderID}`).send({ status: 'success', data: { orderID } })
  })

  app.get('/exports', {
    config: { organization: 'header' },
    schema: {
      summary: 'The organization\'s export jobs, newest first',
      description: 'Only jobs of the types the caller may export are listed.',
      tags,
      headers: OrganizationHeaders,
      querystring: ListQuery,
      response: { 200: JobList, ...failures(400, 401, 403) },
    },
  }, async (request) => listJobs(services, request, request.query))

  app.get('/exports/sse', {
    config: { organization: 'header', permissions: ['ReadExport', 'ReadOrder'] },
    schema: {
      summary: 'Server-sent events of the organization\'s export jobs',
      description: 'Event `export.updated`, data `{id, status, type, progress, error?, expiredAt?}`, `id:` the event\'s global position. ' +
        'Only jobs of the types GET /v1/exports lists to the caller. ' +
        'Reconnect with Last-Event-ID to get the current state of every job changed since. A `: heartbeat` comment comes every ' +
        'EXPORTS_SSE_HEARTBEAT_MS. A user or client holding EXPORTS_SSE_MAX_STREAMS_PER_PRINCIPAL streams open on the instance (this ' +
        'route and its legacy twin together) is refused another: 429 EXPORT_STREAM_LIMIT_REACHED with Retry-After.',
      tags,
      headers: Type.Object({
        'organization-id': Type.String({ format: 'uuid' }),
        'last-event-id': Type.Optional(Type.String({ description: 'the last `id` received, to catch up after a reconnection' })),
      }, { additionalProperties: true }),
      produces: ['text/event-stream'],
      response: { 200: Type.Unsafe<unknown>({ type: 'string', description: 'text/event-stream' }), ...failures(400, 401, 403, 429) },
    },
  }, async (request, reply) => streamExportEvents(services, request, reply))

  app.get('/exports/sources', {
    config: { organization: 'header', permissions: ['ExportReports'] },
    schema: {
      summary: 'Sources and columns available to reports exports',
      tags,
      headers: OrganizationHeaders,
      querystring: Type.Object({ type: Type.Literal('reports') }, { additionalProperties: false }),
      response: { 200: Sources, ...failures(400, 401, 403) },
    },
  }, async () => sourcesBody(services))

  app.get('/exports/legacy-usage', {
    config: { scopes: ['*'] },
    schema: {
      summary: 'Calls of the legacy export routes, per organization and route (administrators)',
      description: 'Counted before and after each route\'s sunset, so operators see who still has to migrate.',
      tags,
      querystring: Type.Object({
        organizationId: Type.Optional(Uuid),
        page: Type.Integer({ minimum: 1, default: 1 }),
        limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
      }, { additionalProperties: false }),
      response: {
        200: Type.Object({
          status: Type.Literal('success'),
          data: Type.Array(Type.Object({
            organizationId: Uuid,
            route: Type.String({ description: 'method and legacy path, e.g. GET /export/receivables' }),
            calls: Type.Integer(),
            callsAfterSunset: Type.Integer({ description: 'calls answered 404 because the route had retired' }),
            firstCalledAt: Timestamp,
            lastCalledAt: Timestamp,
          })),
          pagination: Pagination,
        }),
        ...failures(400, 401, 403),
      },
    },
  }, async (request) => {
    const { page, limit, organizationId } = request.query
    const { items, total } = await services.queries.legacyExportUsage.list({
      offset: (page - 1) * limit, limit, ...(organizationId === undefined ? {} : { organizationId }),
    })
    return {
      status: 'success' as const,
      data: items.map(({ organizationId: org, route, calls, callsAfterSunset, firstCalledAt, lastCalledAt }) => ({
        organizationId: org, route, calls, callsAfterSunset, firstCalledAt, lastCalledAt,
      })),
      pagination: pagination(page, limit, total),
    }
  })

  app.get('/exports/blobs/:type', {
    config: { organization: 'header', permissions: ['ReadExport', 'ReadReceivables'] },
    schema: {
      summary: 'Download a pre-built file: logs, daily or monthly',
      description: 'Streams the organization\'s latest file of the kind; 404 until the first one is produced (see docs/exports.md).',
      tags,
      headers: OrganizationHeaders,
      params: BlobParams,
      produces: ['text/csv'],
      response: { 200: FileResponse, ...failures(400, 401, 403, 404) },
    },
  }, async (request, reply) => sendBlob(services, request, reply, request.params.type))

  app.get('/exports/:orderID', {
    config: { organization: 'header' },
    schema: {
      summary: 'An export job\'s status',
      description: 'Poll until status is done or failed (final). A failed job carries `error`; an expired file `expiredAt`.',
      tags,
      headers: OrganizationHeaders,
      params: Type.Object({ orderID: Uuid }),
      response: { 200: Type.Object({ status: Type.Literal('success'), data: ExportJob }), ...failures(400, 401, 403, 404) },
    },
  }, async (request) => jobBody(services, await loadJob(services, request, request.params.orderID)))

  app.get('/exports/:id/file', {
    config: { organization: 'header' },
    schema: {
      summary: 'Download the file of a done export job',
      description: '`id` is the orderID, never a file identifier (that answers 404). 409 while the job is not done; 410 with ' +
        '`expiredAt` once the file expired.',
      tags,
      headers: OrganizationHeaders,
      params: Type.Object({ id: Uuid }),
      produces: ['text/csv'],
      response: { 200: FileResponse, ...failures(400, 401, 403, 404, 409, 410) },
    },
  }, async (request, reply) => sendJobFile(services, reply, await loadJob(services, request, request.params.id)))
}

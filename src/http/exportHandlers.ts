import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { exportAggregate, exportRequestHash, keyedExportId, requestExportOnce } from '../commands/export.js'
import type { ExportParameters } from '../events/export.js'
import type { BlobKind } from '../exports/blobs.js'
import {
  contentDisposition, exportFileName, exportTypeInfo, exportTypes, isExportType, parametersOf, parseExportBody, type ExportBody, type ExportType,
} from '../exports/catalogue.js'
import { csvStream } from '../exports/csv.js'
import type { DataSet } from '../exports/dataSets.js'
import { reportColumnPermissions } from '../exports/reports/sources.js'
import type { ExportJobDoc, ExportJobStatus } from '../projections/exports.js'
import type { Services } from '../services.js'
import { AppError, invalidFields, isAppError, notFound, type FieldError } from '../shared/errors.js'
import { newId } from '../shared/ids.js'
import { money } from '../shared/money.js'
import type { Permission } from '../shared/permissions.js'
import { commandContext, organizationOf, type OrganizationContext } from './context.js'
import { expiredAtOf, exportJobView } from './exportViews.js'
import { depthLimitedJsonParser } from './jsonBody.js'
import { pagination } from './schemas.js'

/** The first permission of the type the caller lacks. */
const missingTypePermission = (organization: OrganizationContext, type: ExportType): Permission | undefined =>
  exportTypeInfo[type].permissions.find((permission) => !organization.permissions.has(permission))

export const mayUse = (organization: OrganizationContext, type: ExportType): boolean => missingTypePermission(organization, type) === undefined

/** The export types whose jobs the caller may see: GET /exports lists and the event stream sends only these. */
export const visibleTypes = (organization: OrganizationContext): ExportType[] => exportTypes.filter((type) => mayUse(organization, type))

const typeRefusal = (organization: OrganizationContext, type: ExportType): AppError | null => {
  const missing = missingTypePermission(organization, type)
  return missing === undefined ? null : new AppError('FORBIDDEN', `permission ${missing} is required for ${type} exports`, { permission: missing })
}

export const requireExportPermissions = (organization: OrganizationContext, type: ExportType): void => {
  const refusal = typeRefusal(organization, type)
  if (refusal !== null) throw refusal
}

/** The report columns and filter keys whose permission (`reportColumnPermissions`) the caller lacks, with that permission. */
const unreadableColumns = (organization: OrganizationContext, parameters: ExportParameters): Array<{ column: string; permission: Permission }> => {
  const unreadable: Array<{ column: string; permission: Permission }> = []
  for (const column of [...(parameters.columns ?? []), ...Object.keys(parameters.filters ?? {})]) {
    const permission = reportColumnPermissions.get(column)
    if (permission !== undefined && !organization.permissions.has(permission)) unreadable.push({ column, permission })
  }
  return unreadable
}

/**
 * Why the caller may not have a job of this type and parameters (create it,
 * read it, download its file), or null when it may: the type's permissions,
 * and for a report those of `reportColumnPermissions` for its columns and
 * filters, since what it names (debtors' identities, scores) is in the file
 * and the filter values.
 */
const jobRefusal = (organization: OrganizationContext, type: ExportType, parameters: ExportParameters): AppError | null => {
  const refusal = typeRefusal(organization, type)
  if (refusal !== null || type !== 'reports') return refusal
  const [first] = unreadableColumns(organization, parameters)
  return first === undefined ? null : new AppError('FORBIDDEN', `permission ${first.permission} is required for a report with ${first.column}`, { permission: first.permission })
}

const requireJobPermissions = (organization: OrganizationContext, type: ExportType, parameters: ExportParameters): void => {
  const refusal = jobRefusal(organization, type, parameters)
  if (refusal !== null) throw refusal
}

/**
 * A job as a caller may see it in a list: a report's filters on columns the
 * caller may not read are left out (their values name people or scores) and
 * named in `withheldFilters`; the job itself and its file answer 403.
 */
const listedParameters = (organization: OrganizationContext, doc: ExportJobDoc): ExportParameters & { withheldFilters?: string[] } => {
  if (doc.exportType !== 'reports' || doc.parameters.filters === undefined) return doc.parameters
  const withheld = new Set(unreadableColumns(organization, doc.parameters).map((u) => u.column))
  const keys = Object.keys(doc.parameters.filters).filter((key) => withheld.has(key))
  if (keys.length === 0) return doc.parameters
  const filters = Object.fromEntries(Object.entries(doc.parameters.filters).filter(([key]) => !withheld.has(key)))
  return { ...doc.parameters, filters, withheldFilters: keys }
}

const typeOfJob = (doc: ExportJobDoc): ExportType => {
  const type = exportTypes.find((t) => t === doc.exportType)
  if (type === undefined) throw new AppError('INTERNAL', `export ${doc._id} has an unknown type`)
  return type
}

const unavailable = (services: Services, type: ExportType) =>
  new AppError('EXPORT_TYPE_UNAVAILABLE', `export type ${type} is not available in this version of the service`, {
    type, availableTypes: services.exports.dataSets.types,
  })

/** Body errors answer BIND_ERROR, like the schema's own (POST /exports and its legacy twins). */
const bindError = (errors: FieldError[]) => invalidFields(errors, 'BIND_ERROR')

type Part = 'body' | 'query'

/** A period given at both ends must hold an instant: an empty one is a mistake the caller would only learn of from an empty file. */
const periodErrors = (body: ExportBody, part: Part): FieldError[] => {
  const after = 'after' in body ? body.after : undefined
  const before = 'before' in body ? body.before : undefined
  if (after === undefined || before === undefined || Date.parse(after) < Date.parse(before)) return []
  return [{ field: `${part}.after`, message: `must be earlier than ${part}.before (${before}): the period [after, before) would be empty` }]
}

/** An amount range given at both ends must hold an amount, as a period must hold an instant: both bounds are inclusive. */
const amountRangeErrors = (body: ExportBody, part: Part): FieldError[] => {
  const filters = body.type === 'payments' ? body.filters : undefined
  const min = filters?.minAmount
  const max = filters?.maxAmount
  if (min === undefined || max === undefined || money(min).lessThanOrEqualTo(max)) return []
  return [{ field: `${part}.filters.minAmount`, message: `must not be greater than ${part}.filters.maxAmount (${max}): no amount would match` }]
}

/**
 * A type showing credits as they stood at `before` would count arrears to a
 * day that has not come and fold in no payment the debtor may yet make: a
 * debtor with nothing due yet would be written months past due.
 */
const futureEndErrors = (body: ExportBody, part: Part, requestedAt: string): FieldError[] => {
  const before = 'before' in body ? body.before : undefined
  if (before === undefined || !exportTypeInfo[body.type].asItStoodAtBefore || Date.parse(before) <= Date.parse(requestedAt)) return []
  return [{
    field: `${part}.before`,
    message: `must not be later than the moment of the request (${requestedAt}): ${body.type} shows credits as they stood at ${part}.before`,
  }]
}

/**
 * A request's body as the runner will check its job's parameters
 * (parseExportBody, stricter in formats than the route's schema: no
 * `urn:uuid:` ids, no space in times), so nothing accepted fails there.
 */
const requireRunnerAccepts = (body: ExportBody): void => {
  const parsed = parseExportBody({ ...parametersOf(body), type: body.type })
  if ('errors' in parsed) throw bindError(parsed.errors)
}

/** Report columns and filter keys must name columns of the registered sources; the data set checks what else its body must satisfy. */
const checkBody = (services: Services, dataSet: DataSet, body: ExportBody, part: Part, requestedAt: string): void => {
  const errors: FieldError[] = [...periodErrors(body, part), ...amountRangeErrors(body, part), ...futureEndErrors(body, part, requestedAt)]
  if (body.type === 'reports') {
    body.columns.forEach((column, i) => {
      if (services.exports.sources.column(column) === null) errors.push({ field: `${part}.columns.${i}`, message: `unknown column ${column} (see GET /v1/exports/sources?type=reports)` })
    })
    for (const column of Object.keys(body.filters ?? {})) {
      if (services.exports.sources.column(column) === null) errors.push({ field: `${part}.filters.${column}`, message: `unknown column ${column}` })
    }
  }
  if (errors.length === 0) errors.push(...dataSet.check(body))
  if (errors.length > 0) throw bindError(errors)
}

const CONCURRENT_RETRY_SECONDS = 30

/** 429 when the organization has EXPORTS_REPORTS_MAX_CONCURRENT reports jobs open or EXPORTS_REPORTS_MAX_PER_HOUR in the last hour. */
const checkReportsCap = async (services: Services, organizationId: string): Promise<void> => {
  const { config } = services
  const now = services.clock.now().getTime()
  const { active, recentRequests } = await services.queries.exportJobs.reportsActivity(organizationId, new Date(now - 3_600_000).toISOString())
  let retryAfter: number | null = null
  let reason = ''
  if (active >= config.exportsReportsMaxConcurrent) {
    retryAfter = CONCURRENT_RETRY_SECONDS
    reason = `${active} reports exports are still queued or running (at most ${config.exportsReportsMaxConcurrent})`
  } else if (recentRequests.length >= config.exportsReportsMaxPerHour) {
    const leaving = recentRequests[recentRequests.length - config.exportsReportsMaxPerHour] ?? new Date(now).toISOString()
    retryAfter = Math.max(1, Math.ceil((new Date(leaving).getTime() + 3_600_000 - now) / 1000))
    reason = `${recentRequests.length} reports exports were requested in the last hour (at most ${config.exportsReportsMaxPerHour})`
  }
  if (retryAfter === null) return
  throw new AppError('EXPORT_RATE_LIMITED', `${reason}; retry in ${retryAfter} seconds`, {
    retryAfter,
    limits: { concurrent: config.exportsReportsMaxConcurrent, perHour: config.exportsReportsMaxPerHour },
  }, { 'retry-after': String(retryAfter) })
}

/**
 * POST /exports (and POST /reports/export): checks, then appends
 * ExportRequested; the runner does the rest. With an `Idempotency-Key` the
 * job the Key already names is answered (`created: false`) before the body's
 * checks against the clock and the reports cap, which a retry must not fail.
 */
export const createExport = async (
  services: Services, request: FastifyRequest, body: ExportBody, key?: string,
): Promise<{ orderId: string; created: boolean }> => {
  const organization = organizationOf(request)
  const parameters = parametersOf(body)
  requireJobPermissions(organization, body.type, parameters)
  const orderId = key === undefined ? newId() : keyedExportId(organization.id, key)
  const command = {
    type: 'RequestExport' as const, orderId, organizationId: organization.id, exportType: body.type, parameters,
    requestedBy: request.principal?.id ?? null, now: services.clock.now().toISOString(),
    ...(key === undefined ? {} : { idempotency: { key, requestHash: exportRequestHash(body.type, parameters) } }),
  }
  // Settled before the lock is left, so the next request's cap check counts this job.
  const append = () => services.execute(exportAggregate, orderId, command, commandContext(request))
  const requestJob = async () => {
    const dataSet = services.exports.dataSets.get(body.type)
    if (dataSet === undefined) throw unavailable(services, body.type)
    requireRunnerAccepts(body)
    checkBody(services, dataSet, body, 'body', command.now)
    if (body.type !== 'reports') return append()
    return services.exports.reportsAdmission.run(organization.id, async () => {
      if (command.idempotency !== undefined) {
        // A concurrent request with the same Key got in first: not counted against the cap again.
        const { state, position } = await services.commands.load(exportAggregate, orderId)
        if (state.status !== 'none') return { events: [], position }
      }
      await checkReportsCap(services, organization.id)
      return append()
    })
  }
  const { idempotency } = command
  const { position, created } = idempotency === undefined
    ? { ...(await requestJob()), created: true }
    : await requestExportOnce(services.commands, { ...command, idempotency },
      (job) => isExportType(job.exportType) && jobRefusal(organization, job.exportType, job.parameters) === null, requestJob)
  await services.settle(position)
  return { orderId, created }
}

/** POST /exports?dryRun=true (and POST /reports/export/estimate): counts a reports export without creating it. */
export const estimateExport = async (services: Services, request: FastifyRequest, reply: FastifyReply, body: ExportBody) => {
  const organization = organizationOf(request)
  requireJobPermissions(organization, body.type, parametersOf(body))
  if (body.type !== 'reports') {
    throw new AppError('DRY_RUN_NOT_SUPPORTED', `dry runs are supported for reports only, not ${body.type}`, { supportedTypes: ['reports'] })
  }
  const dataSet = services.exports.dataSets.get(body.type)
  if (dataSet === undefined || dataSet.count === null) throw unavailable(services, body.type)
  requireRunnerAccepts(body)
  const requestedAt = services.clock.now().toISOString()
  checkBody(services, dataSet, body, 'body', requestedAt)
  // A caller that goes away stops the count.
  const abort = new AbortController()
  const stop = () => abort.abort()
  reply.raw.once('close', stop)
  const itemCount = await dataSet.count(body, {
    organizationId: organization.id, queries: services.queries, requestedAt, signal: abort.signal,
  }).finally(() => reply.raw.off('close', stop))
  return {
    itemCount,
    overflowed: itemCount > services.config.exportsReportsMaxRows,
    softWarn: itemCount > services.config.exportsReportsSoftWarnRows,
  }
}

/** A job of the caller's organization that the caller may export, with every report column it names; another organization's is a 404. */
const visibleJob = (organization: OrganizationContext, doc: ExportJobDoc | null, what: string, id: string): ExportJobDoc => {
  if (doc === null) throw notFound(what, id)
  requireJobPermissions(organization, typeOfJob(doc), doc.parameters)
  return doc
}

export const loadJob = async (services: Services, request: FastifyRequest, orderId: string): Promise<ExportJobDoc> => {
  const organization = organizationOf(request)
  return visibleJob(organization, await services.queries.exportJobs.get(organization.id, orderId), 'export', orderId)
}

/** Legacy file routes: the job whose file has this identifier. */
export const loadJobByFileId = async (services: Services, request: FastifyRequest, fileId: string): Promise<ExportJobDoc> => {
  const organization = organizationOf(request)
  return visibleJob(organization, await services.queries.exportJobs.byFileId(organization.id, fileId), 'export file', fileId)
}

export const jobBody = (services: Services, doc: ExportJobDoc) => ({ status: 'success' as const, data: exportJobView(doc, services.clock.now()) })

/** Streams the file of a done job: 410 once expired, 409 while not done. */
export const sendJobFile = async (services: Services, reply: FastifyReply, doc: ExportJobDoc): Promise<FastifyReply> => {
  const expiredAt = expiredAtOf(doc, services.clock.now())
  if (expiredAt !== null) {
    throw new AppError('EXPORT_EXPIRED', `the file of export ${doc._id} expired at ${expiredAt}; create the export again`, { expiredAt })
  }
  if (doc.status !== 'done' || doc.file === null) {
    throw new AppError('EXPORT_NOT_READY', `export ${doc._id} is ${doc.status}; its file exists once it is done`, { status: doc.status })
  }
  const opened = await services.files.open(doc.file.fileId)
  if (opened === null) throw new AppError('INTERNAL', `the content of export ${doc._id} is missing`)
  return reply
    .header('content-type', doc.file.contentType)
    .header('content-disposition', contentDisposition(doc.file.fileName))
    .header('content-length', String(opened.file.size))
    .send(opened.stream)
}

export const sendBlob = async (services: Services, request: FastifyRequest, reply: FastifyReply, kind: BlobKind): Promise<FastifyReply> => {
  const organizationId = organizationOf(request).id
  const blob = await services.queries.exportBlobs.current(organizationId, kind)
  const opened = blob === null ? null : await services.files.open(blob.file.fileId)
  if (blob === null || opened === null) throw new AppError('NOT_FOUND', `no ${kind} file has been produced yet`, { resource: 'blob', kind })
  return reply
    .header('content-type', blob.file.contentType)
    .header('content-disposition', contentDisposition(blob.file.fileName))
    .header('content-length', String(opened.file.size))
    .send(opened.stream)
}

/** The batches of an iterator whose first batch was already read; ending this early ends the iterator (as `for await` would). */
async function* startingWith<T>(first: IteratorResult<T>, rest: AsyncIterator<T>): AsyncIterable<T> {
  try {
    if (first.done === true) return
    yield first.value
    for (let next = await rest.next(); next.done !== true; next = await rest.next()) yield next.value
  } finally {
    await rest.return?.()
  }
}

/**
 * A legacy GET export: the same data set and CSV writer as the job runner,
 * streamed inline, so the bytes, Content-Type and Content-Disposition equal
 * the canonical file's for the same request. The first batch is read before
 * the status is sent, so a data set that fails at once answers its error in
 * the envelope; one failing later can only cut the transfer short (the
 * chunked body never ends), which clients see as a failed download.
 */
export const sendInlineExport = async (services: Services, request: FastifyRequest, reply: FastifyReply, raw: Record<string, unknown>): Promise<FastifyReply> => {
  const parsed = parseExportBody(raw, 'query')
  if ('errors' in parsed) throw bindError(parsed.errors)
  const { body } = parsed
  const organization = organizationOf(request)
  requireJobPermissions(organization, body.type, parametersOf(body))
  const dataSet = services.exports.dataSets.get(body.type)
  if (dataSet === undefined) throw unavailable(services, body.type)
  const requestedAt = services.clock.now().toISOString()
  checkBody(services, dataSet, body, 'query', requestedAt)
  reply.header('content-type', dataSet.contentType).header('content-disposition', contentDisposition(exportFileName(body.type, requestedAt)))
  // HEAD (which fastify answers with this GET route) gets the headers without the export being run for a body nobody reads.
  if (request.method === 'HEAD') return reply.send()
  const abort = new AbortController()
  const opened = dataSet.open(body, { organizationId: organization.id, queries: services.queries, requestedAt, signal: abort.signal })
  const batches = opened.batches[Symbol.asyncIterator]()
  const first = await batches.next()
  const content = csvStream(opened.header, startingWith(first, batches))
  content.once('close', () => abort.abort())
  return reply.send(content)
}

export const ListQuery = Type.Object({
  page: Type.Integer({ minimum: 1, default: 1 }),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
  status: Type.Optional(Type.Union([Type.Literal('queued'), Type.Literal('running'), Type.Literal('done'), Type.Literal('failed')])),
  type: Type.Optional(Type.Union(exportTypes.map((t) => Type.Literal(t)))),
  requestedFrom: Type.Optional(Type.String({ format: 'date-time', description: 'jobs requested at or after (ISO 8601)' })),
  requestedTo: Type.Optional(Type.String({ format: 'date-time', description: 'jobs requested before (ISO 8601)' })),
}, { additionalProperties: false })

export interface ListParameters {
  page: number
  limit: number
  status?: ExportJobStatus
  type?: ExportType
  requestedFrom?: string
  requestedTo?: string
}

/** GET /exports: the organization's jobs of the types the caller may export, newest first. */
export const listJobs = async (services: Services, request: FastifyRequest, query: ListParameters) => {
  const organization = organizationOf(request)
  const visible = visibleTypes(organization)
  if (visible.length === 0) throw new AppError('FORBIDDEN', 'permission ReadExport or ExportReports is required', { permission: 'ReadExport' })
  if (query.type !== undefined) requireExportPermissions(organization, query.type)
  const { items, total } = await services.queries.exportJobs.list({
    organizationId: organization.id, types: query.type === undefined ? visible : [query.type], offset: (query.page - 1) * query.limit, limit: query.limit,
    ...(query.status === undefined ? {} : { status: query.status }),
    ...(query.requestedFrom === undefined ? {} : { requestedFrom: new Date(query.requestedFrom).toISOString() }),
    ...(query.requestedTo === undefined ? {} : { requestedTo: new Date(query.requestedTo).toISOString() }),
  })
  const now = services.clock.now()
  return {
    status: 'success' as const,
    data: items.map((doc) => exportJobView({ ...doc, parameters: listedParameters(organization, doc) }, now)),
    pagination: pagination(query.page, query.limit, total),
  }
}

export const sourcesBody = (services: Services) => ({
  status: 'success' as const,
  data: { type: 'reports' as const, sources: services.exports.sources.list().map((s) => ({ name: s.name, description: s.description, columns: [...s.columns] })) },
})

/**
 * Bodies of export routes are JSON only: any other content type, malformed
 * JSON or an empty JSON body answers 400 BIND_ERROR (the interface's
 * "body of the wrong shape"), not the generic 400/415.
 */
export const acceptJsonBodiesOnly = (app: FastifyInstance): void => {
  const parseJson = depthLimitedJsonParser(app)
  app.removeContentTypeParser(['application/json', 'text/plain'])
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    parseJson(request, body, (error, value) => {
      if (error === null) done(null, value)
      else done(bindError([{ field: 'body', message: isAppError(error) ? error.message : 'is not valid JSON' }]), undefined)
    })
  })
  app.addContentTypeParser('*', (_request, _payload, done) => {
    done(bindError([{ field: 'body', message: 'must be a JSON object sent with Content-Type: application/json' }]), undefined)
  })
}

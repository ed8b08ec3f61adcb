import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { AppError, isAppError, type FieldError } from '../../shared/errors.js'
import { patternMessages } from '../schemas.js'

interface AjvIssue {
  instancePath: string
  schemaPath?: string | undefined
  keyword: string
  params: Record<string, unknown>
  message?: string | undefined
}

/**
 * Without the two issues a value that may also be null adds to its own
 * (`must be null`, `must match a schema in anyOf`): `employerName: 5` on a
 * clearable field says `must be string` only.
 */
const withoutNullBranches = (issues: readonly AjvIssue[]): readonly AjvIssue[] => {
  const nullBranches = issues.filter((issue) => issue.keyword === 'type' && issue.params['type'] === 'null' && /\/anyOf\/\d+\/type$/.test(issue.schemaPath ?? ''))
  if (nullBranches.length === 0) return issues
  const unions = new Set(nullBranches.map((issue) => `${issue.instancePath} ${(issue.schemaPath ?? '').replace(/\/\d+\/type$/, '')}`))
  const dropped = new Set<AjvIssue>(nullBranches)
  for (const issue of issues) if (issue.keyword === 'anyOf' && unions.has(`${issue.instancePath} ${issue.schemaPath ?? ''}`)) dropped.add(issue)
  const kept = issues.filter((issue) => !dropped.has(issue))
  return kept.length === 0 ? issues : kept
}

/**
 * A union of literals (`Type.Union([Type.Literal('a'), …])`, a query's choice of numbers) fails with one
 * `must be equal to constant` per branch and `must match a schema in anyOf`: said instead once, as an enum
 * is, naming the values (`must be one of 1, 2`). A union with any other kind of branch keeps its issues.
 */
const withLiteralUnionsCollapsed = (issues: readonly AjvIssue[]): readonly AjvIssue[] => {
  const constants = new Map<string, unknown[]>()
  const others = new Set<string>()
  for (const issue of issues) {
    const branch = /^(.*\/anyOf)\/\d+(\/.*)?$/.exec(issue.schemaPath ?? '')
    if (branch === null) continue
    const union = `${issue.instancePath} ${branch[1] ?? ''}`
    if (issue.keyword === 'const' && branch[2] === '/const') constants.set(union, [...(constants.get(union) ?? []), issue.params['allowedValue']])
    // A literal's own type (a string literal given an array, a repeated query parameter) is the same mistake.
    else if (!(issue.keyword === 'type' && branch[2] === '/type')) others.add(union)
  }
  const collapsed = [...constants.keys()].filter((union) => !others.has(union))
  if (collapsed.length === 0) return issues
  const unionOf = (issue: AjvIssue): string | undefined => {
    const key = issue.keyword === 'anyOf' ? `${issue.instancePath} ${issue.schemaPath ?? ''}` : undefined
    if (key !== undefined) return key
    const branch = /^(.*\/anyOf)\/\d+\/(const|type)$/.exec(issue.schemaPath ?? '')
    return branch === null ? undefined : `${issue.instancePath} ${branch[1] ?? ''}`
  }
  const result: AjvIssue[] = []
  const said = new Set<string>()
  for (const issue of issues) {
    const union = unionOf(issue)
    if (union === undefined || !collapsed.includes(union)) { result.push(issue); continue }
    if (said.has(union)) continue
    said.add(union)
    result.push({ instancePath: issue.instancePath, schemaPath: union.slice(issue.instancePath.length + 1), keyword: 'enum', params: { allowedValues: constants.get(union) } })
  }
  return result
}

/** `body.principal.min`, `query.limit`, `headers.organization-id`: where a validation issue points. */
const fieldOf = (context: string | undefined, issue: AjvIssue): string => {
  const base = [context ?? 'request', ...issue.instancePath.split('/').filter(Boolean)].join('.')
  const missing = issue.params['missingProperty']
  const extra = issue.params['additionalProperty']
  if (issue.keyword === 'required' && typeof missing === 'string') return `${base}.${missing}`
  if (issue.keyword === 'additionalProperties' && typeof extra === 'string') return `${base}.${extra}`
  return base
}

const messageOf = (issue: AjvIssue): string => {
  if (issue.keyword === 'additionalProperties') return 'is not an allowed field'
  if (issue.keyword === 'required') return 'is required'
  const allowed = issue.params['allowedValues']
  if (issue.keyword === 'enum' && Array.isArray(allowed)) return `must be one of ${allowed.map(String).join(', ')}`
  const pattern = issue.params['pattern']
  const readable = issue.keyword === 'pattern' && typeof pattern === 'string' ? patternMessages.get(pattern) : undefined
  return readable ?? issue.message ?? issue.keyword
}

/** The node of `root` a JSON pointer such as ajv's `schemaPath` (`#/properties/a/discriminator`) names, or undefined. */
const schemaAt = (root: unknown, pointer: string): unknown =>
  pointer.replace(/^#/, '').split('/').filter(Boolean).map((key) => key.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce<unknown>((node, key) => (typeof node === 'object' && node !== null ? Reflect.get(node, key) : undefined), root)

/** The values a discriminated oneOf's tag takes: each branch's `const` (or `enum`) of that property. */
const tagValuesOf = (schema: unknown, tag: string): string[] => {
  const branches = schemaAt(schema, '#/oneOf')
  if (!Array.isArray(branches)) return []
  return branches.flatMap((branch): unknown[] => {
    const property = schemaAt(branch, `#/properties/${tag.replace(/~/g, '~0').replace(/\//g, '~1')}`)
    const constant = schemaAt(property, '#/const')
    const values = schemaAt(property, '#/enum')
    return constant !== undefined ? [constant] : Array.isArray(values) ? values : []
  }).filter((value): value is string => typeof value === 'string')
}

/**
 * A oneOf discriminated by a tag (ajv's `discriminator`: POST /exports, POST /profiles) checks only the branch its
 * tag names; when the tag is missing or names no branch ajv reports `tag "type" must be string` or `value of tag
 * "type" must be in oneOf` on the object. Said instead on the tag itself: `body.type is required`, or `body.type
 * must be one of natural, legal` (the values read from the part's schema, when given).
 */
const discriminatorError = (context: string | undefined, issue: AjvIssue, schema: unknown): FieldError | null => {
  const tag = issue.params['tag']
  if (issue.keyword !== 'discriminator' || typeof tag !== 'string') return null
  const field = `${fieldOf(context, issue)}.${tag}`
  if (issue.params['tagValue'] === undefined) return { field, message: 'is required' }
  const values = tagValuesOf(schemaAt(schema, (issue.schemaPath ?? '').replace(/\/discriminator$/, '')), tag)
  return { field, message: values.length > 0 ? `must be one of ${values.join(', ')}` : messageOf(issue) }
}

/**
 * The field errors of a part's validation issues, its fields named under `context` (`querystring`, or a name a route gives the part);
 * `schema`, the part's schema, names the values a discriminated oneOf's tag takes.
 */
export const fieldErrorsOf = (issues: readonly AjvIssue[], context: string | undefined, schema?: unknown): FieldError[] =>
  withLiteralUnionsCollapsed(withoutNullBranches(issues)).map((issue) => discriminatorError(context, issue, schema) ?? { field: fieldOf(context, issue), message: messageOf(issue) })

/** The route's schema of a request part (`body`, `querystring`, `params`, `headers`). */
const partSchema = (request: FastifyRequest, part: string | undefined): unknown =>
  part === undefined ? undefined : Reflect.get(request.routeOptions.schema ?? {}, part)

export const validationFailure = (error: FastifyError, request: FastifyRequest): AppError => {
  const errors = fieldErrorsOf(error.validation ?? [], error.validationContext, partSchema(request, error.validationContext))
  const code = request.routeOptions.config.validationCode ?? 'VALIDATION_ERROR'
  return new AppError(code, errors.map((e) => `${e.field} ${e.message}`).join('; ') || error.message, { errors })
}

const fastifyClientErrors: Record<string, AppError['code']> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'BAD_REQUEST',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'BAD_REQUEST',
}

/** What the router refuses before a route is found: a path that does not decode, or a parameter longer than any route takes. */
const routerRefusal = (error: { code: unknown }): AppError | null => {
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') return new AppError('URI_TOO_LONG', 'a path parameter is longer than any this API takes')
  if (error.code === 'FST_ERR_BAD_URL') return new AppError('BAD_REQUEST', 'the path is not a valid URL: a percent-escape does not decode')
  return null
}

/** Any error as the AppError the client is told about; 5xx ones stay generic. */
export const toAppError = (error: FastifyError | Error, request: FastifyRequest): AppError => {
  if (isAppError(error)) return error
  const refusal = 'code' in error ? routerRefusal(error) : null
  if (refusal !== null) return refusal
  if ('validation' in error && error.validation !== undefined) return validationFailure(error, request)
  const status = 'statusCode' in error && typeof error.statusCode === 'number' ? error.statusCode : 500
  if (status >= 400 && status < 500) {
    const code = ('code' in error && typeof error.code === 'string' ? fastifyClientErrors[error.code] : undefined) ?? 'BAD_REQUEST'
    const mapped = new AppError(code, error.message)
    return code === 'BAD_REQUEST' && status !== 400 ? Object.assign(mapped, { status }) : mapped
  }
  return new AppError('INTERNAL', 'Internal server error')
}

/** The failure envelope's body for a refusal (4xx, and 501). */
export const failureBody = (error: AppError) => ({ status: 'fail', data: { code: error.code, message: error.message, ...error.details } })

/**
 * A refusal of the client's request (4xx), or 501: a request the service understood but does not do (the interface's
 * DRY_RUN_NOT_SUPPORTED), answered as a `fail` with its data and not logged as the service's failure.
 */
const isRefusal = (error: AppError): boolean => error.status < 500 || error.status === 501

export const sendEnvelope = (reply: FastifyReply, error: AppError): FastifyReply => {
  reply.code(error.status).headers(error.headers)
  if (!isRefusal(error)) return reply.send({ status: 'error', message: error.message })
  return reply.send(failureBody(error))
}

/** One answer to every error, the router's own (`frameworkErrors`) included: the failure envelope for 4xx, a bare message for 5xx. */
export const answerError = (error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply => {
  const appError = toAppError(error, request)
  if (!isRefusal(appError)) request.log.error({ err: error }, 'request failed')
  return sendEnvelope(reply, appError)
}

export const registerErrorHandling = (app: FastifyInstance): void => {
  app.setErrorHandler(answerError)
  app.setNotFoundHandler((request, reply) =>
    sendEnvelope(reply, new AppError('ROUTE_NOT_FOUND', `Route ${request.method} ${request.url.split('?')[0] ?? ''} not found`)))
}

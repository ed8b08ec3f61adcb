import { Type } from 'typebox'
import type { WebhookDoc } from '../projections/webhooks.js'
import type { WebhookSendDoc } from '../projections/webhookSends.js'
import { httpMethods } from '../webhooks/http.js'
import { NonBlankText, Timestamp, Uuid } from './schemas.js'

const template = (description: string, maxLength = 65_536) => Type.String({ maxLength, description: `${description} (Go text/template, see docs/webhooks.md)` })

/** The configuration fields as the API takes them (the interface's names). */
export const configurationFields = {
  tag: NonBlankText({ maxLength: 100, description: 'short identifier, shown in logs and used by fromWebhook' }),
  url: template('destination of the POST; must render to an http(s) URL', 4096),
  requestHeader: template('JSON object of headers (name → text)'),
  requestBody: template('body of the POST'),
  authEnabled: Type.Boolean({ description: 'request a token from authUrl before every send' }),
  authUrl: template('token endpoint', 4096),
  authMethod: Type.String({ enum: [...httpMethods], description: 'method of the token request (default POST)' }),
  authRequestBody: template('body of the token request'),
  authRequestHeader: template('JSON object of headers of the token request'),
  tokenSourceKey: Type.String({ maxLength: 500, description: 'where the token is in the token response body: a dot path or a JSONPath starting with $ (default access_token)' }),
  tokenType: Type.String({ maxLength: 100, description: 'word before the token in authHeader (default Bearer; empty: the bare token)' }),
  authHeader: Type.String({ maxLength: 200, description: 'header that carries the token (default Authorization)' }),
  tokenHeader: Type.String({ maxLength: 200, description: 'when set, the token is this header of the token response instead of the body' }),
  responseQueries: Type.Record(Type.String({ maxLength: 64 }), Type.String({ minLength: 1, maxLength: 1000 }), {
    maxProperties: 50, description: 'name → JSONPath over the destination\'s JSON response; results usable through fromWebhook',
  }),
  signingSecret: Type.Union([Type.Null(), Type.String({ maxLength: 200 })], {
    description: 'Standard Webhooks secret (whsec_ + base64 of 24–64 bytes): signs each send; null: unsigned (the default). Never returned.',
  }),
}

export const Webhook = Type.Object({
  ID: Uuid,
  tag: Type.String(),
  url: Type.String(),
  requestHeader: Type.String(),
  requestBody: Type.String(),
  authEnabled: Type.Boolean(),
  authUrl: Type.String(),
  authMethod: Type.String(),
  authRequestBody: Type.String(),
  authRequestHeader: Type.String(),
  tokenSourceKey: Type.String(),
  tokenType: Type.String(),
  authHeader: Type.String(),
  tokenHeader: Type.String(),
  responseQueries: Type.Record(Type.String(), Type.String()),
  signingEnabled: Type.Boolean({ description: 'whether sends are signed (the secret is never returned)' }),
  scoresHidden: Type.Boolean({
    description: 'its sends render `.Credit.Score` zero-valued: whoever last created or changed it lacks ReadAnalysis (a change by someone holding it turns scores on)',
  }),
  archived: Type.Boolean(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  archivedAt: Type.Union([Timestamp, Type.Null()]),
})

export const webhookView = (doc: WebhookDoc) => {
  const { signingSecret, ...configuration } = doc.configuration
  return {
    ID: doc._id, ...configuration, signingEnabled: signingSecret !== null, scoresHidden: doc.scoresHidden === true,
    archived: doc.archived, createdAt: doc.createdAt, updatedAt: doc.updatedAt, archivedAt: doc.archivedAt,
  }
}

const Headers = Type.Record(Type.String(), Type.String())

export const RecordedRequestSchema = Type.Object({
  method: Type.String(),
  url: Type.String(),
  headers: Headers,
  body: Type.String(),
  bodyBytes: Type.Integer({ description: 'size of the whole body' }),
  bodyTruncated: Type.Boolean({ description: 'the body was cut (logs keep WEBHOOK_LOG_BODY_MAX_BYTES)' }),
})

export const RecordedResponseSchema = Type.Object({
  status: Type.Integer(),
  headers: Headers,
  body: Type.String(),
  bodyBytes: Type.Integer(),
  bodyTruncated: Type.Boolean(),
})

export const SendErrorSchema = Type.Object({ code: Type.String(), message: Type.String() })
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()])

export const AuthExchangeSchema = Type.Object({
  request: Nullable(RecordedRequestSchema),
  response: Nullable(RecordedResponseSchema),
  error: Nullable(SendErrorSchema),
  durationMs: Type.Integer(),
})

const QueryResultsCut = Type.Array(Type.String(), {
  description: 'names of responseQueries whose result was over 16 KiB (or over 64 KiB with the results before it) and is kept as null',
})

export const SendLog = Type.Object({
  ID: Uuid,
  webhookID: Nullable(Uuid),
  tag: Type.String(),
  trigger: Type.Object({ type: Type.String(), eventID: Nullable(Type.String()), logID: Nullable(Type.String()) }),
  creditID: Nullable(Type.String()),
  orderID: Nullable(Type.String()),
  status: Type.String({ enum: ['started', 'delivered', 'failed', 'unknown'] }),
  request: Nullable(RecordedRequestSchema),
  response: Nullable(RecordedResponseSchema),
  auth: Nullable(AuthExchangeSchema),
  error: Nullable(SendErrorSchema),
  responseQueryResults: Type.Record(Type.String(), Type.Unknown()),
  responseQueryResultsCut: QueryResultsCut,
  durationMs: Nullable(Type.Integer()),
  startedAt: Timestamp,
  completedAt: Nullable(Timestamp),
})

export const sendLogView = (doc: WebhookSendDoc) => ({
  ID: doc._id, webhookID: doc.webhookId, tag: doc.tag,
  trigger: { type: doc.trigger.type, eventID: doc.trigger.eventId, logID: doc.trigger.logId },
  creditID: doc.creditId, orderID: doc.orderId, status: doc.status, request: doc.request, response: doc.response, auth: doc.auth,
  error: doc.error, responseQueryResults: doc.responseQueryResults, responseQueryResultsCut: doc.responseQueryResultsCut ?? [], durationMs: doc.durationMs,
  startedAt: doc.startedAt, completedAt: doc.completedAt,
})

export const SendResult = Type.Object({
  logID: Uuid,
  outcome: Type.String({ enum: ['delivered', 'failed'] }),
  request: Nullable(RecordedRequestSchema),
  response: Nullable(RecordedResponseSchema),
  auth: Nullable(AuthExchangeSchema),
  error: Nullable(SendErrorSchema),
  responseQueryResults: Type.Record(Type.String(), Type.Unknown()),
  responseQueryResultsCut: QueryResultsCut,
  durationMs: Type.Integer(),
})

export const PreviewResult = Type.Object({
  request: Nullable(Type.Object({ method: Type.String(), url: Type.String(), headers: Headers, body: Type.String() })),
  auth: Nullable(Type.Object({ method: Type.String(), url: Type.String(), headers: Headers, body: Type.String() })),
  error: Nullable(SendErrorSchema),
  responseQueryResults: Type.Record(Type.String(), Type.Unknown()),
  responseQueryResultsCut: QueryResultsCut,
})

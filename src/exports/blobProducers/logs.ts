import { SEND_CUT_SHORT, SIGNER_WITHOUT_ADDRESS } from '../../events/notification.js'
import type { SignatureAuditDoc } from '../../projections/signatureAudit.js'
import type { WebhookSendDoc } from '../../projections/webhookSends.js'
import { defineBlobProducer } from '../blobs.js'
import { integer, text, timestamp } from '../lib/columns.js'

/** One line of the logs file: a webhook send or a signature-deletion audit record, in one layout. */
interface LogLine {
  log: 'webhook_send' | 'signature_audit'
  id: string
  at: string
  action: string
  subjectId: string | null
  relatedId: string | null
  actorId: string | null
  outcome: string
  httpMethod: string | null
  url: string | null
  httpStatus: number | null
  durationMs: number | null
  errorCode: string | null
  errorMessage: string | null
  reason: string | null
  notificationStatus: string | null
}

/**
 * A destination without its query and fragment: the file goes to every holder
 * of ReadExport + ReadReceivables, while a URL's query can carry a key
 * (`?api_key=…`) or a debtor's data, which the send log keeps behind
 * ReadWebhook + ReadCredit. `?…` says a query was there.
 */
export const destinationOnly = (url: string): string => {
  const cut = url.search(/[?#]/)
  return cut < 0 ? url : `${url.slice(0, cut)}${url[cut] === '?' ? '?…' : ''}`
}

const sendLine = (send: WebhookSendDoc): LogLine => ({
  log: 'webhook_send', id: send._id, at: send.startedAt, action: `webhook.${send.trigger.type}`, subjectId: send.webhookId,
  relatedId: send.orderId ?? send.creditId, actorId: null, outcome: send.status, httpMethod: send.request?.method ?? null, url: send.request === null || send.request === undefined ? null : destinationOnly(send.request.url),
  httpStatus: send.response?.status ?? null, durationMs: send.durationMs, errorCode: send.error?.code ?? null, errorMessage: send.error?.message ?? null,
  reason: null, notificationStatus: null,
})

/**
 * Whether a deletion's reason was given, not its text: the file goes to every
 * holder of ReadExport + ReadReceivables, while a reason speaks of a signer
 * ("deceased", "suspected forgery") and the signature's audit keeps it behind
 * ReadDocument.
 */
const reasonMark = (reason: string | null): string | null => (reason === null || reason === '' ? null : 'given')

/**
 * Why notifying the signer failed, as a kind: the transport's text can quote
 * the signer's address (an SMTP 550 names the rejected recipient), which the
 * signature's audit keeps behind ReadDocument.
 */
export const notificationFailure = (error: string | null): string | null => {
  if (error === null) return null
  if (error === SIGNER_WITHOUT_ADDRESS) return 'no_address'
  return error === SEND_CUT_SHORT ? 'outcome_unknown' : 'send_failed'
}

const auditLine = (record: SignatureAuditDoc): LogLine => ({
  log: 'signature_audit', id: record._id, at: record.at, action: `signature.${record.action}`, subjectId: record.signatureId,
  relatedId: record.documentId, actorId: record.actorId, outcome: record.status, httpMethod: null, url: null, httpStatus: null, durationMs: null,
  errorCode: null, errorMessage: notificationFailure(record.notification.error), reason: reasonMark(record.reason), notificationStatus: record.notification.status,
})

/**
 * `logs`: what the service did on the organization's behalf during the
 * previous UTC day: every webhook send started that day (trigger, request
 * line, answer, duration, error; bodies and headers stay in the send log)
 * and every signature-file deletion audited that day (who, whether a reason
 * was given, the signature's new status, whether the signer was notified). Webhook sends
 * come first, then audit records. Made at 00:15 server time.
 */
export const logsBlobProducer = defineBlobProducer<LogLine>({
  kind: 'logs',
  description: 'webhook sends and signature-deletion audit records of the previous day',
  columns: [
    text<LogLine>('log', '`webhook_send` or `signature_audit`', (l) => l.log),
    text<LogLine>('id', 'send id or audit record id', (l) => l.id),
    timestamp<LogLine>('at', 'when the send started, or the file was deleted', (l) => l.at),
    text<LogLine>('action', '`webhook.<trigger>` (PaymentOrderApproved, CreditDisbursed, manual, test) or `signature.signature-file-deleted`', (l) => l.action),
    text<LogLine>('subject_id', 'the webhook, or the signature', (l) => l.subjectId),
    text<LogLine>('related_id', 'the payment order or credit of a send, the document of a signature', (l) => l.relatedId),
    text<LogLine>('actor_id', 'who deleted the file (empty for sends: the service)', (l) => l.actorId),
    text<LogLine>('outcome', 'sends: delivered, failed, unknown or started; audit: the signature\'s status after', (l) => l.outcome),
    text<LogLine>('http_method', 'sends: request method', (l) => l.httpMethod),
    text<LogLine>('url', 'sends: destination, without its query (`?…`) and fragment', (l) => l.url),
    integer<LogLine>('http_status', 'sends: the destination\'s status code', (l) => l.httpStatus),
    integer<LogLine>('duration_ms', 'sends: how long it took', (l) => l.durationMs),
    text<LogLine>('error_code', 'sends: TIMEOUT, HTTP_STATUS, …', (l) => l.errorCode),
    text<LogLine>('error_message', 'sends: what went wrong; audit: why notifying the signer failed, `no_address`, `send_failed` or `outcome_unknown` (a stop cut the send short; the text is in the signature\'s audit)', (l) => l.errorMessage),
    text<LogLine>('reason', 'audit: `given` when the deletion has a reason (its text is in the signature\'s audit, ReadDocument), empty when none', (l) => l.reason),
    text<LogLine>('notification_status', 'audit: pending, dispatched, delivered or failed', (l) => l.notificationStatus),
  ],
  async *rows(context) {
    const { organizationId, period: { start, end } } = context
    for await (const send of context.queries.webhookSends.startedBetween(organizationId, start, end)) yield sendLine(send)
    for await (const record of context.queries.signatureAudit.between(organizationId, start, end)) yield auditLine(record)
  },
})

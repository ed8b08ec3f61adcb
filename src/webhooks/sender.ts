import type { Agent } from 'undici'
import type { CommandContext } from '../commands/handler.js'
import { webhookSendAggregate } from '../commands/webhookSend.js'
import type { WebhookConfiguration } from '../events/webhook.js'
import type { RecordedAuthExchange, SendError, SendTrigger, WebhookSendCompleted } from '../events/webhookSend.js'
import { breakerKey, isRefusal, type Admission, type ExchangeEnding, type Refusal } from './breaker.js'
import type { Services } from '../services.js'
import type { TemplateContext } from '../templates/context.js'
import { createWebhookAgent } from './destination.js'
import { exchange, type Exchange, type IncomingResponse, type OutgoingRequest } from './http.js'
import { maskQueryResults, recordRequest, recordResponse, type MaskingRules } from './masking.js'
import { isSendableHeaderValue, RenderFailure, renderWebhook, type RenderedWebhook } from './render.js'
import { runResponseQueries } from './responseQueries.js'
import { isSignatureHeader, signatureHeaders } from './signing.js'
import { authorization, extractToken } from './token.js'

/** A configuration ready to send: the signing secret in the clear (unsealed by the caller). */
export type SendableConfiguration = Omit<WebhookConfiguration, 'signingSecret'> & { signingSecret: string | null }

export interface SendRequest {
  /** Automatic sends: deterministicId of (trigger event, webhook); a second send with the same id sends nothing. */
  sendId: string
  organizationId: string
  webhookId: string | null
  configuration: SendableConfiguration
  context: TemplateContext
  fromWebhook(tag: string, query: string): unknown
  trigger: SendTrigger
  creditId: string | null
  orderId: string | null
  /** Standard Webhooks message id (default: sendId); a manual re-send may repeat the original's. */
  messageId?: string
  commandContext: CommandContext
}

/** What a send did, for the caller; headers masked as in the log, bodies complete. */
export type SendReport = { sendId: string } & Pick<WebhookSendCompleted['data'],
  'outcome' | 'request' | 'response' | 'auth' | 'error' | 'responseQueryResults' | 'durationMs'> & { responseQueryResultsCut: string[] }

/** A request as POST /webhook-test?send=false shows it: masked as a send's answer is, the body whole. */
export interface PreviewedRequest {
  method: string
  url: string
  headers: Record<string, string>
  body: string
}

/**
 * A send whose start is recorded; `finish` sends it and records the outcome
 * (`position`: where, for waiting on the read models; `report`: what the
 * caller answers, built only when asked).
 */
export interface StartedSend {
  sendId: string
  finish(): Promise<{ position: number; report(): SendReport }>
}

const agents = new Map<boolean, Agent>()
const agentFor = (allowPrivate: boolean): Agent => {
  const existing = agents.get(allowPrivate)
  if (existing !== undefined) return existing
  const agent = createWebhookAgent(allowPrivate)
  agents.set(allowPrivate, agent)
  return agent
}

/** What a preview shows for the token. */
const TOKEN_PLACEHOLDER = '<token>'

/** The headers but those `drop` names: HTTP names are case-insensitive, so a header the service sets replaces one in any case. */
const withoutHeaders = (headers: Record<string, string>, drop: (name: string) => boolean): Record<string, string> =>
  Object.fromEntries(Object.entries(headers).filter(([name]) => !drop(name)))

/** The headers with the token in `authHeader`, replacing a header of that name in any case. */
const withToken = (headers: Record<string, string>, configuration: SendableConfiguration, token: string): Record<string, string> => {
  const [header, value] = authorization(configuration, token)
  return { ...withoutHeaders(headers, (name) => name.toLowerCase() === header.toLowerCase()), [header]: value }
}

const isSuccess = (response: IncomingResponse | null): response is IncomingResponse => response !== null && response.status >= 200 && response.status < 300

interface Recorders {
  log: MaskingRules
  answer: MaskingRules
}

/**
 * Sends webhooks and records every send as events: `WebhookSendStarted`
 * before anything goes on the wire, `WebhookSendCompleted` with the whole
 * exchange after. Used by POST /webhook-test, the firing process manager
 * and manual re-sends.
 */
export class WebhookSender {
  constructor(private readonly services: Services) {}

  private get httpOptions() {
    const { config } = this.services
    return {
      agent: agentFor(config.webhookAllowPrivateNetworks),
      timeoutMs: config.webhookTimeoutMs,
      maxResponseBytes: config.webhookResponseMaxBytes,
      allowPrivate: config.webhookAllowPrivateNetworks,
    }
  }

  private recorders(configuration: SendableConfiguration, secrets: string[]): Recorders {
    const base = { headers: [configuration.authHeader, configuration.tokenHeader], secrets, maskJsonFields: false }
    return {
      log: { ...base, maxBodyBytes: this.services.config.webhookLogBodyMaxBytes },
      answer: { ...base, maxBodyBytes: Number.POSITIVE_INFINITY },
    }
  }

  /** Renders the templates and signs the body; the request exactly as it will leave, but for the token. */
  render(request: Pick<SendRequest, 'configuration' | 'context' | 'fromWebhook' | 'sendId' | 'messageId'>, at: Date): RenderedWebhook {
    const rendered = renderWebhook(request.configuration, request.context, { now: at, fromWebhook: request.fromWebhook }, {
      maxOutput: this.services.config.webhookTemplateMaxOutput,
    })
    const secret = request.configuration.signingSecret
    if (secret === null) return rendered
    const signature = signatureHeaders(secret, request.messageId ?? request.sendId, at, rendered.request.body)
    // Validation refuses these names on a signed webhook, but one stored before it did, or a name rendered from data, may still give one.
    return { ...rendered, request: { ...rendered.request, headers: { ...withoutHeaders(rendered.request.headers, isSignatureHeader), ...signature } } }
  }

  /**
   * The requests a send would make, masked as a send's answer is (credential
   * headers, secret fields of the token request), bodies whole; with a token
   * request, the header that would carry the token shows `<tokenType> <token>`.
   * Throws RenderFailure when a template cannot be rendered.
   */
  preview(request: Pick<SendRequest, 'configuration' | 'context' | 'fromWebhook' | 'sendId' | 'messageId'>, at: Date): { request: PreviewedRequest; auth: PreviewedRequest | null } {
    const rendered = this.render(request, at)
    const { answer } = this.recorders(request.configuration, [])
    const shown = (outgoing: OutgoingRequest, rules: MaskingRules): PreviewedRequest => {
      const { method, url, headers, body } = recordRequest(outgoing, rules)
      return { method, url, headers, body }
    }
    if (rendered.auth === null) return { request: shown(rendered.request, answer), auth: null }
    const masked = shown(rendered.request, answer)
    return {
      request: { ...masked, headers: withToken(masked.headers, request.configuration, TOKEN_PLACEHOLDER) },
      auth: shown(rendered.auth, { ...answer, maskJsonFields: true }),
    }
  }

  /**
   * Sends once. Answers null, sending nothing, when a send with this id was
   * started before (a redelivered trigger, a restart): the log already has it.
   */
  async send(request: SendRequest): Promise<SendReport | null> {
    const started = await this.start(request)
    if (started === null) return null
    const { report, position } = await started.finish()
    await this.services.settle(position)
    return report()
  }

  /**
   * Renders and records the start (`WebhookSendStarted`), nothing on the wire
   * yet; null when a send with this id was started before. `finish` then
   * makes the exchange and records its outcome: a firing starts its sends in
   * order and lets them finish concurrently.
   */
  async start(request: SendRequest): Promise<StartedSend | null> {
    const { services } = this
    const startedAt = services.clock.now()
    const clockStart = performance.now()
    let rendered: RenderedWebhook | null = null
    let renderError: SendError | null = null
    try {
      rendered = this.render(request, startedAt)
    } catch (error) {
      if (!(error instanceof RenderFailure)) throw error
      renderError = error.error
    }
    const recorders = this.recorders(request.configuration, [])
    const started = await services.commands.execute(webhookSendAggregate, request.sendId, {
      type: 'StartWebhookSend', sendId: request.sendId, organizationId: request.organizationId, webhookId: request.webhookId,
      tag: request.configuration.tag, trigger: request.trigger, creditId: request.creditId, orderId: request.orderId,
      request: rendered === null ? null : recordRequest(rendered.request, recorders.log), now: startedAt.toISOString(),
    }, request.commandContext)
    if (started.events.length === 0) return null
    return { sendId: request.sendId, finish: () => this.finish(request, rendered, renderError, clockStart) }
  }

  private async finish(request: SendRequest, rendered: RenderedWebhook | null, renderError: SendError | null, clockStart: number) {
    const { services } = this
    const outcome = rendered === null
      ? { request: null, auth: null, exchange: null, error: renderError, secrets: [] }
      : await this.deliver(rendered, request)
    const finalRecorders = this.recorders(request.configuration, outcome.secrets)
    const delivered = outcome.error === null && isSuccess(outcome.exchange?.response ?? null)
    const response = outcome.exchange?.response ?? null
    const queried = delivered && response !== null ? runResponseQueries(request.configuration.responseQueries, response.body) : { results: {}, cut: [] }
    const responseQueryResults = maskQueryResults(queried.results, outcome.secrets)
    const responseQueryResultsCut = queried.cut
    const durationMs = Math.round(performance.now() - clockStart)
    const recordAuth = (rules: MaskingRules): RecordedAuthExchange | null => outcome.auth === null ? null : {
      request: recordRequest(outcome.auth.request, { ...rules, maskJsonFields: true }),
      response: outcome.auth.response === null ? null : recordResponse(outcome.auth.response, { ...rules, maskJsonFields: true }),
      error: outcome.auth.error,
      durationMs: outcome.auth.durationMs,
    }
    const view = (rules: MaskingRules) => ({
      request: outcome.request === null ? null : recordRequest(outcome.request, rules),
      response: response === null ? null : recordResponse(response, rules),
      auth: recordAuth(rules),
    })
    const logged = view(finalRecorders.log)
    const { position } = await services.commands.execute(webhookSendAggregate, request.sendId, {
      type: 'CompleteWebhookSend', outcome: delivered ? 'delivered' : 'failed', ...logged, error: outcome.error,
      responseQueryResults, responseQueryResultsCut, durationMs, now: services.clock.now().toISOString(),
    }, request.commandContext)
    const report = (): SendReport => ({
      sendId: request.sendId, outcome: delivered ? 'delivered' : 'failed', ...view(finalRecorders.answer), error: outcome.error,
      responseQueryResults, responseQueryResultsCut, durationMs,
    })
    return { report, position }
  }

  /**
   * The token request (when configured), then the webhook request. Neither is
   * made when the breaker of the webhook's destination is open and the send is automatic.
   */
  private async deliver(rendered: RenderedWebhook, send: SendRequest): Promise<{
    request: OutgoingRequest | null
    auth: Exchange | null
    exchange: Exchange | null
    error: SendError | null
    secrets: string[]
  }> {
    const { configuration } = send
    const { breakers } = this.services.webhooks
    const manual = isManual(send.trigger)
    let request = rendered.request
    let auth: Exchange | null = null
    const secrets: string[] = []
    const admission = breakers.admit(breakerKey(send.organizationId, send.webhookId, 'webhook', destinationOf(request.url)), manual)
    if (isRefusal(admission)) {
      const refused = this.refused(request, admission)
      return { request, auth, exchange: refused, error: refused.error, secrets }
    }
    if (rendered.auth !== null) {
      const authAdmission = breakers.admit(breakerKey(send.organizationId, send.webhookId, 'token', destinationOf(rendered.auth.url)), manual)
      auth = isRefusal(authAdmission) ? this.refused(rendered.auth, authAdmission) : await this.exchange(rendered.auth, authAdmission)
      const authResponse = auth.response
      const failed = (error: SendError) => {
        breakers.abandon(admission)
        return { request: null, auth, exchange: null, error, secrets }
      }
      if (auth.error?.code === 'DESTINATION_UNAVAILABLE') return failed(auth.error)
      if (auth.error !== null || !isSuccess(authResponse)) {
        const reason = auth.error?.message ?? `the token endpoint answered ${authResponse?.status ?? 'nothing'}`
        return failed({ code: 'AUTH_FAILED', message: `token request failed: ${reason}` })
      }
      const token = extractToken(authResponse, configuration)
      if ('error' in token) return failed(token.error)
      secrets.push(token.token)
      const [header, value] = authorization(configuration, token.token)
      if (!isSendableHeaderValue(value)) {
        return failed({ code: 'INVALID_HEADERS', message: `the token cannot be sent in header ${header}: it has a character a header value cannot carry` })
      }
      request = { ...request, headers: withToken(request.headers, configuration, token.token) }
    }
    const sent = await this.exchange(request, admission)
    const status = sent.response?.status
    const error = sent.error ?? (isSuccess(sent.response) ? null : { code: 'HTTP_STATUS' as const, message: `the destination answered ${status ?? 'nothing'}` })
    return { request, auth, exchange: sent, error, secrets }
  }

  /** What an exchange an open breaker refused records: nothing was sent, and the error says until when. */
  private refused(outgoing: OutgoingRequest, refusal: Refusal): Exchange {
    const message = `not sent: ${destinationOf(outgoing.url)} did not answer within ${this.httpOptions.timeoutMs} ms ${refusal.timeouts} times in a row, `
      + `so this webhook's automatic sends there fail at once until ${refusal.until.toISOString()}, when one is tried again; re-send this one once it answers `
      + '(a POST /webhook-test of this webhook that gets an answer lets them go at once)'
    return { request: outgoing, response: null, error: { code: 'DESTINATION_UNAVAILABLE', message }, durationMs: 0 }
  }

  /** One exchange the breaker admitted; how it ended is counted. */
  private async exchange(outgoing: OutgoingRequest, admission: Admission): Promise<Exchange> {
    const { breakers } = this.services.webhooks
    let ending: ExchangeEnding = 'failedFast'
    let change: 'opened' | 'closed' | null
    let result: Exchange
    try {
      result = await exchange(outgoing, this.httpOptions)
      ending = result.error?.code === 'TIMEOUT' ? 'timedOut' : result.response === null ? 'failedFast' : 'answered'
    } finally {
      // Recorded whatever happens: a probe that never ended would keep its breaker open for good.
      change = breakers.record(admission, ending)
    }
    const logged = { breaker: admission.key, destination: destinationOf(outgoing.url) }
    if (change === 'opened') this.services.logger.warn(logged, 'webhook destination timed out repeatedly: the webhook\'s automatic sends there fail at once for a while')
    if (change === 'closed') this.services.logger.info(logged, 'webhook destination answers again')
    return result
  }
}

/** The scheme, host and port of a URL, for messages (the destination check refuses a URL that does not parse before any exchange). */
const destinationOf = (url: string): string => (URL.canParse(url) ? new URL(url).origin : url)

const isManual = (trigger: SendTrigger): boolean => trigger.type === 'manual' || trigger.type === 'test'

/** Closes, as `unknown`, every send that has a start and no outcome: run at start-up, before anything new is sent. */
export const closeInterruptedSends = async (services: Services, reason: string): Promise<number> => {
  const interrupted = []
  for await (const send of services.queries.webhookSends.interrupted()) interrupted.push(send)
  let closed = 0
  for (const send of interrupted) {
    const result = await services.commands.execute(webhookSendAggregate, send._id, { type: 'MarkWebhookSendUnknown', reason, now: services.clock.now().toISOString() }, {
      organizationId: send.organizationId, actorId: null, correlationId: send._id, causationId: null,
    })
    closed += result.events.length
  }
  return closed
}

import t from 'tap'
import { retrySendId, webhookSendAggregate, type WebhookSendCommand } from '../../src/commands/webhookSend.js'
import { isRetryableFailure } from '../../src/commands/webhookRetryPolicy.js'
import type { WebhookSendEvent } from '../../src/events/webhookSend.js'
import { scenario } from '../helpers/deciders.js'

const send = scenario(webhookSendAggregate)
const start: WebhookSendCommand = {
  type: 'StartWebhookSend', sendId: 's-1', organizationId: 'o-1', webhookId: 'w-1', tag: 'erp',
  trigger: { type: 'CreditDisbursed', eventId: 'e-1', logId: null }, creditId: 'c-1', orderId: null, request: null, now: '2026-01-15T12:00:00.000Z',
}
const started: WebhookSendEvent = {
  type: 'WebhookSendStarted',
  data: { sendId: 's-1', organizationId: 'o-1', webhookId: 'w-1', tag: 'erp', trigger: start.trigger, creditId: 'c-1', orderId: null, request: null, startedAt: start.now },
}
const complete: WebhookSendCommand = {
  type: 'CompleteWebhookSend', outcome: 'delivered', request: null, response: null, auth: null, error: null, responseQueryResults: { ref: 'R' },
  durationMs: 12, retryable: false, retryAttempts: 5, now: '2026-01-15T12:00:01.000Z',
}
const completed: WebhookSendEvent = {
  type: 'WebhookSendCompleted',
  data: { sendId: 's-1', organizationId: 'o-1', webhookId: 'w-1', outcome: 'delivered', request: null, response: null, auth: null, error: null,
    responseQueryResults: { ref: 'R' }, durationMs: 12, completedAt: complete.now },
}
const unknown: WebhookSendEvent = {
  type: 'WebhookSendOutcomeUnknown', data: { sendId: 's-1', organizationId: 'o-1', webhookId: 'w-1', reason: 'restart', recordedAt: '2026-01-15T13:00:00.000Z' },
}

t.test('a send starts once: a second start decides nothing, so nothing is sent twice', async (t) => {
  send.given().when(start).then(t, [started])
  send.given(started).when(start).thenNothing(t)
  send.given(started, completed).when(start).thenNothing(t)
})

t.test('a started send concludes with one outcome', async (t) => {
  send.given(started).when(complete).then(t, [completed])
  send.given(started, completed).when(complete).thenNothing(t, 'a repeated outcome changes nothing')
  send.given().when(complete).thenRefused(t, 'NOT_FOUND')
})

t.test('a send interrupted by a stop is marked unknown once; a late outcome still counts', async (t) => {
  send.given(started).when({ type: 'MarkWebhookSendUnknown', reason: 'restart', now: '2026-01-15T13:00:00.000Z' }).then(t, [unknown])
  send.given(started, unknown).when({ type: 'MarkWebhookSendUnknown', reason: 'again', now: '2026-01-15T14:00:00.000Z' }).thenNothing(t)
  send.given(started, completed).when({ type: 'MarkWebhookSendUnknown', reason: 'late', now: '2026-01-15T14:00:00.000Z' }).thenNothing(t, 'a concluded send stays concluded')
  send.given(started, unknown).when(complete).then(t, [completed])
})

const refused: WebhookSendCommand = {
  ...complete, outcome: 'failed', responseQueryResults: {}, retryable: true,
  error: { code: 'CONNECTION_FAILED', message: 'ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:9' },
}
const failedOf = (sendId: string, at: string): WebhookSendEvent => ({
  type: 'WebhookSendCompleted',
  data: { sendId, organizationId: 'o-1', webhookId: 'w-1', outcome: 'failed', request: null, response: null, auth: null,
    error: { code: 'CONNECTION_FAILED', message: 'ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:9' }, responseQueryResults: {}, durationMs: 12, completedAt: at },
})

t.test('an automatic send that reached nothing schedules a retry a minute later, under an id of its own that keeps the original as message', async (t) => {
  const id = retrySendId(start.trigger, 's-1', 1)
  const trigger = { type: 'CreditDisbursed' as const, eventId: 'e-1', logId: null, originalSendId: 's-1', originalType: 'CreditDisbursed' as const, attempt: 1 }
  const scheduled: WebhookSendEvent = { type: 'WebhookSendRetryScheduled', data: {
    sendId: 's-1', organizationId: 'o-1', webhookId: 'w-1', retrySendId: id, attempt: 1, trigger, creditId: 'c-1', orderId: null,
    dueAt: '2026-01-15T12:01:01.000Z', scheduledAt: refused.now,
  } }
  send.given(started).when(refused).then(t, [failedOf('s-1', refused.now), scheduled])
  t.not(id, 's-1')
  t.equal(retrySendId(start.trigger, 's-1', 1), id, 'the same id every time it is derived')

  const released: WebhookSendEvent = { type: 'WebhookSendRetryReleased', data: {
    sendId: 's-1', organizationId: 'o-1', webhookId: 'w-1', retrySendId: id, attempt: 1, trigger, creditId: 'c-1', orderId: null, releasedAt: '2026-01-15T12:02:00.000Z',
  } }
  const release: WebhookSendCommand = { type: 'ReleaseWebhookRetry', now: '2026-01-15T12:02:00.000Z' }
  send.given(started, failedOf('s-1', refused.now), scheduled).when(release).then(t, [released])
  send.given(started, failedOf('s-1', refused.now), scheduled, released).when(release).thenNothing(t, 'released once: the job running twice sends it once')
  send.given(started, completed).when(release).thenNothing(t, 'nothing scheduled, nothing released')
})

t.test('each retry of a retry waits longer, and the attempts stop at WEBHOOK_RETRY_ATTEMPTS', async (t) => {
  const retryStart = (attempt: number): WebhookSendEvent => ({ type: 'WebhookSendStarted', data: {
    ...(started.type === 'WebhookSendStarted' ? started.data : { ...start, startedAt: start.now }), sendId: `r-${attempt}`,
    trigger: { type: 'CreditDisbursed', eventId: 'e-1', logId: null, originalSendId: 's-1', originalType: 'CreditDisbursed', attempt },
  } })
  const retried = (previous: number) => webhookSendAggregate.decide(refused, webhookSendAggregate.evolve(webhookSendAggregate.initialState(), retryStart(previous)))
  const delays = [0, 1, 2, 3, 4].map((previous) => {
    const [, scheduled] = retried(previous)
    return scheduled?.type === 'WebhookSendRetryScheduled' ? [scheduled.data.attempt, (Date.parse(scheduled.data.dueAt) - Date.parse(refused.now)) / 60_000] : null
  })
  t.same(delays, [[1, 1], [2, 5], [3, 30], [4, 120], [5, 360]], '1, 5 and 30 minutes, then 2 and 6 hours')
  t.same(retried(5).map((e) => e.type), ['WebhookSendCompleted'], 'the fifth retry failing schedules no sixth')
  const none = webhookSendAggregate.decide({ ...refused, retryAttempts: 0 }, webhookSendAggregate.evolve(webhookSendAggregate.initialState(), started))
  t.same(none.map((e) => e.type), ['WebhookSendCompleted'], 'WEBHOOK_RETRY_ATTEMPTS=0: never')
})

t.test('only automatic sends that reached nothing are retried', async (t) => {
  for (const type of ['manual', 'test'] as const) {
    const manual = webhookSendAggregate.evolve(webhookSendAggregate.initialState(), { type: 'WebhookSendStarted', data: {
      sendId: 's-2', organizationId: 'o-1', webhookId: 'w-1', tag: 'erp', trigger: { type, eventId: null, logId: null }, creditId: 'c-1', orderId: null, request: null,
      startedAt: start.now,
    } })
    t.same(webhookSendAggregate.decide(refused, manual).map((e) => e.type), ['WebhookSendCompleted'], `a ${type} send is a person's to repeat`)
  }
  send.given(started).when({ ...refused, retryable: false }).then(t, [failedOf('s-1', refused.now)])
  send.given(started, unknown).when(refused).then(t, [failedOf('s-1', refused.now)], 'a late outcome after unknown schedules nothing')

  const error = (code: 'DESTINATION_UNAVAILABLE' | 'DNS_FAILURE' | 'AUTH_FAILED' | 'CONNECTION_FAILED' | 'TIMEOUT' | 'HTTP_STATUS' | 'TEMPLATE_ERROR') => ({ code, message: '' })
  t.same([
    isRetryableFailure(error('DESTINATION_UNAVAILABLE'), null, false), isRetryableFailure(error('DNS_FAILURE'), null, false),
    isRetryableFailure(error('AUTH_FAILED'), null, false), isRetryableFailure(error('CONNECTION_FAILED'), null, true),
    isRetryableFailure(error('HTTP_STATUS'), { status: 503 }, false), isRetryableFailure(error('HTTP_STATUS'), { status: 429 }, false),
  ], [true, true, true, true, true, true], 'nothing reached the destination, or it said to try later')
  t.same([
    isRetryableFailure(error('CONNECTION_FAILED'), null, false), isRetryableFailure(error('TIMEOUT'), null, false),
    isRetryableFailure(error('HTTP_STATUS'), { status: 500 }, false), isRetryableFailure(error('HTTP_STATUS'), { status: 502 }, false),
    isRetryableFailure(error('TEMPLATE_ERROR'), null, false), isRetryableFailure(null, null, false),
  ], [false, false, false, false, false, false], 'a cut connection, a timeout or another answer may have been acted on; a template fails again')
})

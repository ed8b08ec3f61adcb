import t from 'tap'
import { webhookSendAggregate, type WebhookSendCommand } from '../../src/commands/webhookSend.js'
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
  durationMs: 12, now: '2026-01-15T12:00:01.000Z',
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

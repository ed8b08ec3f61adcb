import { creditLineAggregate } from '../commands/creditLine.js'
import type { CommandContext } from '../commands/handler.js'
import type { RecordedOf } from '../events/catalogue.js'
import type { Services } from '../services.js'
import { deterministicIdAfter } from '../shared/ids.js'
import { contextFor, templateContextOf } from '../webhooks/context.js'
import type { FiringWebhook, WebhookLinks } from '../webhooks/runtime.js'
import type { ResponseValues } from '../projections/webhookResponseValues.js'
import { WebhookSender, type SendRequest, type StartedSend } from '../webhooks/sender.js'
import { fromWebhookLookup, loadSource } from '../webhooks/source.js'
import { defineProcess, type BatchOutcome } from './process.js'

const triggerTypes = ['PaymentOrderApproved', 'CreditDisbursed'] as const
type Trigger = RecordedOf<(typeof triggerTypes)[number]>

/**
 * The id of the send of one webhook for one trigger: a redelivery or a
 * restart meets the same send and sends nothing. It sorts with the trigger
 * (whose id is time-ordered), so new send streams join the log's index at
 * its right edge.
 */
export const firingSendId = (triggerEventId: string, webhookId: string): string =>
  deterministicIdAfter(triggerEventId, triggerEventId, webhookId)

/**
 * Which webhooks of a firing wait for which: one whose templates read
 * `fromWebhook "<tag>"` goes out after the firing's webhooks with that tag
 * have finished, so it sees what they stored. Reads that form a cycle
 * (a waits for b, which waits for a) are not waited for.
 */
export const firingOrder = (webhooks: readonly FiringWebhook[]): Map<string, string[]> => {
  const waitsFor = new Map(webhooks.map((w) => [w.id, webhooks.filter((o) => o.id !== w.id && w.readsTags.has(o.configuration.tag)).map((o) => o.id)]))
  const reaches = (from: string, to: string, seen = new Set<string>()): boolean => {
    if (from === to) return true
    if (seen.has(from)) return false
    seen.add(from)
    return (waitsFor.get(from) ?? []).some((next) => reaches(next, to, seen))
  }
  return new Map([...waitsFor].map(([id, dependencies]) => [id, dependencies.filter((dependency) => !reaches(dependency, id))]))
}

/**
 * The links the credit line had when the trigger happened. The read model's are those unless the line changed at or
 * after the trigger, which happens when a trigger is handled again after a crash: then the line is folded up to it,
 * so a webhook linked since is not fired for it (nor one unlinked since left out).
 */
const linksAtTrigger = async (event: Trigger, services: Services): Promise<WebhookLinks | null> => {
  const links = await services.webhooks.directory.links(event.data.creditLineId)
  if (links !== null && links.changedAt !== null && links.changedAt < event.position) return links
  const { state } = await services.commands.load(creditLineAggregate, event.data.creditLineId, { before: event.position })
  if (!state.exists || state.configuration === null) return null
  const { onOrderWebhooks, onDeliveredWebhooks } = state.configuration
  return { organizationId: state.organizationId, onOrderWebhooks, onDeliveredWebhooks, changedAt: null }
}

const linkedWebhooks = async (event: Trigger, services: Services): Promise<FiringWebhook[]> => {
  const { directory } = services.webhooks
  const { organizationId } = event.data
  const links = await linksAtTrigger(event, services)
  if (links === null || links.organizationId !== organizationId) return []
  const ids = event.type === 'PaymentOrderApproved' ? links.onOrderWebhooks : links.onDeliveredWebhooks
  const found = await Promise.all(ids.map((id) => directory.webhook(id)))
  return found.filter((w): w is FiringWebhook => w !== null && !w.archived && w.organizationId === organizationId)
}

const deferred = () => {
  let resolve = () => {}
  const promise = new Promise<void>((done) => { resolve = done })
  return { promise, resolve }
}

/** What a firing needs per webhook: its send, given the fromWebhook values to render with. */
interface FiringPlan {
  webhooks: readonly FiringWebhook[]
  /** The values stored when the trigger was handled. */
  values: ResponseValues
  /** The values as stored now (for a webhook that waited for others). */
  currentValues(): Promise<ResponseValues>
  requestFor(webhook: FiringWebhook, values: ResponseValues): SendRequest
}

/**
 * Starts every send of a firing, each once a slot is free and the webhooks
 * whose tags it reads have finished, and resolves when all have started; each
 * exchange then finishes on its own, holding its slot until its outcome is
 * recorded. Slots are taken at the call, in webhook order, for the sends that
 * wait for nothing. Throws the first failure to start (the process manager
 * retries the trigger, and the sends already started are not started again).
 */
const startInOrder = async (plan: FiringPlan, services: Services): Promise<void> => {
  const { slots } = services.webhooks
  const sender = new WebhookSender(services)
  const waitsFor = firingOrder(plan.webhooks)
  const finished = new Map(plan.webhooks.map((w) => [w.id, deferred()]))
  const awaited = new Set([...waitsFor.values()].flat())

  const startOne = async (webhook: FiringWebhook): Promise<void> => {
    const done = finished.get(webhook.id)
    const dependencies = waitsFor.get(webhook.id) ?? []
    let handedOver = false
    try {
      if (dependencies.length > 0) await Promise.all(dependencies.map((id) => finished.get(id)?.promise))
      const request = plan.requestFor(webhook, dependencies.length > 0 ? await plan.currentValues() : plan.values)
      const release = await slots.acquire()
      let started: StartedSend | null
      try {
        started = await sender.start(request)
      } catch (error) {
        release()
        throw error
      }
      if (started === null) return release()
      handedOver = true
      slots.track(started.finish()
        .then(async ({ position }) => {
          release()
          // What a webhook waiting for this one reads through fromWebhook must be in the read model first.
          if (awaited.has(webhook.id)) await services.settle(position)
        })
        .catch((error: unknown) => {
          release()
          services.logger.error({ err: error, sendId: request.sendId, webhookId: webhook.id }, 'webhook send outcome could not be recorded')
        })
        .finally(() => done?.resolve()))
    } finally {
      if (!handedOver) done?.resolve()
    }
  }

  const results = await Promise.allSettled(plan.webhooks.map(startOne))
  const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected')
  if (failure !== undefined) throw failure.reason
}

/** What a trigger sends, read once: null when it sends nothing. */
const prepare = async (event: Trigger, services: Services): Promise<FiringPlan | null> => {
  const webhooks = await linkedWebhooks(event, services)
  if (webhooks.length === 0) return null
  const { organizationId, creditId } = event.data
  const approval = event.type === 'PaymentOrderApproved' ? event.data : null
  const orderId = approval?.orderId ?? null
  const source = await loadSource(services, {
    organizationId, creditId, orderId, approval,
    trigger: {
      Type: event.type, OriginalType: event.type, EventID: event.id, LogID: '',
      OccurredAt: event.type === 'PaymentOrderApproved' ? event.data.completedAt : event.data.disbursedAt,
    },
  })
  if (source === null) {
    // Only a failed credits projection (see /v1/health) leaves a trigger's credit out of the read model.
    services.logger.error({ event: event.id, creditId }, 'webhook firing skipped: the credit is not in the read model')
    return null
  }
  const commandContext: CommandContext = { organizationId, actorId: null, correlationId: event.metadata.correlationId, causationId: event.id }
  // One context per trigger; each send only adds its id.
  const context = templateContextOf({ ...source, trigger: { ...source.trigger, SendID: '' } })
  return {
    webhooks,
    values: source.values,
    currentValues: () => services.queries.webhookResponseValues.forCredit(organizationId, creditId),
    requestFor: (webhook, values) => {
      const sendId = firingSendId(event.id, webhook.id)
      return {
        sendId, organizationId, webhookId: webhook.id, configuration: webhook.configuration,
        context: contextFor({ ...context, Trigger: { ...context.Trigger, SendID: sendId } }, webhook), fromWebhook: fromWebhookLookup(values),
        trigger: { type: event.type, eventId: event.id, logId: null }, creditId, orderId, commandContext,
      }
    },
  }
}

/**
 * Fires a batch of triggers together: every trigger's sends take their slots
 * in log order at once, so the starts of the batch are appended in the same
 * turn and share group commits (one commit per trigger would bound the
 * firing by the disk's fsync rate), and each exchange leaves as soon as its
 * own start is durable. A trigger that fails (its read, or a start) fails
 * the batch from its index on; the supervisor redelivers it and the ones
 * after it, whose sends already started are not started again.
 */
const fireBatch = async (triggers: readonly Trigger[], services: Services): Promise<BatchOutcome> => {
  // Taken in log order before the reads run in parallel: each approval then renders the earlier ones applied.
  for (const trigger of triggers) if (trigger.type === 'PaymentOrderApproved') services.webhooks.approvals.take(trigger.data)
  const plans = await Promise.allSettled(triggers.map((trigger) => prepare(trigger, services)))
  const firings = plans.map(async (plan) => {
    if (plan.status === 'rejected') throw plan.reason
    if (plan.value !== null) await startInOrder(plan.value, services)
  })
  const results = await Promise.allSettled(firings)
  const failedAt = results.findIndex((result) => result.status === 'rejected')
  const failure = results[failedAt]
  return failure?.status === 'rejected' ? { failedAt, error: failure.reason } : { failedAt: null }
}

/**
 * Fires the webhooks a credit line links: `onOrderWebhooks` when one of its
 * payment orders is approved, `onDeliveredWebhooks` when a credit reaches
 * Desembolsado. Each (trigger event, webhook) pair is sent at most once: its
 * start is recorded under a deterministic id before anything leaves, and
 * the supervisor's batch is handled once every send of its triggers has
 * started, while the exchanges finish concurrently within
 * WEBHOOK_CONCURRENCY. Failed sends are not retried; people re-send them.
 */
export const webhookFiringProcess = defineProcess<Services, (typeof triggerTypes)[number]>({
  name: 'webhookFiring',
  handles: triggerTypes,
  handle: async (trigger, services) => {
    const outcome = await fireBatch([trigger], services)
    if (outcome.failedAt !== null) throw outcome.error
  },
  handleBatch: fireBatch,
})

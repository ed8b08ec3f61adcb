import { PassThrough, type Writable } from 'node:stream'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { filter } from 'rxjs'
import { isEventOf, type RecordedEvent, type RecordedOf } from '../events/catalogue.js'
import { exportEventTypes } from '../events/export.js'
import type { Services } from '../services.js'
import { AppError } from '../shared/errors.js'
import { concernsAccess } from './accessEvents.js'
import { organizationOf, principalOf, type Principal } from './context.js'
import { visibleTypes } from './exportHandlers.js'
import { needsJobDoc, updateOfDoc, updateOfEvent, updateOfJob, type ExportUpdate } from './exportViews.js'
import { requireUnrevoked } from './plugins/auth.js'
import { organizationAccess, requirePermissions } from './plugins/organization.js'

export const EXPORT_EVENT_NAME = 'export.updated'

/**
 * Live events held while a reconnecting client catches up, or while an earlier
 * event's job is read; a client further behind is dropped.
 */
const MAX_HELD = 10_000

/**
 * One server-sent-event connection. Writes never wait: a client whose unsent
 * bytes pass the limit is disconnected (it reconnects with Last-Event-ID and
 * catches up from the read model), so a slow reader never grows memory. The
 * disconnection destroys the stream rather than ending it: an end would wait
 * behind the bytes the client is not reading, holding them, the connection
 * and its subscriptions for as long as the client stays connected.
 */
export class SseChannel {
  private closed = false

  constructor(private readonly out: Writable, private readonly maxBufferedBytes: number, private readonly onDrop: () => void = () => undefined) {}

  get isClosed(): boolean {
    return this.closed
  }

  private write(text: string): boolean {
    if (this.closed) return false
    if (this.out.writableLength > this.maxBufferedBytes) {
      this.onDrop()
      this.closed = true
      this.out.destroy()
      return false
    }
    this.out.write(text)
    return true
  }

  send(id: number, event: string, data: unknown): boolean {
    return this.write(`id: ${id}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`)
  }

  comment(text: string): boolean {
    return this.write(`: ${text}\n\n`)
  }

  retry(ms: number): boolean {
    return this.write(`retry: ${ms}\n\n`)
  }

  close(): void {
    if (this.closed) return
    this.closed = true
    this.out.end()
  }
}

/** The access token's subject a stream is counted against. */
export type StreamHolder = Pick<Principal, 'kind' | 'id'>

// A user and a client are told apart by kind as well as id: their id spaces are not promised to be disjoint.
const holderKeyOf = (holder: StreamHolder): string => `${holder.kind}:${holder.id}`

/** What a refused stream is told to wait: a slot frees only when one of the principal's streams ends, which no clock foretells. */
const STREAM_LIMIT_RETRY_SECONDS = 30

/**
 * Export event streams open per principal on one instance, so one tenant
 * cannot hold every socket and the memory behind them. A principal's entry
 * leaves the map with its last stream: the map holds only principals with a
 * stream open.
 */
export class StreamCounts {
  private readonly open = new Map<string, number>()

  constructor(private readonly limit: number) {}

  /** Principals holding at least one stream. */
  get size(): number {
    return this.open.size
  }

  countOf(principal: StreamHolder): number {
    return this.open.get(holderKeyOf(principal)) ?? 0
  }

  /** One more stream of the principal, or null at the limit. The release frees it once, however often it is called. */
  acquire(principal: StreamHolder): (() => void) | null {
    const key = holderKeyOf(principal)
    const held = this.open.get(key) ?? 0
    if (held >= this.limit) return null
    this.open.set(key, held + 1)
    let released = false
    return () => {
      if (released) return
      released = true
      const left = (this.open.get(key) ?? 0) - 1
      if (left > 0) this.open.set(key, left)
      else this.open.delete(key)
    }
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The export event streams open on this instance, per principal: one per app, shared by the canonical and legacy routes. */
    exportStreams: StreamCounts
  }
}

/** One of the caller's stream slots, or the 429 refusal, before anything of the stream is sent. */
const acquireStreamSlot = (request: FastifyRequest, services: Services, principal: Principal): (() => void) => {
  const release = request.server.exportStreams.acquire(principal)
  if (release !== null) return release
  const limit = services.config.exportsSseMaxStreamsPerPrincipal
  throw new AppError('EXPORT_STREAM_LIMIT_REACHED',
    `this ${principal.kind} already holds ${limit} open export event streams on this instance, the limit EXPORTS_SSE_MAX_STREAMS_PER_PRINCIPAL sets; ` +
    `close one, or retry in ${STREAM_LIMIT_RETRY_SECONDS} seconds`,
    { limit, retryAfter: STREAM_LIMIT_RETRY_SECONDS }, { 'retry-after': String(STREAM_LIMIT_RETRY_SECONDS) })
}

type ExportRecorded = RecordedOf<(typeof exportEventTypes)[number]>

// The hub hands every subscriber the same event object: one read per event, however many clients follow the organization.
const jobUpdates = new WeakMap<ExportRecorded, Promise<ExportUpdate>>()

/** The update of an event that needs its job's read model (never rejects: without the document, the event alone). */
const jobUpdateOf = (services: Services, event: ExportRecorded): Promise<ExportUpdate> => {
  const known = jobUpdates.get(event)
  if (known !== undefined) return known
  const update = services.queries.exportJobs.get(event.data.organizationId, event.data.orderId).then(
    (doc) => updateOfJob(event, doc, services.clock.now()),
    (error: unknown) => {
      services.logger.warn({ err: error, orderId: event.data.orderId }, 'export event stream could not read a job; sending what its event says')
      return updateOfEvent(event)
    },
  )
  jobUpdates.set(event, update)
  return update
}

const lastEventIdOf = (request: FastifyRequest): number | null => {
  const raw = request.headers['last-event-id']
  if (typeof raw !== 'string' || !/^\d{1,16}$/.test(raw.trim())) return null
  return Number(raw.trim())
}

/**
 * GET /exports/sse (and its legacy twin): `export.updated` events of the
 * caller's organization, only of jobs whose type GET /exports lists to the
 * caller, each with the global position of its event as `id` and the job's
 * state as of that event, as the read model has it (a failed, expired or
 * file-deleted job keeps its rows and expiry).
 * A client that reconnects with `Last-Event-ID` first gets the current state
 * of every job changed after that position (from the read model), then the
 * live events; a heartbeat comment keeps proxies from closing the idle stream.
 * The stream ends when the access it was opened with ends (checked after each
 * event that concerns its caller, client, sign-in or organization, and at each
 * heartbeat for the token's expiry) or narrows to other job types: the client's reconnection is then checked anew,
 * as any request is. A principal holding EXPORTS_SSE_MAX_STREAMS_PER_PRINCIPAL streams on this instance is refused
 * another (429 EXPORT_STREAM_LIMIT_REACHED) until one ends.
 */
export const streamExportEvents = (services: Services, request: FastifyRequest, reply: FastifyReply): FastifyReply => {
  const organization = organizationOf(request)
  const organizationId = organization.id
  const types = visibleTypes(organization)
  const visible: ReadonlySet<string> = new Set(types)
  const followed = (event: RecordedEvent): event is ExportRecorded =>
    isEventOf(event, exportEventTypes) && event.data.organizationId === organizationId && visible.has(event.data.exportType)
  const { config } = services
  const principal = principalOf(request)
  const required = request.routeOptions.config.permissions ?? []
  const release = acquireStreamSlot(request, services, principal)
  const out = new PassThrough()
  // Whichever closes first, however the stream ends (and even if what follows throws): the response always closes, the stream when it is destroyed.
  reply.raw.once('close', release)
  out.once('close', release)
  const channel = new SseChannel(out, config.exportsSseMaxBufferBytes, () =>
    request.log.warn({ organizationId }, 'export event stream dropped a client that fell behind'))
  const lastEventId = lastEventIdOf(request)
  let held: ExportRecorded[] | null = lastEventId === null ? null : []
  const sentDuringCatchUp = new Map<string, number>()

  const forward = (position: number, update: ExportUpdate) => channel.send(position, EXPORT_EVENT_NAME, update)
  // Events behind a read in flight, sent in order once it answers: a later event never overtakes an earlier one.
  let tail: Promise<void> | null = null
  let waiting = 0
  /** Live events carry the job's state as a reconnecting client would read it; the read starts now, the send waits its turn. */
  const deliver = (event: ExportRecorded): void => {
    if (channel.isClosed) return
    const update = needsJobDoc(event.type) ? jobUpdateOf(services, event) : updateOfEvent(event)
    if (tail === null && !(update instanceof Promise)) {
      forward(event.position, update)
      return
    }
    if (++waiting > MAX_HELD) {
      channel.close()
      return
    }
    const sent: Promise<void> = (tail ?? Promise.resolve())
      .then(() => update)
      .then((ready) => {
        waiting -= 1
        forward(event.position, ready)
        if (tail === sent) tail = null
      })
      .catch((error: unknown) => {
        request.log.error({ err: error }, 'export event stream could not send an event')
        channel.close()
      })
    tail = sent
  }
  const subscription = services.hub.events$
    .pipe(filter(followed))
    .subscribe({
      next: (event) => {
        if (held === null) {
          deliver(event)
          return
        }
        held.push(event)
        if (held.length > MAX_HELD) channel.close()
      },
      complete: () => channel.close(),
    })
  const accessEnded = (reason: string) => {
    if (channel.isClosed) return
    request.log.info({ organizationId, principalId: principal.id, reason }, 'export event stream closed: the access it was opened with ended')
    channel.close()
  }
  /** Whether the caller still sees what this stream shows: its token unrevoked, the organization's membership and the same job types. */
  const accessHolds = async (): Promise<boolean> => {
    await requireUnrevoked(services.queries, principal)
    const context = await organizationAccess(services.queries, principal, organizationId)
    requirePermissions(context, required)
    const now = visibleTypes(context)
    return now.length === types.length && now.every((type) => visible.has(type))
  }
  const checkAccess = () => {
    accessHolds().then((holds) => { if (!holds) accessEnded('the export types it may see changed') }, (error: unknown) => {
      if (error instanceof AppError && (error.status === 401 || error.status === 403)) accessEnded(error.message)
      // A read that failed says nothing about the access: the stream stays, and the next event checks again.
      else request.log.error({ err: error, organizationId }, 'export event stream could not check its access')
    })
  }
  const accessChecks = services.hub.events$.pipe(filter(concernsAccess(principal, organizationId))).subscribe(checkAccess)
  // An event that ended the access between the request's own checks and this subscription.
  checkAccess()
  const heartbeat = setInterval(() => {
    if (services.clock.now().getTime() >= principal.expiresAtMs) accessEnded('the access token expired')
    else channel.comment('heartbeat')
  }, config.exportsSseHeartbeatMs)
  const cleanup = () => {
    clearInterval(heartbeat)
    subscription.unsubscribe()
    accessChecks.unsubscribe()
    channel.close()
  }
  reply.raw.once('close', cleanup)
  out.once('close', cleanup)

  const catchUp = async (after: number) => {
    for await (const doc of services.queries.exportJobs.changedSince(organizationId, after, types)) {
      if (channel.isClosed) return
      const position = doc._position ?? 0
      forward(position, updateOfDoc(doc, services.clock.now()))
      sentDuringCatchUp.set(doc._id, position)
    }
    const pending = held ?? []
    held = null
    for (const event of pending) {
      if ((sentDuringCatchUp.get(event.data.orderId) ?? 0) < event.position) deliver(event)
    }
    sentDuringCatchUp.clear()
  }

  reply
    .header('content-type', 'text/event-stream; charset=utf-8')
    .header('cache-control', 'no-cache, no-transform')
    .header('x-accel-buffering', 'no')
  channel.retry(5000)
  if (lastEventId !== null) {
    catchUp(lastEventId).catch((error: unknown) => {
      request.log.error({ err: error }, 'export event stream could not catch up')
      channel.close()
    })
  }
  return reply.send(out)
}

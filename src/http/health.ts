import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { Services } from '../services.js'

const Health = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('unavailable')]),
  live: Type.Boolean({ description: 'the process answers' }),
  ready: Type.Boolean({ description: 'stores reachable, read models caught up at start, no projection failed' }),
  stores: Type.Object({
    eventStore: Type.Object({ kind: Type.String(), up: Type.Boolean(), head: Type.Integer({ description: 'global position of the last event' }) }),
    readStore: Type.Object({ kind: Type.String(), up: Type.Boolean(), persistent: Type.Boolean() }),
    files: Type.Object({ kind: Type.String() }),
  }),
  projections: Type.Array(Type.Object({
    name: Type.String(),
    version: Type.Integer({ description: 'which code made its documents; a persistent read store rebuilds a projection recorded with another' }),
    position: Type.Integer(),
    lag: Type.Integer({ description: 'head minus position: events for SQLite, log bytes for EventStoreDB' }),
    failed: Type.Union([Type.String(), Type.Null()]),
  })),
  processes: Type.Array(Type.Object({
    name: Type.String(),
    retrying: Type.Union([Type.Object({
      eventId: Type.String(),
      type: Type.String(),
      position: Type.Integer(),
      attempts: Type.Integer(),
      since: Type.String({ format: 'date-time' }),
    }), Type.Null()], { description: 'the event it keeps failing on and retries until it passes (it goes on with nothing else meanwhile; each error is logged); null while nothing fails' }),
    givenUp: Type.Integer({ description: 'events given up since the start: refused by the service on every attempt, each logged' }),
  }), { description: 'the process managers (webhooks, exports, payments, …); empty when PROCESSES_ENABLED is false' }),
})

export const healthRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  app.get('/health', {
    config: { auth: 'public' },
    schema: {
      summary: 'Liveness and readiness, store status and projection lag',
      description: 'Answers 200 when ready, 503 when not (the body says why).',
      tags: ['Operations'],
      response: { 200: Health, 503: Health },
    },
  }, async (_request, reply) => {
    const report = await services.health()
    return reply.code(report.ready ? 200 : 503).send({
      status: report.ready ? 'ok' : 'unavailable',
      live: true,
      ready: report.ready,
      stores: { eventStore: report.eventStore, readStore: report.readStore, files: report.files },
      projections: report.projections,
      processes: report.processes,
    })
  })
}

import type { FastifyInstance } from 'fastify'
import { pino } from 'pino'
import t from 'tap'
import { buildApp } from '../../src/http/app.js'
import { createTestApp } from '../helpers/app.js'

t.test('a value outside a choice is told the values it may take, once, whether the choice is an enum or a union of literals', async (t) => {
  const svc = await createTestApp(t)
  const get = (url: string) => svc.call({ method: 'GET', url, token: svc.adminToken, organizationId: svc.organizationId })
  const errorsOf = async (url: string) => {
    const response = await get(url)
    t.equal(response.statusCode, 400, url)
    return response.json().data.errors
  }
  t.same(await errorsOf('/v1/credits?state=Foo'), [{ field: 'querystring.state', message: 'must be one of Solicitado, Aprobado, Rechazado, Desembolsado, Anulado, Pagado' }])
  const [profileType] = await errorsOf('/v1/profiles?type=3')
  t.match(profileType, { field: 'querystring.type', message: /^must be one of \d+(, \d+)+$/ }, 'a choice of numbers: one error, not one per value')
  const exportStatus = await errorsOf('/v1/exports?status=bogus')
  t.equal(exportStatus.length, 1)
  t.match(exportStatus[0], { field: 'querystring.status', message: /^must be one of .*queued.*done/ })
  const repeated = await errorsOf('/v1/exports?status=bogus&status=also')
  t.same(repeated.length, 1, 'a value of the wrong type (a repeated parameter) is the same mistake, said once')
  t.match(repeated[0], { field: 'querystring.status', message: /^must be one of .*queued/ })
  const blob = await errorsOf('/v1/exports/blobs/weekly')
  t.same(blob.length, 1)
  t.match(blob[0], { field: 'params.type', message: /^must be one of / })
})

t.test('a 501 the service answers on purpose (DRY_RUN_NOT_SUPPORTED) is a refusal: in the fail envelope, not logged as the service failing', async (t) => {
  const svc = await createTestApp(t)
  const logged: string[] = []
  const app: FastifyInstance = await buildApp({ ...svc.runtime, logger: pino({ level: 'error' }, { write: (line: string) => { logged.push(line.trim()) } }) })
  await app.ready()
  t.teardown(() => app.close())
  const response = await app.inject({
    method: 'POST', url: '/v1/exports?dryRun=true', payload: { type: 'payments' },
    headers: { authorization: `Bearer ${svc.adminToken}`, 'organization-id': svc.organizationId },
  })
  t.equal(response.statusCode, 501)
  t.match(response.json(), { status: 'fail', data: { code: 'DRY_RUN_NOT_SUPPORTED' } })
  t.same(logged, [], 'nothing at error level')
})

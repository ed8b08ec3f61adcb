import t from 'tap'
import { createTestApp } from '../helpers/app.js'
import { pngBytes } from '../helpers/files.js'

type Operation = { requestBody?: { content?: Record<string, unknown> } }

/** Export routes answer any body but JSON with their own 400 BIND_ERROR (docs/exports.md). */
const exportRoutes = new Set(['POST /v1/exports', 'POST /v1/reports/export', 'POST /v1/reports/export/estimate'])

t.test('a JSON body sent as text/plain answers 415 UNSUPPORTED_MEDIA_TYPE on every route taking JSON, as other types do, and writes nothing', async (t) => {
  const svc = await createTestApp(t, { config: { exportsLegacySunset: new Date('2999-01-01T00:00:00Z'), exportsLegacyReportsSunset: new Date('2999-01-01T00:00:00Z') } })
  const doc = (await svc.call({ method: 'GET', url: '/v1/openapi.json' })).json()
  const operations = Object.entries(doc.paths as Record<string, Record<string, Operation>>).flatMap(([path, methods]) =>
    Object.entries(methods)
      .filter(([, operation]) => Object.keys(operation.requestBody?.content ?? {}).includes('application/json'))
      .map(([method, operation]) => ({ method: method.toUpperCase(), path, operation })))
  t.ok(operations.length > 40, `${operations.length} operations take a JSON body`)
  const someId = '00000000-0000-4000-8000-000000000001'
  for (const { method, path } of operations) {
    const name = `${method} ${path}`
    const url = path.replace(/\{[^}]+\}/g, someId)
    for (const contentType of ['text/plain', 'text/plain; charset=utf-8', 'Text/Plain']) {
      const head = await svc.runtime.eventStore.headPosition()
      const response = await svc.call({
        method: method as 'POST', url, token: svc.adminToken, organizationId: svc.organizationId,
        headers: { 'content-type': contentType, 'config-organization-id': svc.organizationId }, payload: '{"name":"x","type":"natural"}',
      })
      if (exportRoutes.has(name)) {
        t.equal(response.statusCode, 400, `${name} ${contentType}`)
        t.equal(response.json().data.code, 'BIND_ERROR', `${name} ${contentType}: the export routes' own refusal`)
        continue
      }
      t.equal(response.statusCode, 415, `${name} ${contentType}`)
      t.same(response.json(), { status: 'fail', data: { code: 'UNSUPPORTED_MEDIA_TYPE', message: 'Unsupported Media Type' } }, `${name} ${contentType}`)
      t.equal(await svc.runtime.eventStore.headPosition(), head, `${name} ${contentType}: nothing appended`)
    }
  }
})

t.test('a JSON route answers text/plain as it answers CSV or a form, and still takes application/json', async (t) => {
  const svc = await createTestApp(t)
  const post = (contentType: string, payload: string) => svc.call({
    method: 'POST', url: '/v1/organizations', token: svc.adminToken, headers: { 'content-type': contentType }, payload,
  })
  const answers = await Promise.all([
    post('text/plain', '{"name":"Acme"}'), post('text/csv', 'name\nAcme'), post('application/x-www-form-urlencoded', 'name=Acme'),
  ])
  t.same(answers.map((a) => [a.statusCode, a.json().data.code]), [[415, 'UNSUPPORTED_MEDIA_TYPE'], [415, 'UNSUPPORTED_MEDIA_TYPE'], [415, 'UNSUPPORTED_MEDIA_TYPE']])
  t.same((await svc.runtime.queries.organizations.list({ offset: 0, limit: 10 })).total, 1, 'no organization was created')
  const json = await post('application/json', '{"name":"Acme"}')
  t.equal(json.statusCode, 201, json.body)
})

t.test('routes that take other bodies keep them: the OAuth form, a raw upload declared as text/plain', async (t) => {
  const svc = await createTestApp(t)
  const text = await svc.app.inject({
    method: 'POST', url: '/v1/oauth/token', headers: { 'content-type': 'text/plain' }, payload: `grant_type=client_credentials`,
  })
  t.equal(text.statusCode, 400)
  t.equal(text.json().error, 'invalid_request', 'the token endpoint answers in RFC 6749 terms, as before')
  const profile = await svc.call({
    method: 'POST', url: '/v1/profiles', token: svc.adminToken, organizationId: svc.organizationId, headers: { 'config-organization-id': svc.organizationId },
    payload: { type: 'natural', natural: { firstName: 'Ana', lastName: 'Gómez', documentType: 'CC', documentNumber: '1020304050' } },
  })
  t.equal(profile.statusCode, 201, profile.body)
  const upload = await svc.call({
    method: 'PUT', url: `/v1/profiles/${profile.json().data.ID}/files/work-certificate?filename=scan.png`, token: svc.adminToken,
    headers: { 'config-organization-id': svc.organizationId, 'organization-id': svc.organizationId, 'content-type': 'text/plain' }, payload: pngBytes,
  })
  t.equal(upload.statusCode, 201, upload.body)
  t.equal(upload.json().data.file.contentType, 'image/png', 'the upload takes any declared type and sniffs the bytes')
})

t.test('a POST without a body labelled text/plain, as a browser\'s fetch sends it, goes through; a text body is still 415', async (t) => {
  const svc = await createTestApp(t)
  const post = (url: string, payload: string) => svc.call({
    method: 'POST', url, token: svc.adminToken, organizationId: svc.organizationId, headers: { 'content-type': 'text/plain;charset=UTF-8' }, payload,
  })
  const activate = await post(`/v1/organizations/${svc.organizationId}/activate`, '')
  t.equal(activate.statusCode, 200, `an empty text/plain body on a route without one (${activate.body.slice(0, 120)})`)
  const withText = await post(`/v1/organizations/${svc.organizationId}/activate`, 'hello')
  t.equal(withText.statusCode, 415)
  const emptyOnJson = await post('/v1/organizations', '')
  t.equal(emptyOnJson.statusCode, 400, 'an empty body where JSON is required is the missing body, as with no type')
  t.equal(emptyOnJson.json().data.code, 'VALIDATION_ERROR')
})

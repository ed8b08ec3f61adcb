import t from 'tap'
import { allProcesses } from '../../src/processes/index.js'
import { allProjections } from '../../src/projections/index.js'
import { createTestApp } from '../helpers/app.js'

t.test('an unknown route answers 404 in the envelope', async (t) => {
  const svc = await createTestApp(t)
  const response = await svc.call({ method: 'GET', url: '/v1/nothing-here?x=1' })
  t.equal(response.statusCode, 404)
  t.same(response.json(), { status: 'fail', data: { code: 'ROUTE_NOT_FOUND', message: 'Route GET /v1/nothing-here not found' } })
})

t.test('validation failures list each bad field', async (t) => {
  const svc = await createTestApp(t)
  const response = await svc.call({
    method: 'POST', url: `/v1/organization/${svc.organizationId}/users`, token: svc.adminToken,
    payload: { username: 'x', password: 'short', roleTemplateId: 'not-a-uuid', extra: true },
  })
  t.equal(response.statusCode, 400)
  const body: { status: string; data: { code: string; errors: Array<{ field: string; message: string }> } } = response.json()
  t.equal(body.status, 'fail')
  t.equal(body.data.code, 'VALIDATION_ERROR')
  t.same(body.data.errors.map((e) => e.field).sort(), ['body.extra', 'body.password', 'body.roleTemplateId', 'body.username'])
})

t.test('malformed JSON and wrong content types are 4xx in the envelope', async (t) => {
  const svc = await createTestApp(t)
  const broken = await svc.call({
    method: 'POST', url: '/v1/organizations', token: svc.adminToken, headers: { 'content-type': 'application/json' }, payload: '{"name":',
  })
  t.equal(broken.statusCode, 400)
  t.equal(broken.json().status, 'fail')
  const text = await svc.call({ method: 'POST', url: '/v1/organizations', token: svc.adminToken, headers: { 'content-type': 'text/csv' }, payload: 'a,b' })
  t.equal(text.statusCode, 415)
  t.equal(text.json().data.code, 'UNSUPPORTED_MEDIA_TYPE')
})

t.test('a path the router cannot take answers in the envelope: a percent-escape that does not decode, a parameter longer than any id', async (t) => {
  const svc = await createTestApp(t)
  const undecodable = await svc.call({ method: 'GET', url: '/v1/organizations/%ZZ', token: svc.adminToken })
  t.equal(undecodable.statusCode, 400)
  t.equal(undecodable.json().data.code, 'BAD_REQUEST')
  const long = await svc.call({ method: 'GET', url: `/v1/organizations/${'x'.repeat(300)}`, token: svc.adminToken })
  t.equal(long.statusCode, 414)
  t.same(long.json(), { status: 'fail', data: { code: 'URI_TOO_LONG', message: 'a path parameter is longer than any this API takes' } })
  const fileId = await svc.call({ method: 'GET', url: `/v1/export/orders/file/${'a'.repeat(128)}`, token: svc.adminToken, organizationId: svc.organizationId })
  t.equal(fileId.statusCode, 404, 'a 128-character file id, which the route takes, reaches the route')
})

t.test('a number beyond a double, or a leap second, is refused by validation rather than failing deeper in', async (t) => {
  const svc = await createTestApp(t)
  const query = async (url: string) => {
    const response = await svc.call({ method: 'GET', url, token: svc.adminToken, organizationId: svc.organizationId })
    return { status: response.statusCode, body: response.json() }
  }
  for (const page of ['9'.repeat(400), String(2 ** 53)]) {
    const { status, body } = await query(`/v1/organizations?page=${page}`)
    t.equal(status, 400, `page=${page.slice(0, 20)}`)
    t.same(body.data.errors, [{ field: 'querystring.page', message: `must be <= ${Number.MAX_SAFE_INTEGER}` }])
  }
  t.same((await query('/v1/organizations?page=1e999')).body.data.errors, [{ field: 'querystring.page', message: 'must be integer' }],
    'an exponent is no integer, however large')
  t.equal((await query(`/v1/organizations?page=${Number.MAX_SAFE_INTEGER}`)).status, 200, 'the largest safe integer is still a page')
  const leap = await query('/v1/exports?requestedFrom=2016-12-31T23:59:60Z')
  t.equal(leap.status, 400)
  t.same(leap.body.data.errors, [{ field: 'querystring.requestedFrom', message: 'must match format "date-time"' }])
  t.equal((await query('/v1/exports?requestedFrom=2016-12-31T23:59:59Z')).status, 200)
  for (const outside of ['9999-12-31T23:30:00-01:00', '0000-01-01T00:30:00+01:00']) {
    const beyond = await query(`/v1/exports?requestedFrom=${encodeURIComponent(outside)}`)
    t.equal(beyond.status, 400, `${outside} is outside the years 0000–9999 in UTC`)
    t.same(beyond.body.data.errors, [{ field: 'querystring.requestedFrom', message: 'must match format "date-time"' }])
  }
  t.equal((await query(`/v1/exports?requestedFrom=${encodeURIComponent('9999-12-31T22:30:00-01:00')}`)).status, 200, 'the last hour of 9999 in UTC is a time')
  const overflow = await svc.call({
    method: 'POST', url: '/v1/taxes', token: svc.adminToken, organizationId: svc.organizationId, headers: { 'content-type': 'application/json' },
    payload: '{"name":"IVA","type":"VAT","percentage":1e999,"applies_to":["PAYMENT"]}',
  })
  t.equal(overflow.statusCode, 400, 'a JSON body\'s 1e999 parses to Infinity and is refused')
  t.equal(overflow.json().data.errors[0].field, 'body.percentage')
})

t.test('a number in a query is written as a decimal: spaces, hexadecimal and other spellings JavaScript reads are refused', async (t) => {
  const svc = await createTestApp(t)
  const page = (value: string) => svc.call({ method: 'GET', url: `/v1/organizations?page=${value}`, token: svc.adminToken })
  for (const value of ['%20', '%20%20', '%092', '0x10', '0b11', '0o7', '1_000', 'Infinity', '2%20']) {
    const response = await page(value)
    t.equal(response.statusCode, 400, `page=${value}`)
    t.same(response.json().data.errors, [{ field: 'querystring.page', message: 'must be integer' }], `page=${value}`)
  }
  for (const value of ['1', '%2B1', '01']) t.equal((await page(value)).statusCode, 200, `page=${value} is written as an integer`)
  for (const value of ['1.0', '1e0']) {
    t.same((await page(value)).json().data.errors, [{ field: 'querystring.page', message: 'must be integer' }], `page=${value} is a decimal, not an integer`)
  }
  t.equal((await page('')).statusCode, 400, 'an empty page is refused, as before')
})

t.test('an integer in a query is digits alone: an exponent, a trailing dot or a fraction is refused as the wrong type on every route', async (t) => {
  const svc = await createTestApp(t)
  const get = (url: string) => svc.call({ method: 'GET', url, token: svc.adminToken, organizationId: svc.organizationId })
  const someCredit = '00000000-0000-4000-8000-000000000001'
  const cases: Array<[string, string]> = [
    ['/v1/credits?page=', 'page'], ['/v1/credits?limit=', 'limit'], ['/v1/creditor/credit-limits?offset=', 'offset'],
    ['/v1/creditor/credit-limits?limit=', 'limit'], [`/v1/credits/${someCredit}/events?from=`, 'from'], ['/v1/exports?page=', 'page'],
    ['/v1/organizations?page=', 'page'],
  ]
  for (const [url, name] of cases) {
    for (const value of ['1e2', '1E2', '1.', '1.0', '.5', '1e0', '1e9', '2.5', '%2B1e1']) {
      const response = await get(`${url}${value}`)
      t.equal(response.statusCode, 400, `${url}${value}`)
      t.same(response.json().data, { code: 'VALIDATION_ERROR', message: `querystring.${name} must be integer`, errors: [{ field: `querystring.${name}`, message: 'must be integer' }] },
        `${url}${value}`)
    }
    for (const value of ['1', '%2B1', '001', '10']) {
      const response = await get(`${url}${value}`)
      t.not(response.statusCode, 400, `${url}${value} is an integer`)
    }
  }
  t.equal((await get(`/v1/credits/${someCredit}/events?from=100`)).statusCode, 404, 'a well-written integer reaches the route (which does not know the credit)')
  t.same((await get('/v1/credits?page=010')).json().pagination.current_page, 10, 'leading zeros are still read as decimal digits')
})

t.test('an unexpected failure answers 500 without internals', async (t) => {
  const svc = await createTestApp(t)
  svc.runtime.queries.organizations.list = async () => { throw new Error('secret database detail at /srv/db') }
  const response = await svc.call({ method: 'GET', url: '/v1/organizations', token: svc.adminToken })
  t.equal(response.statusCode, 500)
  t.same(response.json(), { status: 'error', message: 'Internal server error' })
  t.notMatch(response.body, /secret|stack|\/srv/)
})

t.test('every response carries the request id, and a caller\'s id is kept', async (t) => {
  const svc = await createTestApp(t)
  const generated = await svc.call({ method: 'GET', url: '/v1/health' })
  t.match(generated.headers['x-request-id'], /^[0-9a-f-]{36}$/)
  const given = await svc.call({ method: 'GET', url: '/v1/health', headers: { 'x-request-id': 'trace-42' } })
  t.equal(given.headers['x-request-id'], 'trace-42')
  const hostile = await svc.call({ method: 'GET', url: '/v1/health', headers: { 'x-request-id': 'bad id\nwith newline' } })
  t.not(hostile.headers['x-request-id'], 'bad id\nwith newline')
})

t.test('health shows stores, and each projection\'s version and lag', async (t) => {
  const svc = await createTestApp(t)
  const response = await svc.call({ method: 'GET', url: '/v1/health' })
  t.equal(response.statusCode, 200)
  const body = response.json()
  t.match(body, { status: 'ok', live: true, ready: true, stores: { eventStore: { kind: 'sqlite', up: true }, readStore: { kind: svc.config.readStore, up: true } } })
  t.same(body.projections.map((p: { name: string; version: number }) => [p.name, p.version]),
    allProjections.map((p) => [p.name, p.version]), 'every projection with the version its code declares')
  t.ok(body.projections.every((p: { lag: number }) => p.lag === 0))
  t.same(body.processes, allProcesses.map((p) => ({ name: p.name, retrying: null, givenUp: 0 })), 'every process manager, none failing')
})

t.test('the OpenAPI document lists what every route answers besides its own failures, each failure as JSON', async (t) => {
  const svc = await createTestApp(t)
  const doc = (await svc.call({ method: 'GET', url: '/v1/openapi.json' })).json()
  type Operation = { parameters?: Array<{ in: string }>; deprecated?: boolean; responses: Record<string, { content?: Record<string, unknown> }> }
  const operations = Object.entries(doc.paths as Record<string, Record<string, Operation>>)
    .flatMap(([path, methods]) => Object.entries(methods).map(([method, operation]) => ({ name: `${method.toUpperCase()} ${path}`, operation })))
  const withParams = operations.filter(({ operation }) => operation.parameters?.some((p) => p.in === 'path'))
  t.ok(withParams.length > 50)
  t.same(withParams.filter(({ operation }) => !('400' in operation.responses)).map(({ name }) => name), [], 'a malformed path parameter is a 400')
  const legacy = operations.filter(({ operation }) => operation.deprecated === true)
  t.equal(legacy.length, 28, 'the 28 legacy routes')
  t.same(legacy.filter(({ operation }) => !('404' in operation.responses)).map(({ name }) => name), [], 'each answers 404 after its sunset')
  const failuresNotJson = operations.flatMap(({ name, operation }) => Object.entries(operation.responses)
    .filter(([code, response]) => Number(code) >= 400 && Object.keys(response.content ?? { 'application/json': {} }).some((type) => type !== 'application/json'))
    .map(([code]) => `${name} ${code}`))
  t.same(failuresNotJson, [], 'a CSV or event-stream route\'s failures are the JSON envelope')
  t.match(doc.paths['/v1/exports/{id}/file'].get.responses['410'], { content: { 'application/json': { schema: { $ref: '#/components/schemas/FailEnvelope' } } } })
})

t.test('the OpenAPI document is generated from the route schemas', async (t) => {
  const svc = await createTestApp(t)
  const response = await svc.call({ method: 'GET', url: '/v1/openapi.json' })
  t.equal(response.statusCode, 200)
  const doc = response.json()
  t.equal(doc.openapi, '3.1.0')
  t.ok(doc.paths['/v1/oauth/token']?.post, 'token endpoint documented')
  t.same(doc.paths['/v1/oauth/token'].post.security, [], 'public routes need no token')
  t.ok(doc.paths['/v1/organization/{entityid}/role-template']?.get?.parameters?.some((p: { name: string }) => p.name === 'limit'))
  t.ok(doc.components.schemas.FailEnvelope, 'the failure envelope is a named schema')
  const ui = await svc.call({ method: 'GET', url: '/docs' })
  t.ok(ui.statusCode < 400, 'docs UI served')
})

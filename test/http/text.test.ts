import t from 'tap'
import { createTestApp } from '../helpers/app.js'

const taxBody = (name: string) => `{"name": "${name}", "percentage": 19, "type": "VAT", "applies_to": ["FEE"], "minimum_amount": 0}`

t.test('a JSON body holding half a surrogate pair is refused in the envelope; whole pairs are text and kept', async (t) => {
  const svc = await createTestApp(t)
  const post = (url: string, payload: string) => svc.call({
    method: 'POST', url, token: svc.adminToken, organizationId: svc.organizationId, headers: { 'content-type': 'application/json' }, payload,
  })
  for (const name of ['IVA \\ud800', 'IVA \\udc00 low', '\\ude00\\ud83d reversed']) {
    const refused = await post('/v1/taxes', taxBody(name))
    t.equal(refused.statusCode, 400, name)
    t.match(refused.json(), { status: 'fail', data: { code: 'BAD_REQUEST', message: /half a UTF-16 surrogate pair/ } })
  }
  const inKey = await post('/v1/taxes', `{"name": "IVA", "\\ud800": 1}`)
  t.equal(inKey.statusCode, 400, 'in a key too')
  const exportRefused = await post('/v1/exports', '{"type": "credits", "format": "csv", "filters": {"name": "\\udfff"}}')
  t.equal(exportRefused.statusCode, 400)
  t.match(exportRefused.json().data, { code: 'BIND_ERROR', errors: [{ field: 'body', message: /half a UTF-16 surrogate pair/ }] }, 'export routes answer in their own error shape')
  t.equal((await svc.call({ method: 'GET', url: '/v1/taxes', token: svc.adminToken, organizationId: svc.organizationId })).json().data.length, 0, 'nothing was written')

  const kept = await post('/v1/taxes', taxBody('IVA \\ud83d\\ude00 \u{20000}'))
  t.equal(kept.statusCode, 201)
  t.equal(kept.json().data.name, 'IVA \u{1F600} \u{20000}')
})

import t from 'tap'
import { keyedSignatureId } from '../../src/commands/signature.js'
import { deterministicId } from '../../src/shared/ids.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { pngBytes } from '../helpers/files.js'
import { createOrganization } from '../helpers/members.js'
import { memberToken } from '../helpers/organizations.js'
import { streamEventTypes } from '../helpers/streams.js'
import { oneCreatedOthersReturned, refusesMalformedKeys } from '../helpers/idempotency.js'

const documentId = deterministicId('test', 'document', 'keyed-agreement')

const signerIn = async (svc: TestApp, organizationId: string): Promise<string> => {
  const response = await svc.call({
    method: 'POST', url: '/v1/profiles', token: svc.adminToken,
    headers: { 'config-organization-id': organizationId, 'organization-id': organizationId },
    payload: { type: 'natural', natural: { firstName: 'Ana', lastName: 'Gómez', documentType: 'CC', documentNumber: '1020304050', email: 'ana@example.co' } },
  })
  if (response.statusCode !== 201) throw new Error(response.body)
  return response.json().data.ID
}

const scansOf = (svc: TestApp, organizationId = svc.organizationId) => ({
  post: (key: string | undefined, payload: object, document = documentId) => svc.call({
    method: 'POST', url: `/v1/document/${document}/signature-scan`, token: svc.adminToken, organizationId, payload,
    ...(key === undefined ? {} : { headers: { 'idempotency-key': key } }),
  }),
  count: async (document = documentId): Promise<number> =>
    (await svc.call({ method: 'GET', url: `/v1/document/${document}/signature-scan`, token: svc.adminToken, organizationId })).json().pagination.total_items,
})

t.test('a signature scan requested with an Idempotency-Key: 201 first, 200 with the scan as it is now when sent again, 409 for another request', async (t) => {
  const svc = await createTestApp(t)
  const signerId = await signerIn(svc, svc.organizationId)
  const api = scansOf(svc)
  const body = { signerId, requiredFiles: [['image'], ['document-front', 'verification']] }
  const first = await api.post('scan-1', body)
  t.equal(first.statusCode, 201)
  const scan = first.json().data
  t.equal(scan.id, keyedSignatureId(svc.organizationId, 'scan-1'), 'the id derives from the organization and the Key')
  const again = await api.post('scan-1', body)
  t.equal(again.statusCode, 200)
  t.same(again.json(), first.json(), 'the same answer, the same scan')
  t.equal((await api.post('scan-1', { signerId, requiredFiles: [['verification', 'document-front'], ['image']] })).statusCode, 200,
    'the groups and their alternatives in another order: the same request')

  const uploaded = await svc.call({
    method: 'PUT', url: `/v1/document/${documentId}/signature-scan/${scan.id}/signature-file/image`, token: svc.adminToken,
    headers: { 'content-type': 'application/octet-stream' }, payload: pngBytes,
  })
  t.equal(uploaded.statusCode, 201)
  const afterUpload = await api.post('scan-1', body)
  t.equal(afterUpload.statusCode, 200)
  t.same(afterUpload.json().data.missing, [['document-front', 'verification']], 'the scan as it is now')

  const otherSigner = await signerIn(svc, svc.organizationId)
  for (const [what, payload, document] of [
    ['another signer', { ...body, signerId: otherSigner }, documentId],
    ['other files', { signerId, requiredFiles: [['image']] }, documentId],
    ['another document', body, deterministicId('test', 'document', 'other')],
  ] as const) {
    const reused = await api.post('scan-1', payload, document)
    t.equal(reused.statusCode, 409, what)
    t.same(reused.json().data, {
      code: 'IDEMPOTENCY_KEY_REUSED', message: 'this Idempotency-Key was already used for a different signature scan request', key: 'scan-1', signatureId: scan.id,
    }, what)
  }
  t.same(await streamEventTypes(svc, 'signature', scan.id), ['SignatureScanRequested', 'SignatureFileUploaded'], 'one request, and the upload')
  t.equal(await api.count(), 1)
})

t.test('concurrent requests with one Key make one scan; another organization\'s same Key is its own; no Key, a new scan each time', async (t) => {
  const svc = await createTestApp(t)
  const signerId = await signerIn(svc, svc.organizationId)
  const api = scansOf(svc)
  const body = { signerId, requiredFiles: [['image']] }
  const racing = await Promise.all(Array.from({ length: 6 }, () => api.post('race', body)))
  oneCreatedOthersReturned(t, racing)
  t.same([...new Set(racing.map((r) => r.json().data.id))], [keyedSignatureId(svc.organizationId, 'race')])

  const other = await createOrganization(svc, 'Otra S.A.')
  const theirs = await scansOf(svc, other).post('race', { signerId: await signerIn(svc, other), requiredFiles: [['image']] })
  t.equal(theirs.statusCode, 201)
  t.equal(theirs.json().data.id, keyedSignatureId(other, 'race'))

  const plain = await Promise.all([api.post(undefined, body), api.post(undefined, body)])
  t.same(plain.map((r) => r.statusCode), [201, 201])
  t.not(plain[0]?.json().data.id, plain[1]?.json().data.id)
  t.equal(await api.count(), 3)

  await refusesMalformedKeys(t, (key) => api.post(key, body))
  t.equal((await api.post('bad-first', { signerId: theirs.json().data.id, requiredFiles: [['image']] })).statusCode, 400, 'a signer of no profile here')
  t.equal((await api.post('bad-first', body)).statusCode, 201, 'a refused request leaves its Key free')
})

t.test('a requester who may not read scans (WriteDocument alone) is never handed the scan as it is now, nor its id, by a retry', async (t) => {
  const svc = await createTestApp(t)
  const signerId = await signerIn(svc, svc.organizationId)
  const writer = await memberToken(svc, svc.organizationId, ['WriteDocument'])
  const post = (payload: object) => svc.call({
    method: 'POST', url: `/v1/document/${documentId}/signature-scan`, token: writer, organizationId: svc.organizationId, payload,
    headers: { 'idempotency-key': 'writer-key' },
  })
  const body = { signerId, requiredFiles: [['image']] }
  t.equal((await post(body)).statusCode, 201, 'the first request makes the scan, answered as made')
  for (const [what, payload] of [['the same request', body], ['another', { signerId, requiredFiles: [['verification']] }]] as const) {
    const again = await post(payload)
    t.equal(again.statusCode, 409, what)
    t.equal(again.json().data.code, 'IDEMPOTENCY_KEY_REUSED')
    t.notOk('signatureId' in again.json().data, `${what}: the 409 does not name the scan`)
  }
  const reader = await scansOf(svc).post('writer-key', body)
  t.equal(reader.statusCode, 200, 'a caller who may read it gets it back')
})

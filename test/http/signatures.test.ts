import { filter, firstValueFrom } from 'rxjs'
import t from 'tap'
import { deterministicId } from '../../src/shared/ids.js'
import type { Permission } from '../../src/shared/permissions.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { pdfBytes, pngBytes, textBytes } from '../helpers/files.js'
import { addMember, createOrganization } from '../helpers/members.js'

const documentId = deterministicId('test', 'document', 'loan-agreement')
const allDeletes: Permission[] = ['DeleteSignatureImage', 'DeleteSignatureDocumentFront', 'DeleteSignatureDocumentBack', 'DeleteSignatureVerification']

interface SignatureBody {
  id: string
  status: string
  requiredFiles: string[][]
  missing: string[][]
  files: Array<{ fileId: string; field: string; deleted: boolean }>
}

const base = (signatureId: string, document = documentId) => `/v1/document/${document}/signature-scan/${signatureId}`

const createSigner = async (svc: TestApp, organizationId: string, email = 'ana@example.co'): Promise<string> => {
  const response = await svc.call({
    method: 'POST', url: '/v1/profiles', token: svc.adminToken,
    headers: { 'config-organization-id': organizationId, 'organization-id': organizationId },
    payload: { type: 'natural', natural: { firstName: 'Ana', lastName: 'Gómez', documentType: 'CC', documentNumber: '1020304050', email } },
  })
  if (response.statusCode !== 201) throw new Error(response.body)
  return (response.json() as { data: { ID: string } }).data.ID
}

const requestSignature = async (svc: TestApp, organizationId: string, signerId: string, requiredFiles: string[][], document = documentId): Promise<SignatureBody> => {
  const response = await svc.call({
    method: 'POST', url: `/v1/document/${document}/signature-scan`, token: svc.adminToken, organizationId, payload: { signerId, requiredFiles },
  })
  if (response.statusCode !== 201) throw new Error(response.body)
  return (response.json() as { data: SignatureBody }).data
}

const uploadFile = (svc: TestApp, token: string, signatureId: string, field: string, content: Buffer = pngBytes, document = documentId) =>
  svc.call({ method: 'PUT', url: `${base(signatureId, document)}/signature-file/${field}`, token, headers: { 'content-type': 'application/octet-stream' }, payload: content })

const uploaded = async (svc: TestApp, token: string, signatureId: string, field: string): Promise<string> => {
  const response = await uploadFile(svc, token, signatureId, field)
  if (response.statusCode !== 201) throw new Error(response.body)
  return (response.json() as { data: { fileId: string } }).data.fileId
}

const remove = (svc: TestApp, token: string, signatureId: string, fileId: string, field: string, query = '', document = documentId) =>
  svc.call({ method: 'DELETE', url: `${base(signatureId, document)}/signature-file/${fileId}/${field}${query}`, token })

/** Everything a refusal must leave alone: the signature, its audit and its stream. */
const snapshot = async (svc: TestApp, signatureId: string) => {
  const signature = await svc.call({ method: 'GET', url: base(signatureId), token: svc.adminToken })
  const audit = await svc.call({ method: 'GET', url: `${base(signatureId)}/audit`, token: svc.adminToken })
  let events = 0
  for await (const _ of svc.runtime.eventStore.readStream(`signature-${signatureId}`)) events += 1
  return { signature: signature.json(), audit: audit.json(), events }
}

t.test('a signature moves from pending_file_upload to ready_to_finalize as required groups fill, then to finalized', async (t) => {
  const svc = await createTestApp(t)
  const signerId = await createSigner(svc, svc.organizationId)
  const signature = await requestSignature(svc, svc.organizationId, signerId, [['image'], ['document-front', 'verification']])
  t.match(signature, { status: 'pending_file_upload', requiredFiles: [['image'], ['document-front', 'verification']], missing: [['image'], ['document-front', 'verification']], files: [] })

  const early = await svc.call({ method: 'POST', url: `${base(signature.id)}/finalize`, token: svc.adminToken })
  t.equal(early.statusCode, 409)
  t.match(early.json().data, { code: 'SIGNATURE_INCOMPLETE', missing: [['image'], ['document-front', 'verification']] })

  const image = await uploadFile(svc, svc.adminToken, signature.id, 'image')
  t.equal(image.statusCode, 201)
  t.match(image.json().data, { fileId: String, field: 'image', contentType: 'image/png', size: pngBytes.length, signature: { status: 'pending_file_upload', missing: [['document-front', 'verification']] } })
  const verification = await uploadFile(svc, svc.adminToken, signature.id, 'verification', pdfBytes)
  t.match(verification.json().data.signature, { status: 'ready_to_finalize', missing: [] }, 'one alternative of the group is enough')

  t.equal((await uploadFile(svc, svc.adminToken, signature.id, 'image')).json().data.code, 'SIGNATURE_FILE_EXISTS', 'a present field is not replaced silently')
  t.equal((await uploadFile(svc, svc.adminToken, signature.id, 'document-back')).statusCode, 400, 'a field the signature does not require')
  t.equal((await uploadFile(svc, svc.adminToken, signature.id, 'document-front', textBytes)).statusCode, 415, 'content is sniffed')

  const finalized = await svc.call({ method: 'POST', url: `${base(signature.id)}/finalize`, token: svc.adminToken })
  t.equal(finalized.statusCode, 200)
  t.match(finalized.json().data, { status: 'finalized', finalizedBy: 'test-admin' })
  t.equal((await uploadFile(svc, svc.adminToken, signature.id, 'document-front')).json().data.code, 'SIGNATURE_FINALIZED')

  const read = await svc.call({ method: 'GET', url: base(signature.id), token: svc.adminToken })
  t.equal(read.json().data.files.length, 2)
  const bytes = await svc.call({ method: 'GET', url: `${base(signature.id)}/signature-file/${image.json().data.fileId}`, token: svc.adminToken })
  t.ok(bytes.rawPayload.equals(pngBytes), 'a signature file downloads byte for byte')
  t.equal(bytes.headers['content-type'], 'image/png')
})

t.test('creating a signature: the signer must be a profile of the organization; requiredFiles is validated', async (t) => {
  const svc = await createTestApp(t)
  const signerId = await createSigner(svc, svc.organizationId)
  const other = await createOrganization(svc, 'Other lender')
  const foreignSigner = await createSigner(svc, other)
  const post = (payload: object) => svc.call({ method: 'POST', url: `/v1/document/${documentId}/signature-scan`, token: svc.adminToken, organizationId: svc.organizationId, payload })
  t.equal((await post({ signerId: foreignSigner, requiredFiles: [['image']] })).statusCode, 400, 'a signer of another organization')
  t.equal((await post({ signerId: deterministicId('nobody'), requiredFiles: [['image']] })).statusCode, 400, 'an unknown signer')
  for (const requiredFiles of [[], [[]], [['selfie']], [['image', 'image']], [['image'], 'verification', 'x']]) {
    t.equal((await post({ signerId, requiredFiles })).statusCode, 400, `requiredFiles ${JSON.stringify(requiredFiles)}`)
  }
  const noHeader = await svc.call({ method: 'POST', url: `/v1/document/${documentId}/signature-scan`, token: svc.adminToken, payload: { signerId, requiredFiles: [['image']] } })
  t.equal(noHeader.statusCode, 400, 'creation names its organization')
})

t.test('deletion rules, one by one, with nothing changed on refusal', async (t) => {
  const svc = await createTestApp(t)
  const organizationId = svc.organizationId
  const signerId = await createSigner(svc, organizationId)
  const owner = await addMember(svc, organizationId, 'owner', ['ReadDocument', 'WriteDocument', ...allDeletes])
  const noImagePermission = await addMember(svc, organizationId, 'no-image', ['ReadDocument', 'WriteDocument', 'DeleteSignatureDocumentFront'])
  const stranger = await addMember(svc, organizationId, 'stranger', ['ReadDocument', 'WriteDocument', ...allDeletes])
  const orgAdmin = await addMember(svc, organizationId, 'org-admin', ['ReadDocument', 'AdministerOrganization', 'DeleteSignatureImage'])

  const signature = await requestSignature(svc, organizationId, signerId, [['image'], ['document-front']])
  const image = await uploaded(svc, owner.token, signature.id, 'image')
  await uploaded(svc, noImagePermission.token, signature.id, 'document-front')
  const tooLong = `?reason=${'x'.repeat(501)}`

  const expectRefusal = async (why: string, token: string, fileId: string, field: string, query: string, status: number, code: string, document = documentId) => {
    const before = await snapshot(svc, signature.id)
    const response = await remove(svc, token, signature.id, fileId, field, query, document)
    t.equal(response.statusCode, status, why)
    t.equal(response.json().data.code, code, `${why}: ${code}`)
    t.same(await snapshot(svc, signature.id), before, `${why}: nothing changed`)
  }

  await expectRefusal('a stranger holding the permission, neither owner nor administrator', stranger.token, image, 'image', '', 403, 'FORBIDDEN')
  const ownerWithout = await addMember(svc, organizationId, 'owner-without', ['ReadDocument', 'WriteDocument'])
  const verificationSignature = await requestSignature(svc, organizationId, signerId, [['verification']])
  const ownFile = await uploaded(svc, ownerWithout.token, verificationSignature.id, 'verification')
  const ownRefused = await remove(svc, ownerWithout.token, verificationSignature.id, ownFile, 'verification')
  t.equal(ownRefused.statusCode, 403, 'the owner lacking the field\'s permission')
  t.equal(ownRefused.json().data.permission, 'DeleteSignatureVerification')
  await expectRefusal('permission is per field: document-front only does not delete an image', noImagePermission.token, image, 'image', '', 403, 'FORBIDDEN')
  await expectRefusal('a reason over 500 characters', owner.token, image, 'image', tooLong, 400, 'VALIDATION_ERROR')
  for (const [what, reason] of [['a NUL', 'a\u0000b'], ['an escape', 'see\u001b[31m'], ['DEL', 'x\u007f']]) {
    await expectRefusal(`a reason with ${what}`, owner.token, image, 'image', `?reason=${encodeURIComponent(reason)}`, 400, 'VALIDATION_ERROR')
  }
  await expectRefusal('a file id with the wrong field', owner.token, image, 'document-front', '', 404, 'NOT_FOUND')
  await expectRefusal('a file of another signature', owner.token, ownFile, 'verification', '', 404, 'NOT_FOUND')
  await expectRefusal('the signature under another document', owner.token, image, 'image', '', 404, 'NOT_FOUND', deterministicId('another document'))
  await expectRefusal('an unknown field name', owner.token, image, 'selfie', '', 400, 'VALIDATION_ERROR')

  const deleted = await remove(svc, owner.token, signature.id, image, 'image', '?reason=Blurry%20image')
  t.equal(deleted.statusCode, 200, 'the owner deletes their file')
  const body = deleted.json()
  t.equal(body.status, 'success')
  t.match(body.data.deletedFile, { fileId: image, field: 'image', deletedAt: String, deletedBy: owner.userId, auditId: String })
  t.same(body.data.signature, { id: signature.id, status: 'pending_file_upload', requiredFiles: [['image'], ['document-front']], missing: [['image']] })
  const afterDelete = (await svc.call({ method: 'GET', url: base(signature.id), token: svc.adminToken })).json().data
  t.match(afterDelete.files.find((f: { fileId: string }) => f.fileId === image), { deleted: true, deletedBy: owner.userId, auditId: body.data.deletedFile.auditId })

  await expectRefusal('deleting it again', owner.token, image, 'image', '', 404, 'SIGNATURE_FILE_DELETED')
  const stillThere = await svc.call({ method: 'GET', url: `${base(signature.id)}/signature-file/${image}`, token: orgAdmin.token })
  t.ok(stillThere.rawPayload.equals(pngBytes), 'the bytes are kept for audit; an administrator can still fetch them')
  t.equal((await svc.call({ method: 'GET', url: `${base(signature.id)}/signature-file/${image}`, token: owner.token })).statusCode, 404, 'others no longer see it')

  const reupload = await uploaded(svc, owner.token, signature.id, 'image')
  const byAdmin = await remove(svc, orgAdmin.token, signature.id, reupload, 'image')
  t.equal(byAdmin.statusCode, 200, 'an administrator deletes another user\'s file')
  t.equal(byAdmin.json().data.deletedFile.deletedBy, orgAdmin.userId)

  const last = await uploaded(svc, owner.token, signature.id, 'image')
  t.equal((await svc.call({ method: 'POST', url: `${base(signature.id)}/finalize`, token: owner.token })).statusCode, 200)
  await expectRefusal('a finalized signature', owner.token, last, 'image', '', 409, 'SIGNATURE_FINALIZED')

  const audit = await svc.call({ method: 'GET', url: `${base(signature.id)}/audit`, token: owner.token })
  t.equal(audit.statusCode, 200)
  const entries = audit.json().data.entries
  t.equal(entries.length, 2, 'one audit record per deletion')
  t.match(entries[0], { auditId: body.data.deletedFile.auditId, fileId: image, field: 'image', reason: 'Blurry image', deletedBy: owner.userId, byAdministrator: false, previousStatus: 'ready_to_finalize', status: 'pending_file_upload' })
  t.match(entries[1], { deletedBy: orgAdmin.userId, byAdministrator: true, reason: null })
})

t.test('another organization\'s signature is a 404, whatever the route; the header, when sent, must match', async (t) => {
  const svc = await createTestApp(t)
  const other = await createOrganization(svc, 'Other lender')
  const signature = await requestSignature(svc, other, await createSigner(svc, other), [['image']])
  const fileId = await uploaded(svc, svc.adminToken, signature.id, 'image')
  const member = await addMember(svc, svc.organizationId, 'member', ['ReadDocument', 'WriteDocument', ...allDeletes, 'AdministerOrganization'])
  t.equal((await svc.call({ method: 'GET', url: base(signature.id), token: member.token })).statusCode, 404)
  t.equal((await remove(svc, member.token, signature.id, fileId, 'image')).statusCode, 404)
  t.equal((await uploadFile(svc, member.token, signature.id, 'image')).statusCode, 404)
  t.equal((await svc.call({ method: 'GET', url: `${base(signature.id)}/audit`, token: member.token })).statusCode, 404)
  const wrongHeader = await svc.call({ method: 'GET', url: base(signature.id), token: svc.adminToken, organizationId: svc.organizationId })
  t.equal(wrongHeader.statusCode, 404, 'an Organization-ID naming another organization')
  t.equal((await svc.call({ method: 'GET', url: base(signature.id), token: svc.adminToken, organizationId: other })).statusCode, 200)
})

t.test('the signer is notified of a deletion; without SMTP the notice is logged and recorded', async (t) => {
  const svc = await createTestApp(t)
  const signerId = await createSigner(svc, svc.organizationId, 'signer@example.co')
  const signature = await requestSignature(svc, svc.organizationId, signerId, [['image']])
  const fileId = await uploaded(svc, svc.adminToken, signature.id, 'image')
  const outcome = firstValueFrom(svc.runtime.hub.events$.pipe(filter((e) => e.type === 'NotificationDelivered' || e.type === 'NotificationFailed')))
  const deleted = await remove(svc, svc.adminToken, signature.id, fileId, 'image', '?reason=wrong%20person')
  t.equal(deleted.statusCode, 200)
  const event = await outcome
  t.equal(event.type, 'NotificationDelivered')
  const audit = await svc.call({ method: 'GET', url: `${base(signature.id)}/audit`, token: svc.adminToken })
  t.match(audit.json().data.entries[0].notification, { status: 'delivered', channel: 'log', recipient: 'signer@example.co' })
})

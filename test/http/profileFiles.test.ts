import fs from 'node:fs'
import path from 'node:path'
import { parse as parseContentDisposition } from 'content-disposition'
import t from 'tap'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { gifBytes, multipartBody, pdfBytes, pngBytes, textBytes } from '../helpers/files.js'
import { addClient, addMember, createOrganization } from '../helpers/members.js'

const headersFor = (organizationId: string) => ({ 'config-organization-id': organizationId, 'organization-id': organizationId })

const naturalBody = { type: 'natural', natural: { firstName: 'Ana', lastName: 'Gómez', documentType: 'CC', documentNumber: '1020304050' } }

const createProfile = async (svc: TestApp, organizationId: string, payload: object = naturalBody): Promise<string> => {
  const response = await svc.call({ method: 'POST', url: '/v1/profiles', token: svc.adminToken, headers: headersFor(organizationId), payload })
  if (response.statusCode !== 201) throw new Error(response.body)
  return (response.json() as { data: { ID: string } }).data.ID
}

const upload = (svc: TestApp, organizationId: string, profileId: string, campo: string, content: Buffer, contentType = 'application/octet-stream', query = '') =>
  svc.call({
    method: 'PUT', url: `/v1/profiles/${profileId}/files/${campo}${query}`, token: svc.adminToken,
    headers: { ...headersFor(organizationId), 'content-type': contentType }, payload: content,
  })

const download = (svc: TestApp, token: string, debtorId: string, campo: string, fileId: string, headers: Record<string, string> = {}) =>
  svc.call({ method: 'GET', url: `/v1/debtor/${debtorId}/profile/${campo}/${fileId}`, token, headers })

const storedFiles = (svc: TestApp): string[] => {
  const root = path.join(svc.config.dataDir, 'files')
  if (!fs.existsSync(root)) return []
  return fs.readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((name) => !name.endsWith('.json') && fs.statSync(path.join(root, name)).isFile())
}

t.test('an upload sets <Campo>FileID and an OAuth client of the organization downloads the bytes unchanged', async (t) => {
  const svc = await createTestApp(t)
  const profileId = await createProfile(svc, svc.organizationId)
  const stored = await upload(svc, svc.organizationId, profileId, 'work-certificate', pdfBytes, 'application/octet-stream', '?filename=certificado laboral.pdf')
  t.equal(stored.statusCode, 201, stored.body)
  const { file, profile } = stored.json().data
  t.match(file, { field: 'work-certificate', fileIdKey: 'WorkCertificateFileID', contentType: 'application/pdf', size: pdfBytes.length, filename: 'certificado laboral.pdf' })
  t.equal(profile.natural.WorkCertificateFileID, file.fileId, 'the file id is on the natural object, as webhook templates read it')
  t.equal(file.url, `/v1/debtor/${profileId}/profile/work-certificate/${file.fileId}`)

  const receiver = await addClient(svc, svc.organizationId, 'webhook receiver', ['ReadProfile'])
  const bytes = await download(svc, receiver.token, profileId, 'work-certificate', file.fileId)
  t.equal(bytes.statusCode, 200)
  t.equal(bytes.headers['content-type'], 'application/pdf')
  t.equal(bytes.headers['content-length'], String(pdfBytes.length))
  t.ok(bytes.rawPayload.equals(pdfBytes), 'byte for byte, no JSON, no Base64')
  t.equal(bytes.headers['content-disposition'], 'attachment; filename="certificado laboral.pdf"')

  const list = await svc.call({ method: 'GET', url: '/v1/profiles?expand=natural', token: svc.adminToken, headers: headersFor(svc.organizationId) })
  t.equal(list.json().data[0].natural.WorkCertificateFileID, file.fileId, 'the list shows it too')

  const named = await upload(svc, svc.organizationId, profileId, 'work-certificate', pdfBytes, 'application/octet-stream', `?filename=${encodeURIComponent('año (1) it\'s.pdf')}`)
  const fancy = await download(svc, receiver.token, profileId, 'work-certificate', named.json().data.file.fileId)
  const disposition = String(fancy.headers['content-disposition'])
  t.equal(disposition, 'attachment; filename="a_o (1) it\'s.pdf"; filename*=UTF-8\'\'a%C3%B1o%20%281%29%20it%27s.pdf', 'an ASCII fallback, and RFC 8187 encoding of every character it reserves')
  t.equal(parseContentDisposition(disposition).parameters['filename'], 'año (1) it\'s.pdf', 'a strict parser reads the name back')
})

t.test('multipart uploads work alike; the declared content type is not trusted', async (t) => {
  const svc = await createTestApp(t)
  const profileId = await createProfile(svc, svc.organizationId)
  const body = multipartBody(pngBytes, 'cedula.pdf', 'application/pdf')
  const stored = await upload(svc, svc.organizationId, profileId, 'identity-document-front', body.payload, body.contentType)
  t.equal(stored.statusCode, 201, stored.body)
  t.match(stored.json().data.file, { contentType: 'image/png', filename: 'cedula.pdf', size: pngBytes.length }, 'sniffed PNG, whatever the part said')
  const bytes = await download(svc, svc.adminToken, profileId, 'identity-document-front', stored.json().data.file.fileId)
  t.equal(bytes.headers['content-type'], 'image/png')
  t.ok(bytes.rawPayload.equals(pngBytes))
})

t.test('uploads are refused when too large, of unrecognised or unaccepted content, empty, or of a campo the profile type lacks', async (t) => {
  const svc = await createTestApp(t, { config: { uploadMaxBytes: 2048 } })
  const profileId = await createProfile(svc, svc.organizationId)
  const big = Buffer.concat([pdfBytes, Buffer.alloc(4096, 0x20)])

  const tooLarge = await upload(svc, svc.organizationId, profileId, 'work-certificate', big)
  t.equal(tooLarge.statusCode, 413)
  t.match(tooLarge.json().data, { code: 'PAYLOAD_TOO_LARGE', maxBytes: 2048 })
  const chunked = multipartBody(big, 'big.pdf', 'application/pdf')
  const tooLargeMultipart = await upload(svc, svc.organizationId, profileId, 'work-certificate', chunked.payload, chunked.contentType)
  t.equal(tooLargeMultipart.statusCode, 413, 'a multipart file over the limit too')

  const lying = await upload(svc, svc.organizationId, profileId, 'work-certificate', textBytes, 'image/png')
  t.equal(lying.statusCode, 415)
  t.match(lying.json().data, { code: 'UNSUPPORTED_MEDIA_TYPE', detected: null })
  const gif = await upload(svc, svc.organizationId, profileId, 'work-certificate', gifBytes, 'image/gif')
  t.equal(gif.statusCode, 415)
  t.match(gif.json().data, { detected: 'image/gif' }, 'a recognised type outside UPLOAD_ALLOWED_TYPES')
  t.equal((await upload(svc, svc.organizationId, profileId, 'work-certificate', Buffer.alloc(0))).statusCode, 400, 'an empty body')
  const emptyPart = multipartBody(Buffer.alloc(0), 'empty.pdf', 'application/pdf')
  const emptyMultipart = await upload(svc, svc.organizationId, profileId, 'work-certificate', emptyPart.payload, emptyPart.contentType)
  t.equal(emptyMultipart.statusCode, 400, 'an empty multipart file, whatever type it claims')
  t.match(emptyMultipart.json().data, { code: 'BAD_REQUEST', message: 'the file is empty' })
  const unbounded = await upload(svc, svc.organizationId, profileId, 'work-certificate', pdfBytes, 'multipart/form-data; boundary=x')
  t.equal(unbounded.statusCode, 400, 'a multipart body without its boundary')
  t.match(unbounded.json().data, { code: 'BAD_REQUEST', message: /^the upload is malformed or ended early/ })
  const whole = multipartBody(pdfBytes, 'cut.pdf', 'application/pdf')
  const cut = await upload(svc, svc.organizationId, profileId, 'work-certificate', whole.payload.subarray(0, whole.payload.length - 60), whole.contentType)
  t.equal(cut.statusCode, 400, 'a multipart body that ends inside its file')
  t.match(cut.json().data, { code: 'BAD_REQUEST', message: /^the upload is malformed or ended early/ })

  const legalOnly = await upload(svc, svc.organizationId, profileId, 'chamber-of-commerce-certificate', pdfBytes)
  t.equal(legalOnly.statusCode, 400, 'a legal person\'s campo on a natural profile')
  t.equal((await upload(svc, svc.organizationId, profileId, 'horoscope', pdfBytes)).statusCode, 400, 'an unknown campo')

  const profile = await svc.call({ method: 'GET', url: `/v1/profiles/${profileId}`, token: svc.adminToken, headers: headersFor(svc.organizationId) })
  t.same(profile.json().data.files, [], 'no refusal attached anything')
  t.same(storedFiles(svc), [], 'and no bytes were kept')
})

t.test('downloads: every mismatch of debtor, campo and file is a 404; a member without ReadProfile gets 403', async (t) => {
  const svc = await createTestApp(t)
  const profileId = await createProfile(svc, svc.organizationId)
  const first = (await upload(svc, svc.organizationId, profileId, 'work-certificate', pdfBytes)).json().data.file.fileId
  const second = (await upload(svc, svc.organizationId, profileId, 'work-certificate', pngBytes)).json().data.file.fileId
  const other = (await upload(svc, svc.organizationId, profileId, 'income-certificate', pdfBytes)).json().data.file.fileId
  const otherProfile = await createProfile(svc, svc.organizationId)

  t.equal((await download(svc, svc.adminToken, profileId, 'work-certificate', second)).statusCode, 200, 'the current file')
  const notFound = async (debtorId: string, campo: string, fileId: string, why: string, token = svc.adminToken, headers: Record<string, string> = {}) => {
    const response = await download(svc, token, debtorId, campo, fileId, headers)
    t.equal(response.statusCode, 404, why)
    t.equal(response.json().status, 'fail', `${why}: in the envelope`)
  }
  await notFound(profileId, 'work-certificate', first, 'a superseded file')
  await notFound(profileId, 'income-certificate', second, 'a file of another campo')
  await notFound(profileId, 'work-certificate', other, 'the other campo\'s file under this campo')
  await notFound(otherProfile, 'work-certificate', second, 'another debtor')
  await notFound(profileId, 'no-such-campo', second, 'an unknown campo')
  await notFound('7d6f0c1e-5f2b-4c8e-9a51-0d6f3e2b1a90', 'work-certificate', second, 'an unknown debtor')

  const foreignOrganization = await createOrganization(svc, 'Other lender')
  const foreignClient = await addClient(svc, foreignOrganization, 'foreign receiver', ['ReadProfile'])
  await notFound(profileId, 'work-certificate', second, 'a client of another organization', foreignClient.token)
  await notFound(profileId, 'work-certificate', second, 'an Organization-ID naming another organization', svc.adminToken, { 'organization-id': foreignOrganization })

  const noRead = await addClient(svc, svc.organizationId, 'no read', ['ReadCredit'])
  t.equal((await download(svc, noRead.token, profileId, 'work-certificate', second)).statusCode, 403)
  t.equal((await download(svc, '', profileId, 'work-certificate', second)).statusCode, 401)
})

t.test('uploading needs sight of the profile and WriteProfile', async (t) => {
  const svc = await createTestApp(t)
  const profileId = await createProfile(svc, svc.organizationId)
  const reader = await addMember(svc, svc.organizationId, 'reader', 'analyst')
  const writer = await addMember(svc, svc.organizationId, 'writer', ['ReadProfile', 'WriteProfile'])
  const as = (token: string) => svc.call({
    method: 'PUT', url: `/v1/profiles/${profileId}/files/work-certificate`, token, headers: { ...headersFor(svc.organizationId), 'content-type': 'application/pdf' }, payload: pdfBytes,
  })
  t.equal((await as(reader.token)).statusCode, 403, 'no WriteProfile')
  t.equal((await as(writer.token)).statusCode, 404, 'not the writer\'s profile')
})

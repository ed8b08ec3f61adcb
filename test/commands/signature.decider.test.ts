import t from 'tap'
import { signatureAggregate, type SignatureCommand } from '../../src/commands/signature.js'
import type { SignatureFileDeleted, SignatureFileUploaded, SignatureScanRequested } from '../../src/events/signature.js'
import { scenario } from '../helpers/deciders.js'

const now = '2026-03-01T10:00:00.000Z'
const signature = scenario(signatureAggregate)
const ids = { signatureId: 's1', organizationId: 'o1', documentId: 'd1' }

const requested: SignatureScanRequested = { type: 'SignatureScanRequested', data: {
  ...ids, signerId: 'p1', requiredFiles: [['image'], ['document-front', 'verification']], requestedBy: 'u1', requestedAt: now,
} }
const facts = { contentType: 'image/png', size: 10, sha256: 'ab', filename: 'x.png' }
const imageUploaded: SignatureFileUploaded = { type: 'SignatureFileUploaded', data: {
  ...ids, fileId: 'f1', field: 'image', ...facts, uploadedBy: 'u1', uploadedAt: now, status: 'pending_file_upload',
} }
const frontUploaded: SignatureFileUploaded = { type: 'SignatureFileUploaded', data: {
  ...ids, fileId: 'f2', field: 'document-front', ...facts, uploadedBy: 'u2', uploadedAt: now, status: 'ready_to_finalize',
} }
const upload = (fileId: string, field: 'image' | 'document-front' | 'document-back' | 'verification', uploadedBy = 'u1'): SignatureCommand =>
  ({ type: 'UploadSignatureFile', documentId: 'd1', fileId, field, ...facts, uploadedBy, now })
const remove = (overrides: Partial<Extract<SignatureCommand, { type: 'DeleteSignatureFile' }>> = {}): SignatureCommand => ({
  type: 'DeleteSignatureFile', documentId: 'd1', fileId: 'f1', field: 'image', reason: 'blurry', deletedBy: 'u1', isAdministrator: false, auditId: 'a1', now,
  ...overrides,
})
const imageDeleted: SignatureFileDeleted = { type: 'SignatureFileDeleted', data: {
  ...ids, signerId: 'p1', fileId: 'f1', field: 'image', reason: 'blurry', deletedBy: 'u1', byAdministrator: false, deletedAt: now, auditId: 'a1',
  previousStatus: 'ready_to_finalize', status: 'pending_file_upload',
} }
const finalized = { type: 'SignatureFinalized' as const, data: { ...ids, files: [{ field: 'image' as const, fileId: 'f1' }, { field: 'document-front' as const, fileId: 'f2' }], finalizedBy: 'u1', finalizedAt: now } }

t.test('a request validates its groups of alternatives', async (t) => {
  const request = { type: 'RequestSignatureScan' as const, ...ids, signerId: 'p1', requiredFiles: requested.data.requiredFiles, requestedBy: 'u1', now }
  signature.given().when(request).then(t, [requested])
  signature.given().when({ ...request, requiredFiles: [] }).thenRefused(t, 'VALIDATION_ERROR', 'no group')
  signature.given().when({ ...request, requiredFiles: [[]] }).thenRefused(t, 'VALIDATION_ERROR', 'an empty group')
  signature.given().when({ ...request, requiredFiles: [['image', 'image']] }).thenRefused(t, 'VALIDATION_ERROR', 'a field twice in a group')
  signature.given(requested).when(request).thenRefused(t, 'ALREADY_EXISTS')
})

t.test('uploads fill groups; the status says whether every group has a file', async (t) => {
  signature.given(requested).when(upload('f1', 'image')).then(t, [imageUploaded])
  signature.given(requested, imageUploaded).when(upload('f2', 'document-front', 'u2')).then(t, [frontUploaded])
  signature.given(requested, imageUploaded).when(upload('f1', 'image')).thenNothing(t, 'the same file id twice is a no-op')
  signature.given(requested, imageUploaded).when(upload('f3', 'image')).thenRefused(t, 'SIGNATURE_FILE_EXISTS')
  signature.given(requested).when(upload('f3', 'document-back')).thenRefused(t, 'VALIDATION_ERROR', 'a field no group names')
  signature.given(requested).when({ ...upload('f3', 'image'), documentId: 'other' }).thenRefused(t, 'NOT_FOUND', 'another document')
  signature.given().when(upload('f3', 'image')).thenRefused(t, 'NOT_FOUND')
  signature.given(requested, imageUploaded, frontUploaded, finalized).when(upload('f3', 'verification')).thenRefused(t, 'SIGNATURE_FINALIZED')
})

t.test('deletion: the owner or an administrator, not finalized, not twice; the status falls back', async (t) => {
  const full = [requested, imageUploaded, frontUploaded] as const
  signature.given(...full).when(remove()).then(t, [imageDeleted])
  signature.given(...full).when(remove({ deletedBy: 'admin', isAdministrator: true }))
    .then(t, [{ ...imageDeleted, data: { ...imageDeleted.data, deletedBy: 'admin', byAdministrator: true } }], 'an administrator deletes another\'s file')
  signature.given(...full).when(remove({ deletedBy: 'u3' })).thenRefused(t, 'FORBIDDEN', 'a stranger')
  signature.given(...full).when(remove({ field: 'verification' })).thenRefused(t, 'NOT_FOUND', 'a file id with another field')
  signature.given(...full).when(remove({ fileId: 'nope' })).thenRefused(t, 'NOT_FOUND')
  signature.given(...full).when(remove({ documentId: 'd2' })).thenRefused(t, 'NOT_FOUND', 'the signature under another document')
  signature.given(...full).when(remove({ reason: 'x'.repeat(501) })).thenRefused(t, 'VALIDATION_ERROR')
  const emoji = '\u{1F600}'
  signature.given(...full).when(remove({ reason: emoji.repeat(500) }))
    .then(t, [{ ...imageDeleted, data: { ...imageDeleted.data, reason: emoji.repeat(500) } }], 'a reason is counted in characters, as the schema counts them: 500 emoji fit')
  signature.given(...full).when(remove({ reason: emoji.repeat(501) })).thenRefused(t, 'VALIDATION_ERROR', '501 do not')
  signature.given(...full, imageDeleted).when(remove()).thenRefused(t, 'SIGNATURE_FILE_DELETED', 'twice')
  signature.given(...full, finalized).when(remove()).thenRefused(t, 'SIGNATURE_FINALIZED')
  signature.given(...full, imageDeleted).when(upload('f3', 'image'))
    .then(t, [{ ...imageUploaded, data: { ...imageUploaded.data, fileId: 'f3', status: 'ready_to_finalize' } }], 'a deleted field takes a new file')
})

t.test('finalizing needs every group; finalizing twice changes nothing', async (t) => {
  signature.given(requested, imageUploaded).when({ type: 'FinalizeSignature', documentId: 'd1', finalizedBy: 'u1', now }).thenRefused(t, 'SIGNATURE_INCOMPLETE')
  signature.given(requested, imageUploaded, frontUploaded).when({ type: 'FinalizeSignature', documentId: 'd1', finalizedBy: 'u1', now }).then(t, [finalized])
  signature.given(requested, imageUploaded, frontUploaded, imageDeleted).when({ type: 'FinalizeSignature', documentId: 'd1', finalizedBy: 'u1', now })
    .thenRefused(t, 'SIGNATURE_INCOMPLETE', 'a deleted file no longer counts')
  signature.given(requested, imageUploaded, frontUploaded, finalized).when({ type: 'FinalizeSignature', documentId: 'd1', finalizedBy: 'u1', now }).thenNothing(t)
})

t.test('a request under an Idempotency-Key records the Key; one that finds the scan made decides nothing, one without a Key is refused', async (t) => {
  const idempotency = { key: 'k1', requestHash: 'h1' }
  const request: SignatureCommand = {
    type: 'RequestSignatureScan', ...ids, signerId: 'p1', requiredFiles: [['image'], ['document-front', 'verification']], requestedBy: 'u1', now,
  }
  signature.given().when({ ...request, idempotency }).then(t, [{ ...requested, data: { ...requested.data, idempotency } }])
  t.same(signature.given({ ...requested, data: { ...requested.data, idempotency } }).state.idempotency, idempotency)
  signature.given(requested, imageUploaded).when({ ...request, idempotency }).thenNothing(t, 'the caller compares its request with the one recorded')
  signature.given(requested).when(request).thenRefused(t, 'ALREADY_EXISTS')
})

import type { FastifyPluginAsyncTypebox, TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { profileAggregate } from '../commands/profile.js'
import { keyedSignatureId, MAX_REASON_LENGTH, missingGroups, requestSignatureOnce, signatureAggregate, signatureRequestHash } from '../commands/signature.js'
import { signatureFields, type SignatureField } from '../events/signature.js'
import type { SignatureAuditDoc } from '../projections/signatureAudit.js'
import type { SignatureDoc } from '../projections/signatures.js'
import type { Services } from '../services.js'
import { AppError, invalidFields, notFound } from '../shared/errors.js'
import { newId } from '../shared/ids.js'
import type { Permission } from '../shared/permissions.js'
import { commandContext, organizationOf, principalOf } from './context.js'
import { actInResourceOrganization } from './resourceAccess.js'
import { failures, IdempotencyKeyHeader, NO_CONTROL_TEXT_PATTERN, OrganizationHeaders, PageQuery, Pagination, pagination, Timestamp, Uuid } from './schemas.js'
import { acceptUploads, BinaryResponse, readUpload, sendFile, storeUpload, uploadDescription, uploadPolicy, UploadQuery } from './uploads.js'

/** Deleting a file of each field needs its own permission. */
export const deletePermissionOf: Record<SignatureField, Permission> = {
  'image': 'DeleteSignatureImage',
  'document-front': 'DeleteSignatureDocumentFront',
  'document-back': 'DeleteSignatureDocumentBack',
  'verification': 'DeleteSignatureVerification',
}

const Field = Type.Enum(signatureFields, { description: 'image, document-front, document-back or verification' })
const Status = Type.Enum(['pending_file_upload', 'ready_to_finalize', 'finalized'])
const RequiredFiles = Type.Array(Type.Array(Field, { minItems: 1, maxItems: signatureFields.length, uniqueItems: true }), {
  minItems: 1, maxItems: 8,
  description: 'groups of alternatives: every inner array needs at least one of its fields present, e.g. [["image"],["document-front","verification"]]',
})
const SignatureBrief = Type.Object({
  id: Uuid, status: Status, requiredFiles: RequiredFiles,
  missing: Type.Array(Type.Array(Field), { description: 'the groups of requiredFiles not yet satisfied' }),
})
const SignatureFile = Type.Object({
  fileId: Uuid, field: Field, contentType: Type.String(), size: Type.Integer(), sha256: Type.String(), filename: Type.String(),
  uploadedBy: Type.String({ description: 'the file\'s owner' }), uploadedAt: Timestamp,
  deleted: Type.Boolean(), deletedAt: Type.Union([Timestamp, Type.Null()]), deletedBy: Type.Union([Type.String(), Type.Null()]),
  auditId: Type.Union([Uuid, Type.Null()]),
})
const Signature = Type.Object({
  ...SignatureBrief.properties,
  documentId: Uuid, signerId: Uuid, requestedBy: Type.String(),
  files: Type.Array(SignatureFile, { description: 'every file uploaded, deleted ones included and marked' }),
  createdAt: Timestamp, updatedAt: Timestamp, finalizedAt: Type.Union([Timestamp, Type.Null()]), finalizedBy: Type.Union([Type.String(), Type.Null()]),
})
const AuditEntry = Type.Object({
  auditId: Uuid, action: Type.Literal('signature-file-deleted'), fileId: Uuid, field: Field,
  reason: Type.Union([Type.String(), Type.Null()]), deletedBy: Type.String(), byAdministrator: Type.Boolean(), deletedAt: Timestamp,
  previousStatus: Status, status: Status,
  notification: Type.Object({
    status: Type.Enum(['pending', 'dispatched', 'delivered', 'failed']),
    channel: Type.Union([Type.Enum(['smtp', 'log']), Type.Null()]),
    recipient: Type.Union([Type.String(), Type.Null()]),
    error: Type.Union([Type.String(), Type.Null()]),
    at: Type.Union([Timestamp, Type.Null()]),
  }, { description: 'how telling the signer went' }),
})

const DocumentParams = Type.Object({ documentId: Uuid })
const SignatureParams = Type.Object({ documentId: Uuid, signatureId: Uuid })
const OptionalOrganization = Type.Object({
  'organization-id': Type.Optional(Type.String({ format: 'uuid', description: 'optional; when sent it must be the signature\'s organization' })),
}, { additionalProperties: true })
const success = <T extends Parameters<typeof Type.Object>[0]>(data: T) => Type.Object({ status: Type.Literal('success'), data: Type.Object(data) })

const brief = (doc: Pick<SignatureDoc, '_id' | 'status' | 'requiredFiles' | 'files'>) => ({
  id: doc._id, status: doc.status, requiredFiles: doc.requiredFiles,
  missing: doc.status === 'finalized' ? [] : missingGroups(doc.requiredFiles, new Set(doc.files.filter((f) => !f.deleted).map((f) => f.field))),
})

const signatureView = (doc: SignatureDoc) => ({
  ...brief(doc),
  documentId: doc.documentId, signerId: doc.signerId, requestedBy: doc.requestedBy, files: doc.files,
  createdAt: doc.createdAt, updatedAt: doc.updatedAt, finalizedAt: doc.finalizedAt, finalizedBy: doc.finalizedBy,
})

const auditView = (doc: SignatureAuditDoc) => ({
  auditId: doc._id, action: doc.action, fileId: doc.fileId, field: doc.field, reason: doc.reason, deletedBy: doc.actorId,
  byAdministrator: doc.byAdministrator, deletedAt: doc.at, previousStatus: doc.previousStatus, status: doc.status, notification: doc.notification,
})

/**
 * Signature scans of documents: request one for a signer, upload its files by
 * field, finalize it; delete files softly with an audit record and a notice to
 * the signer. Routes under a signature act in the signature's organization.
 */
export const signatureRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const { queries, clock, files } = services
  const policy = uploadPolicy(services.config)
  const now = () => clock.now().toISOString()

  /** The signature of this document, with the caller's access to its organization checked. */
  const signatureFor = async (request: FastifyRequest, documentId: string, signatureId: string, permissions: readonly Permission[]) => {
    const missing = notFound('signature', signatureId)
    const doc = await queries.signatures.ofDocument(documentId, signatureId)
    if (doc === null) throw missing
    const organization = await actInResourceOrganization(services, request, doc.organizationId, missing, permissions)
    return { doc, organization }
  }

  const current = async (documentId: string, signatureId: string): Promise<SignatureDoc> => {
    const doc = await queries.signatures.ofDocument(documentId, signatureId)
    if (doc === null) throw new AppError('INTERNAL', 'signature not visible after the write')
    return doc
  }

  app.post('/document/:documentId/signature-scan', {
    config: { organization: 'header', permissions: ['WriteDocument'] },
    schema: {
      summary: 'Request a signature scan of a document from a signer',
      description: 'The signer is a profile of the organization (natural or legal person); they are told by e-mail when one of their files is deleted. ' +
        'The signature starts at `pending_file_upload`. With an `Idempotency-Key` header the request can be sent again safely (a retry after a ' +
        'timeout): the first makes the signature scan (201), the same request again (the groups of requiredFiles in any order) answers 200 with ' +
        'the scan as it is now, another request with the Key 409 IDEMPOTENCY_KEY_REUSED; concurrent duplicates make one scan. Keys are per ' +
        'organization and kept for good. Without one, every request makes a scan.',
      tags: ['Signatures'], headers: Type.Object({ ...OrganizationHeaders.properties, 'idempotency-key': IdempotencyKeyHeader }, { additionalProperties: true }),
      params: DocumentParams,
      body: Type.Object({ signerId: Uuid, requiredFiles: RequiredFiles }, { additionalProperties: false }),
      response: {
        201: success({ ...Signature.properties }),
        200: Type.Object(success({ ...Signature.properties }).properties, { description: 'the signature scan this Idempotency-Key already made' }),
        ...failures(400, 401, 403, 409),
      },
    },
  }, async (request, reply) => {
    const organization = organizationOf(request)
    const { signerId, requiredFiles } = request.body
    const { state: signer } = await services.commands.load(profileAggregate, signerId)
    if (!signer.exists || signer.organizationId !== organization.id) {
      throw invalidFields([{ field: 'body.signerId', message: 'is not a profile of this organization' }])
    }
    const { documentId } = request.params
    const key = request.headers['idempotency-key']
    const signatureId = key === undefined ? newId() : keyedSignatureId(organization.id, key)
    const command = {
      type: 'RequestSignatureScan' as const, signatureId, organizationId: organization.id, documentId, signerId, requiredFiles,
      requestedBy: principalOf(request).id, now: now(),
    }
    if (key === undefined) {
      await services.execute(signatureAggregate, signatureId, command, commandContext(request))
      return reply.code(201).send({ status: 'success', data: signatureView(await current(documentId, signatureId)) })
    }
    const once = await requestSignatureOnce(services.commands, {
      ...command, idempotency: { key, requestHash: signatureRequestHash(documentId, signerId, requiredFiles) },
    }, commandContext(request), organization.permissions.has('ReadDocument'))
    await services.settle(once.position)
    return reply.code(once.created ? 201 : 200).send({ status: 'success', data: signatureView(await current(documentId, signatureId)) })
  })

  app.get('/document/:documentId/signature-scan', {
    config: { organization: 'header', permissions: ['ReadDocument'] },
    schema: {
      summary: 'The signature scans of a document',
      tags: ['Signatures'], headers: OrganizationHeaders, params: DocumentParams, querystring: PageQuery,
      response: { 200: Type.Object({ status: Type.Literal('success'), data: Type.Array(Signature), pagination: Pagination }), ...failures(400, 401, 403) },
    },
  }, async (request) => {
    const { page, limit } = request.query
    const { items, total } = await queries.signatures.listOfDocument(organizationOf(request).id, request.params.documentId, { offset: (page - 1) * limit, limit })
    return { status: 'success' as const, data: items.map(signatureView), pagination: pagination(page, limit, total) }
  })

  app.get('/document/:documentId/signature-scan/:signatureId', {
    schema: {
      summary: 'A signature scan: status, files and what is still required',
      tags: ['Signatures'], headers: OptionalOrganization, params: SignatureParams,
      response: { 200: success({ ...Signature.properties }), ...failures(401, 403, 404) },
    },
  }, async (request) => {
    const { doc } = await signatureFor(request, request.params.documentId, request.params.signatureId, ['ReadDocument'])
    return { status: 'success' as const, data: signatureView(doc) }
  })

  app.post('/document/:documentId/signature-scan/:signatureId/finalize', {
    schema: {
      summary: 'Finalize a signature once every required group has a file; its files can no longer change',
      tags: ['Signatures'], headers: OptionalOrganization, params: SignatureParams,
      response: { 200: success({ ...Signature.properties }), ...failures(401, 403, 404, 409) },
    },
  }, async (request) => {
    const { documentId, signatureId } = request.params
    await signatureFor(request, documentId, signatureId, ['WriteDocument'])
    await services.execute(signatureAggregate, signatureId, {
      type: 'FinalizeSignature', documentId, finalizedBy: principalOf(request).id, now: now(),
    }, commandContext(request))
    return { status: 'success' as const, data: signatureView(await current(documentId, signatureId)) }
  })

  app.delete('/document/:documentId/signature-scan/:signatureId/signature-file/:signatureFileId/:field', {
    schema: {
      summary: 'Delete a signature file (soft): kept for audit, no longer counted; the signer is notified',
      description: 'Only the file\'s owner (who uploaded it) or an administrator, holding the permission of the field ' +
        '(DeleteSignatureImage, DeleteSignatureDocumentFront, DeleteSignatureDocumentBack, DeleteSignatureVerification). ' +
        'A finalized signature answers 409 SIGNATURE_FINALIZED; a file already deleted answers 404 SIGNATURE_FILE_DELETED; ' +
        'ids that do not belong together answer 404. Nothing changes on any refusal.',
      tags: ['Signatures'], headers: OptionalOrganization,
      params: Type.Object({ documentId: Uuid, signatureId: Uuid, signatureFileId: Uuid, field: Field }),
      querystring: Type.Object({
        reason: Type.Optional(Type.String({
          maxLength: MAX_REASON_LENGTH, pattern: NO_CONTROL_TEXT_PATTERN,
          description: 'recorded for audit and told to the signer; tabs and line breaks allowed, no other control characters; empty or blank: none given',
        })),
      }, { additionalProperties: false }),
      response: {
        200: success({
          deletedFile: Type.Object({ fileId: Uuid, field: Field, deletedAt: Timestamp, deletedBy: Type.String(), auditId: Uuid, reason: Type.Union([Type.String(), Type.Null()]) }),
          signature: SignatureBrief,
        }),
        ...failures(400, 401, 403, 404, 409),
      },
    },
  }, async (request) => {
    const { documentId, signatureId, signatureFileId, field } = request.params
    const { organization } = await signatureFor(request, documentId, signatureId, [deletePermissionOf[field]])
    const reason = request.query.reason?.trim() ?? ''
    const result = await services.execute(signatureAggregate, signatureId, {
      type: 'DeleteSignatureFile', documentId, fileId: signatureFileId, field, reason: reason === '' ? null : reason,
      deletedBy: principalOf(request).id, isAdministrator: organization.isAdministrator, auditId: newId(), now: now(),
    }, commandContext(request))
    const deleted = result.events.find((e) => e.type === 'SignatureFileDeleted')
    if (deleted?.type !== 'SignatureFileDeleted') throw new AppError('INTERNAL', 'the deletion recorded nothing')
    const { data } = deleted
    return {
      status: 'success' as const,
      data: {
        deletedFile: { fileId: data.fileId, field: data.field, deletedAt: data.deletedAt, deletedBy: data.deletedBy, auditId: data.auditId, reason: data.reason },
        signature: brief(await current(documentId, signatureId)),
      },
    }
  })

  app.get('/document/:documentId/signature-scan/:signatureId/signature-file/:signatureFileId', {
    schema: {
      summary: 'The bytes of a signature file',
      description: 'Deleted files are kept for audit: only administrators can still fetch them; for others they are 404.',
      tags: ['Signatures'], headers: OptionalOrganization,
      params: Type.Object({ documentId: Uuid, signatureId: Uuid, signatureFileId: Uuid }),
      response: { 200: BinaryResponse, ...failures(401, 403, 404) },
    },
  }, async (request, reply) => {
    const { documentId, signatureId, signatureFileId } = request.params
    const { doc, organization } = await signatureFor(request, documentId, signatureId, ['ReadDocument'])
    const file = doc.files.find((f) => f.fileId === signatureFileId)
    if (file === undefined || (file.deleted && !organization.isAdministrator)) throw notFound('signature file', signatureFileId)
    const sent = await sendFile(reply, files, file.fileId, file)
    if (sent === null) throw notFound('signature file', signatureFileId)
    return sent
  })

  app.get('/document/:documentId/signature-scan/:signatureId/audit', {
    schema: {
      summary: 'Who deleted which file of the signature, when and why, and how the signer was told',
      tags: ['Signatures'], headers: OptionalOrganization, params: SignatureParams, querystring: PageQuery,
      response: {
        200: Type.Object({
          status: Type.Literal('success'),
          data: Type.Object({ signatureId: Uuid, documentId: Uuid, entries: Type.Array(AuditEntry) }),
          pagination: Pagination,
        }),
        ...failures(400, 401, 403, 404),
      },
    },
  }, async (request) => {
    const { documentId, signatureId } = request.params
    await signatureFor(request, documentId, signatureId, ['ReadDocument'])
    const { page, limit } = request.query
    const { items, total } = await queries.signatureAudit.ofSignature(signatureId, { offset: (page - 1) * limit, limit })
    return { status: 'success' as const, data: { signatureId, documentId, entries: items.map(auditView) }, pagination: pagination(page, limit, total) }
  })

  await app.register(async (scope) => {
    await acceptUploads(scope, policy)
    const uploads = scope.withTypeProvider<TypeBoxTypeProvider>()
    uploads.put('/document/:documentId/signature-scan/:signatureId/signature-file/:field', {
      schema: {
        summary: 'Upload the file of a field of a signature; answers its file id',
        description: `${uploadDescription(policy)} The field must be among the signature's required files and have no present file ` +
          '(409 SIGNATURE_FILE_EXISTS: delete it first, with a reason); a finalized signature answers 409 SIGNATURE_FINALIZED. ' +
          'The uploader becomes the file\'s owner.',
        tags: ['Signatures'], headers: OptionalOrganization,
        params: Type.Object({ documentId: Uuid, signatureId: Uuid, field: Field }),
        querystring: UploadQuery,
        response: {
          201: success({
            fileId: Uuid, field: Field, contentType: Type.String(), size: Type.Integer(), sha256: Type.String(), filename: Type.String(),
            uploadedAt: Timestamp, signature: SignatureBrief,
          }),
          ...failures(400, 401, 403, 404, 409, 413, 415),
        },
      },
    }, async (request, reply) => {
      const { documentId, signatureId, field } = request.params
      const { doc } = await signatureFor(request, documentId, signatureId, ['WriteDocument'])
      const upload = await readUpload(request, policy, request.query.filename)
      const fileId = newId()
      const stored = await storeUpload(files, fileId, upload, { organizationId: doc.organizationId, defaultName: field }, policy)
      let uploadedAt: string
      try {
        const result = await services.execute(signatureAggregate, signatureId, {
          type: 'UploadSignatureFile', documentId, fileId, field, contentType: stored.contentType, size: stored.size, sha256: stored.sha256,
          filename: stored.filename, uploadedBy: principalOf(request).id, now: now(),
        }, commandContext(request))
        const uploaded = result.events.find((e) => e.type === 'SignatureFileUploaded')
        if (uploaded?.type !== 'SignatureFileUploaded') throw new AppError('INTERNAL', 'the upload recorded nothing')
        uploadedAt = uploaded.data.uploadedAt
      } catch (error) {
        await files.delete(fileId)
        throw error
      }
      return reply.code(201).send({
        status: 'success',
        data: {
          fileId, field, contentType: stored.contentType, size: stored.size, sha256: stored.sha256, filename: stored.filename, uploadedAt,
          signature: brief(await current(documentId, signatureId)),
        },
      })
    })
  })
}

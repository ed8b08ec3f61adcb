import { signatureFields, type SignatureEvent, type SignatureField, type SignatureFileFacts, type SignatureStatus } from '../events/signature.js'
import type { RequestKey } from '../events/types.js'
import { AppError, invalidFields, type FieldError } from '../shared/errors.js'
import { deterministicId } from '../shared/ids.js'
import { characterCount } from '../shared/text.js'
import type { Aggregate } from './decider.js'
import type { CommandContext, CommandHandler } from './handler.js'
import { createStreamOnce, hashRequest } from './idempotency.js'

export type SignatureCommand =
  | {
    type: 'RequestSignatureScan'
    signatureId: string
    organizationId: string
    documentId: string
    signerId: string
    requiredFiles: SignatureField[][]
    requestedBy: string
    now: string
    /** The requester's `Idempotency-Key` (the id from `keyedSignatureId`) and its request's hash (`signatureRequestHash`). */
    idempotency?: RequestKey
  }
  | (SignatureFileFacts & { type: 'UploadSignatureFile'; documentId: string; uploadedBy: string; now: string })
  | {
    type: 'DeleteSignatureFile'
    documentId: string
    fileId: string
    field: SignatureField
    reason: string | null
    deletedBy: string
    /** The deleter is an administrator of the signature's organization. */
    isAdministrator: boolean
    auditId: string
    now: string
  }
  | { type: 'FinalizeSignature'; documentId: string; finalizedBy: string; now: string }

export interface SignatureFileState {
  fileId: string
  field: SignatureField
  /** Who uploaded it: the file's owner. */
  uploadedBy: string
  deleted: boolean
}

export interface SignatureState {
  exists: boolean
  signatureId: string
  organizationId: string
  documentId: string
  signerId: string
  requiredFiles: SignatureField[][]
  files: SignatureFileState[]
  status: SignatureStatus
  /** The `Idempotency-Key` it was requested with, and its request's hash; absent when it was requested without one. */
  idempotency?: RequestKey
}

export const MAX_REASON_LENGTH = 500

const isSignatureField = (value: string): value is SignatureField => (signatureFields as readonly string[]).includes(value)

/** The groups of `requiredFiles` none of whose fields is present. */
export const missingGroups = (requiredFiles: readonly SignatureField[][], present: ReadonlySet<SignatureField>): SignatureField[][] =>
  requiredFiles.filter((group) => !group.some((field) => present.has(field)))

const presentFields = (files: readonly SignatureFileState[]): Set<SignatureField> =>
  new Set(files.filter((file) => !file.deleted).map((file) => file.field))

const statusOf = (requiredFiles: readonly SignatureField[][], files: readonly SignatureFileState[]): SignatureStatus =>
  missingGroups(requiredFiles, presentFields(files)).length === 0 ? 'ready_to_finalize' : 'pending_file_upload'

const requiredFilesErrors = (requiredFiles: readonly string[][]): FieldError[] => {
  if (requiredFiles.length === 0) return [{ field: 'body.requiredFiles', message: 'must list at least one group of fields' }]
  return requiredFiles.flatMap((group, index) => {
    const field = `body.requiredFiles.${index}`
    if (group.length === 0) return [{ field, message: 'a group lists at least one field' }]
    const unknown = group.filter((name) => !isSignatureField(name))
    if (unknown.length > 0) return [{ field, message: `unknown fields ${unknown.join(', ')}; allowed: ${signatureFields.join(', ')}` }]
    if (new Set(group).size !== group.length) return [{ field, message: 'lists a field twice' }]
    return []
  })
}

/** Files are addressed through their document and signature: any id that does not belong answers 404. */
const requireSignatureOf = (state: SignatureState, documentId: string): void => {
  if (!state.exists || state.documentId !== documentId) throw new AppError('NOT_FOUND', 'signature not found', { resource: 'signature' })
}

const refuseFinalized = (state: SignatureState): void => {
  if (state.status === 'finalized') throw new AppError('SIGNATURE_FINALIZED', 'the signature is finalized; its files can no longer change', { signatureId: state.signatureId })
}

export const signatureAggregate: Aggregate<SignatureCommand, SignatureEvent, SignatureState> = {
  streamType: 'signature',
  eventTypes: ['SignatureScanRequested', 'SignatureFileUploaded', 'SignatureFileDeleted', 'SignatureFinalized'],
  initialState: () => ({
    exists: false, signatureId: '', organizationId: '', documentId: '', signerId: '', requiredFiles: [], files: [], status: 'pending_file_upload',
  }),
  decide(command, state) {
    switch (command.type) {
      case 'RequestSignatureScan': {
        if (state.exists) {
          // A request with a Key that lost a race to the same Key: the caller compares it with the signature the first one made.
          if (command.idempotency !== undefined) return []
          throw new AppError('ALREADY_EXISTS', 'signature already exists')
        }
        const errors = requiredFilesErrors(command.requiredFiles)
        if (errors.length > 0) throw invalidFields(errors)
        return [{ type: 'SignatureScanRequested', data: {
          signatureId: command.signatureId, organizationId: command.organizationId, documentId: command.documentId, signerId: command.signerId,
          requiredFiles: command.requiredFiles, requestedBy: command.requestedBy, requestedAt: command.now,
          ...(command.idempotency === undefined ? {} : { idempotency: command.idempotency }),
        } }]
      }
      case 'UploadSignatureFile': {
        requireSignatureOf(state, command.documentId)
        refuseFinalized(state)
        if (state.files.some((file) => file.fileId === command.fileId)) return []
        if (!state.requiredFiles.some((group) => group.includes(command.field))) {
          throw invalidFields([{ field: 'params.field', message: `${command.field} is not among the required files of this signature` }])
        }
        const current = state.files.find((file) => file.field === command.field && !file.deleted)
        if (current !== undefined) {
          throw new AppError('SIGNATURE_FILE_EXISTS', `a ${command.field} file is already present; delete it (with a reason) before uploading another`, {
            fileId: current.fileId, field: command.field,
          })
        }
        const files = [...state.files, { fileId: command.fileId, field: command.field, uploadedBy: command.uploadedBy, deleted: false }]
        return [{ type: 'SignatureFileUploaded', data: {
          signatureId: state.signatureId, organizationId: state.organizationId, documentId: state.documentId, fileId: command.fileId,
          field: command.field, contentType: command.contentType, size: command.size, sha256: command.sha256, filename: command.filename,
          uploadedBy: command.uploadedBy, uploadedAt: command.now, status: statusOf(state.requiredFiles, files),
        } }]
      }
      case 'DeleteSignatureFile': {
        requireSignatureOf(state, command.documentId)
        if (command.reason !== null && characterCount(command.reason) > MAX_REASON_LENGTH) {
          throw invalidFields([{ field: 'querystring.reason', message: `must NOT have more than ${MAX_REASON_LENGTH} characters` }])
        }
        const file = state.files.find((f) => f.fileId === command.fileId && f.field === command.field)
        if (file === undefined) throw new AppError('NOT_FOUND', 'signature file not found', { resource: 'signature file' })
        if (file.uploadedBy !== command.deletedBy && !command.isAdministrator) {
          throw new AppError('FORBIDDEN', 'only the file\'s owner or an administrator may delete it')
        }
        refuseFinalized(state)
        if (file.deleted) throw new AppError('SIGNATURE_FILE_DELETED', 'the signature file is already deleted', { fileId: file.fileId })
        const files = state.files.map((f) => (f.fileId === file.fileId ? { ...f, deleted: true } : f))
        return [{ type: 'SignatureFileDeleted', data: {
          signatureId: state.signatureId, organizationId: state.organizationId, documentId: state.documentId, signerId: state.signerId,
          fileId: file.fileId, field: file.field, reason: command.reason, deletedBy: command.deletedBy,
          byAdministrator: file.uploadedBy !== command.deletedBy, deletedAt: command.now, auditId: command.auditId,
          previousStatus: state.status, status: statusOf(state.requiredFiles, files),
        } }]
      }
      case 'FinalizeSignature': {
        requireSignatureOf(state, command.documentId)
        if (state.status === 'finalized') return []
        const missing = missingGroups(state.requiredFiles, presentFields(state.files))
        if (missing.length > 0) {
          throw new AppError('SIGNATURE_INCOMPLETE', 'required files are missing', { missing })
        }
        return [{ type: 'SignatureFinalized', data: {
          signatureId: state.signatureId, organizationId: state.organizationId, documentId: state.documentId,
          files: state.files.filter((f) => !f.deleted).map((f) => ({ field: f.field, fileId: f.fileId })),
          finalizedBy: command.finalizedBy, finalizedAt: command.now,
        } }]
      }
      default: {
        const _never: never = command
        return _never
      }
    }
  },
  evolve(state, event) {
    switch (event.type) {
      case 'SignatureScanRequested':
        return {
          ...state, exists: true, signatureId: event.data.signatureId, organizationId: event.data.organizationId, documentId: event.data.documentId,
          signerId: event.data.signerId, requiredFiles: event.data.requiredFiles, status: statusOf(event.data.requiredFiles, []),
          ...(event.data.idempotency === undefined ? {} : { idempotency: event.data.idempotency }),
        }
      case 'SignatureFileUploaded':
        return {
          ...state,
          files: [...state.files, { fileId: event.data.fileId, field: event.data.field, uploadedBy: event.data.uploadedBy, deleted: false }],
          status: event.data.status,
        }
      case 'SignatureFileDeleted':
        return { ...state, files: state.files.map((f) => (f.fileId === event.data.fileId ? { ...f, deleted: true } : f)), status: event.data.status }
      case 'SignatureFinalized':
        return { ...state, status: 'finalized' }
      default: {
        const _never: never = event
        return _never
      }
    }
  },
}

/** The id of the signature scan an organization's `Idempotency-Key` names: one scan per Key, whatever the concurrency. */
export const keyedSignatureId = (organizationId: string, key: string): string => deterministicId('signature-key', organizationId, key)

/**
 * What makes two requests with one Key "the same": the document, the signer and
 * the required files as groups of alternatives (each group a set, the groups a set).
 */
export const signatureRequestHash = (documentId: string, signerId: string, requiredFiles: readonly SignatureField[][]): string => {
  const groups = requiredFiles.map((group) => [...new Set(group)].sort().join(','))
  return hashRequest([documentId, signerId, [...new Set(groups)].sort()])
}

/**
 * A signature scan's request under an `Idempotency-Key`: the first makes it,
 * the same request again gets it back (`created: false`) whatever it has
 * become, another request with the Key is 409 `IDEMPOTENCY_KEY_REUSED`. The
 * scan as it is now (its files) is `ReadDocument`'s: a requester holding only
 * `WriteDocument` gets the 409 without its id instead (`mayReadScans`).
 */
export const requestSignatureOnce = (
  commands: CommandHandler, command: Extract<SignatureCommand, { type: 'RequestSignatureScan' }> & { idempotency: RequestKey },
  context: CommandContext, mayReadScans: boolean,
): Promise<{ created: boolean; position: number }> => createStreamOnce(commands, signatureAggregate, command.signatureId, command, context, {
  what: 'signature scan request', details: { signatureId: command.signatureId }, exists: (state) => state.exists,
  mayView: { allows: () => mayReadScans, refusal: 'this Idempotency-Key already made a signature scan, which reading needs permission ReadDocument' },
})

import type { Event, RequestKey } from './types.js'

/** The file fields of a signature scan; deleting each needs its own permission. */
export const signatureFields = ['image', 'document-front', 'document-back', 'verification'] as const
export type SignatureField = (typeof signatureFields)[number]

/**
 * `pending_file_upload`: some group of `requiredFiles` has none of its fields present;
 * `ready_to_finalize`: every group has one; `finalized`: locked, no upload or deletion.
 */
export type SignatureStatus = 'pending_file_upload' | 'ready_to_finalize' | 'finalized'

/**
 * A signature scan requested for a document and a signer (a profile of the organization).
 * `requiredFiles` is a conjunction of alternatives: every inner array must have at least
 * one of its fields present, e.g. `[["image"], ["document-front", "verification"]]`.
 */
export type SignatureScanRequested = Event<'SignatureScanRequested', {
  signatureId: string
  organizationId: string
  documentId: string
  signerId: string
  requiredFiles: SignatureField[][]
  requestedBy: string
  requestedAt: string
  /** The requester's `Idempotency-Key` and a hash of its request; absent when it sent none. */
  idempotency?: RequestKey
}>

/** What is recorded about an uploaded file: its bytes are in the FileStore under `fileId`, its type sniffed. */
export interface SignatureFileFacts {
  fileId: string
  field: SignatureField
  contentType: string
  size: number
  sha256: string
  filename: string
}

/** `status` is the signature's status after the upload. */
export type SignatureFileUploaded = Event<'SignatureFileUploaded', SignatureFileFacts & {
  signatureId: string
  organizationId: string
  documentId: string
  uploadedBy: string
  uploadedAt: string
  status: SignatureStatus
}>

/**
 * A soft deletion: the file stops counting towards the signature, its bytes stay
 * for audit. `auditId` names the audit record; the signer is notified from this event.
 */
export type SignatureFileDeleted = Event<'SignatureFileDeleted', {
  signatureId: string
  organizationId: string
  documentId: string
  signerId: string
  fileId: string
  field: SignatureField
  reason: string | null
  deletedBy: string
  /** True when the deleter was not the file's owner but an administrator. */
  byAdministrator: boolean
  deletedAt: string
  auditId: string
  previousStatus: SignatureStatus
  status: SignatureStatus
}>

export type SignatureFinalized = Event<'SignatureFinalized', {
  signatureId: string
  organizationId: string
  documentId: string
  /** The files the signature was finalized with. */
  files: Array<{ field: SignatureField; fileId: string }>
  finalizedBy: string
  finalizedAt: string
}>

export type SignatureEvent = SignatureScanRequested | SignatureFileUploaded | SignatureFileDeleted | SignatureFinalized

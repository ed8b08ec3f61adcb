import type { SignatureField, SignatureFileFacts, SignatureStatus } from '../events/signature.js'
import { applyAt, defineProjection, updateAt } from './projection.js'
import type { ReadStore } from './readStore.js'

export interface SignatureFileDoc extends SignatureFileFacts {
  uploadedBy: string
  uploadedAt: string
  deleted: boolean
  deletedAt: string | null
  deletedBy: string | null
  auditId: string | null
}

export interface SignatureDoc {
  _id: string
  _position?: number
  organizationId: string
  documentId: string
  signerId: string
  requiredFiles: SignatureField[][]
  status: SignatureStatus
  /** Every file ever uploaded, deleted ones included (marked). */
  files: SignatureFileDoc[]
  requestedBy: string
  createdAt: string
  updatedAt: string
  finalizedAt: string | null
  finalizedBy: string | null
}

const collection = { name: 'signatures', indexes: [{ documentId: 1 }, { organizationId: 1 }, { organizationId: 1, documentId: 1, createdAt: 1, _id: 1 }] } as const

export const signaturesProjection = defineProjection({
  name: 'signatures',
  handles: ['SignatureScanRequested', 'SignatureFileUploaded', 'SignatureFileDeleted', 'SignatureFinalized'],
  collections: [collection],
  async project(store, event, position) {
    const docs = store.collection<SignatureDoc>(collection)
    switch (event.type) {
      case 'SignatureScanRequested': {
        const { data } = event
        return applyAt(docs, data.signatureId, position, (): SignatureDoc => ({
          _id: data.signatureId, organizationId: data.organizationId, documentId: data.documentId, signerId: data.signerId,
          requiredFiles: data.requiredFiles, status: 'pending_file_upload', files: [], requestedBy: data.requestedBy,
          createdAt: data.requestedAt, updatedAt: data.requestedAt, finalizedAt: null, finalizedBy: null,
        }))
      }
      case 'SignatureFileUploaded': {
        const { data } = event
        const file: SignatureFileDoc = {
          fileId: data.fileId, field: data.field, contentType: data.contentType, size: data.size, sha256: data.sha256, filename: data.filename,
          uploadedBy: data.uploadedBy, uploadedAt: data.uploadedAt, deleted: false, deletedAt: null, deletedBy: null, auditId: null,
        }
        return updateAt(docs, data.signatureId, position, (doc): SignatureDoc => ({ ...doc, files: [...doc.files, file], status: data.status, updatedAt: data.uploadedAt }))
      }
      case 'SignatureFileDeleted': {
        const { data } = event
        return updateAt(docs, data.signatureId, position, (doc): SignatureDoc => ({
          ...doc,
          files: doc.files.map((f) => (f.fileId === data.fileId ? { ...f, deleted: true, deletedAt: data.deletedAt, deletedBy: data.deletedBy, auditId: data.auditId } : f)),
          status: data.status,
          updatedAt: data.deletedAt,
        }))
      }
      case 'SignatureFinalized':
        return updateAt(docs, event.data.signatureId, position, (doc): SignatureDoc => ({
          ...doc, status: 'finalized', finalizedAt: event.data.finalizedAt, finalizedBy: event.data.finalizedBy, updatedAt: event.data.finalizedAt,
        }))
      default: {
        const _never: never = event
        return _never
      }
    }
  },
})

export const signatureQueries = (store: ReadStore) => {
  const docs = store.collection<SignatureDoc>(collection)
  return {
    /** The signature if it belongs to this document (any organization: routes check the caller against `organizationId`). */
    ofDocument: async (documentId: string, signatureId: string) => {
      const doc = await docs.get(signatureId)
      return doc !== null && doc.documentId === documentId ? doc : null
    },
    listOfDocument: async (organizationId: string, documentId: string, page: { offset: number; limit: number }) => {
      const filter = { documentId, organizationId }
      const [items, total] = await Promise.all([
        docs.find(filter, { sort: { createdAt: 1, _id: 1 }, skip: page.offset, limit: page.limit }),
        docs.count(filter),
      ])
      return { items, total }
    },
  }
}

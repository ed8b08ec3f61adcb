import path from 'node:path'
import { Eta } from 'eta'
import type { SignatureField, SignatureStatus } from '../events/signature.js'

const eta = new Eta({ views: path.join(import.meta.dirname, 'templates'), autoEscape: true, autoTrim: false, cache: true })

const fieldLabels: Record<SignatureField, string> = {
  'image': 'signature image',
  'document-front': 'identity document (front)',
  'document-back': 'identity document (back)',
  'verification': 'verification',
}

export interface SignatureFileDeletedNotice {
  signerName: string
  organizationName: string
  documentId: string
  signatureId: string
  field: SignatureField
  deletedAt: string
  reason: string | null
  status: SignatureStatus
  missing: SignatureField[][]
}

export interface RenderedMessage {
  subject: string
  text: string
  html: string
}

/** The e-mail telling a signer one of their signature files was removed (templates in ./templates, rendered by eta). */
export const renderSignatureFileDeleted = (notice: SignatureFileDeletedNotice): RenderedMessage => {
  const data = {
    ...notice,
    fieldLabel: fieldLabels[notice.field],
    missing: notice.missing.map((group) => group.map((field) => fieldLabels[field]).join(' or ')),
  }
  return {
    subject: eta.render('./signature-file-deleted.subject.eta', data).replace(/\s+/g, ' ').trim(),
    text: eta.render('./signature-file-deleted.text.eta', data),
    html: eta.render('./signature-file-deleted.html.eta', data),
  }
}

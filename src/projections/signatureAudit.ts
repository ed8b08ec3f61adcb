import type { NotificationChannel } from '../events/notification.js'
import type { SignatureField, SignatureStatus } from '../events/signature.js'
import { applyAt, defineProjection, updateAt } from './projection.js'
import type { ReadStore } from './readStore.js'

/** How telling the signer went: `pending` until the notification process has acted. */
export interface SignerNotificationDoc {
  status: 'pending' | 'dispatched' | 'delivered' | 'failed'
  channel: NotificationChannel | null
  recipient: string | null
  error: string | null
  at: string | null
}

/** One audit record: who deleted which signature file, when and why. */
export interface SignatureAuditDoc {
  _id: string
  _position?: number
  organizationId: string
  documentId: string
  signatureId: string
  action: 'signature-file-deleted'
  fileId: string
  field: SignatureField
  reason: string | null
  actorId: string
  byAdministrator: boolean
  at: string
  previousStatus: SignatureStatus
  status: SignatureStatus
  notification: SignerNotificationDoc
}

const collection = { name: 'signature_audit', indexes: [{ signatureId: 1, at: 1, _id: 1 }, { organizationId: 1 }] } as const

export const signatureAuditProjection = defineProjection({
  name: 'signatureAudit',
  handles: ['SignatureFileDeleted', 'NotificationDispatched', 'NotificationDelivered', 'NotificationFailed'],
  collections: [collection],
  async project(store, event, position) {
    const docs = store.collection<SignatureAuditDoc>(collection)
    switch (event.type) {
      case 'SignatureFileDeleted': {
        const { data } = event
        return applyAt(docs, data.auditId, position, (): SignatureAuditDoc => ({
          _id: data.auditId, organizationId: data.organizationId, documentId: data.documentId, signatureId: data.signatureId,
          action: 'signature-file-deleted', fileId: data.fileId, field: data.field, reason: data.reason, actorId: data.deletedBy,
          byAdministrator: data.byAdministrator, at: data.deletedAt, previousStatus: data.previousStatus, status: data.status,
          notification: { status: 'pending', channel: null, recipient: null, error: null, at: null },
        }))
      }
      case 'NotificationDispatched':
        if (event.data.topic !== 'signature-file-deleted') return
        return updateAt(docs, event.data.topicId, position, (doc): SignatureAuditDoc => ({
          ...doc,
          notification: { status: 'dispatched', channel: event.data.channel, recipient: event.data.recipient, error: null, at: event.data.dispatchedAt },
        }))
      case 'NotificationDelivered':
        if (event.data.topic !== 'signature-file-deleted') return
        return updateAt(docs, event.data.topicId, position, (doc): SignatureAuditDoc => ({
          ...doc, notification: { ...doc.notification, status: 'delivered', at: event.data.deliveredAt },
        }))
      case 'NotificationFailed':
        if (event.data.topic !== 'signature-file-deleted') return
        return updateAt(docs, event.data.topicId, position, (doc): SignatureAuditDoc => ({
          ...doc, notification: { ...doc.notification, status: 'failed', error: event.data.error, at: event.data.failedAt },
        }))
      default: {
        const _never: never = event
        return _never
      }
    }
  },
})

export const signatureAuditQueries = (store: ReadStore) => {
  const docs = store.collection<SignatureAuditDoc>(collection)
  return {
    ofSignature: async (signatureId: string, page: { offset: number; limit: number }) => {
      const filter = { signatureId }
      const [items, total] = await Promise.all([
        docs.find(filter, { sort: { at: 1, _id: 1 }, skip: page.offset, limit: page.limit }),
        docs.count(filter),
      ])
      return { items, total }
    },
    get: (auditId: string) => docs.get(auditId),
    /** Records of an organization made in [from, to), for the logs export: streamed in no particular order. */
    between: (organizationId: string, from: string, to: string): AsyncIterable<SignatureAuditDoc> =>
      docs.stream({ organizationId, at: { $gte: from, $lt: to } }),
  }
}

import { signatureAggregate } from '../commands/signature.js'
import type { SignatureField } from '../events/signature.js'
import { deterministicId } from '../shared/ids.js'
import { demoPdf, demoPng, putDemoFile } from './files.js'
import type { DemoStep } from './index.js'
import { demoProfileId } from './profiles.js'

interface DemoSignature {
  key: string
  signer: string
  requiredFiles: SignatureField[][]
  uploads: SignatureField[]
  /** A file deleted after upload (with its reason): the signature falls back to pending_file_upload and has an audit record. */
  deleted?: { field: SignatureField; reason: string }
  finalize: boolean
}

/** One signature in each state: waiting for files, ready, finalized, and reopened by an audited deletion. */
const demoSignatures: DemoSignature[] = [
  { key: 'bruno-promissory-note', signer: 'bruno', requiredFiles: [['image'], ['document-front'], ['document-back']], uploads: [], finalize: false },
  { key: 'carmen-loan-agreement', signer: 'carmen', requiredFiles: [['image'], ['document-front', 'verification']], uploads: ['image', 'verification'], finalize: false },
  { key: 'ana-loan-agreement', signer: 'ana', requiredFiles: [['image'], ['document-front'], ['document-back']], uploads: ['image', 'document-front', 'document-back'], finalize: true },
  {
    key: 'andes-credit-line', signer: 'andes-coffee', requiredFiles: [['image'], ['verification']], uploads: ['image', 'verification'],
    deleted: { field: 'image', reason: 'The signature does not match the legal representative\'s identity document' }, finalize: false,
  },
]

const fileContent = (field: SignatureField, seed: number): { content: Buffer; contentType: string; filename: string } =>
  field === 'verification'
    ? { content: demoPdf('Verificacion de identidad'), contentType: 'application/pdf', filename: 'verificacion.pdf' }
    : { content: demoPng(seed), contentType: 'image/png', filename: `${field}.png` }

export const signaturesDemo: DemoStep = {
  name: 'signature scans',
  async run(runtime, state) {
    const now = runtime.clock.now().toISOString()
    const actor = state.users['demo.admin'] ?? 'demo'
    const context = { organizationId: state.organizationId, actorId: actor, correlationId: deterministicId('demo', 'signatures', now) }
    for (const [index, demo] of demoSignatures.entries()) {
      const signatureId = deterministicId('demo', 'signature', demo.key)
      const documentId = deterministicId('demo', 'document', demo.key)
      state.ids[`signature.${demo.key}`] = signatureId
      state.ids[`document.${demo.key}`] = documentId
      const load = async () => (await runtime.commands.load(signatureAggregate, signatureId)).state
      if (!(await load()).exists) {
        await runtime.commands.execute(signatureAggregate, signatureId, {
          type: 'RequestSignatureScan', signatureId, organizationId: state.organizationId, documentId, signerId: demoProfileId(demo.signer),
          requiredFiles: demo.requiredFiles, requestedBy: actor, now,
        }, context)
      }
      for (const field of demo.uploads) {
        const fileId = deterministicId('demo', 'signature-file', demo.key, field)
        const current = await load()
        if (current.files.some((f) => f.fileId === fileId) || current.status === 'finalized') continue
        const { content, contentType, filename } = fileContent(field, index)
        const stored = await putDemoFile(runtime, fileId, content, { contentType, filename, organizationId: state.organizationId })
        await runtime.commands.execute(signatureAggregate, signatureId, {
          type: 'UploadSignatureFile', documentId, fileId, field, contentType: stored.contentType, size: stored.size, sha256: stored.sha256,
          filename: stored.filename, uploadedBy: actor, now,
        }, context)
      }
      if (demo.deleted !== undefined) {
        const fileId = deterministicId('demo', 'signature-file', demo.key, demo.deleted.field)
        if ((await load()).files.some((f) => f.fileId === fileId && !f.deleted)) {
          await runtime.commands.execute(signatureAggregate, signatureId, {
            type: 'DeleteSignatureFile', documentId, fileId, field: demo.deleted.field, reason: demo.deleted.reason, deletedBy: actor, isAdministrator: true,
            auditId: deterministicId('demo', 'signature-audit', demo.key), now,
          }, context)
        }
      }
      if (demo.finalize && (await load()).status === 'ready_to_finalize') {
        await runtime.commands.execute(signatureAggregate, signatureId, { type: 'FinalizeSignature', documentId, finalizedBy: actor, now }, context)
      }
    }
  },
}

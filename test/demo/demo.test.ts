import { fileTypeFromBuffer } from 'file-type'
import t from 'tap'
import { loadDemo } from '../../src/demo/index.js'
import { createTestApp } from '../helpers/app.js'

t.test('the demo loads twice without change: profiles with files and shares, signatures in every state', async (t) => {
  // Without process managers, so the only writes are the demo's own.
  const svc = await createTestApp(t, { config: { processesEnabled: false } })
  const first = await loadDemo(svc.runtime)
  const head = await svc.runtime.eventStore.headPosition()
  const again = await loadDemo(svc.runtime)
  t.same(again.ids, first.ids, 'the same ids on a second run')
  t.equal(await svc.runtime.eventStore.headPosition(), head, 'and no new events')
  await svc.runtime.settle(head)

  const organizationId = first.organizationId
  const headers = { 'config-organization-id': organizationId, 'organization-id': organizationId }
  const ana = await svc.call({ method: 'GET', url: `/v1/profiles/${first.ids['profile.ana']}`, token: svc.adminToken, headers })
  t.equal(ana.statusCode, 200)
  const profile = ana.json().data
  t.ok(profile.natural.WorkCertificateFileID, 'Ana has a work certificate')
  t.same(profile.sharedWith, [first.users['demo.analyst']])
  const certificate = await svc.call({ method: 'GET', url: `/v1/debtor/${profile.ID}/profile/work-certificate/${profile.natural.WorkCertificateFileID}`, token: svc.adminToken })
  t.equal(certificate.statusCode, 200)
  t.equal((await fileTypeFromBuffer(certificate.rawPayload))?.mime, certificate.headers['content-type'], 'the recorded type is what the bytes are')

  const statuses: Record<string, string> = {}
  for (const key of ['bruno-promissory-note', 'carmen-loan-agreement', 'ana-loan-agreement', 'andes-credit-line']) {
    const url = `/v1/document/${first.ids[`document.${key}`]}/signature-scan/${first.ids[`signature.${key}`]}`
    const response = await svc.call({ method: 'GET', url, token: svc.adminToken })
    statuses[key] = response.json().data.status
  }
  t.same(statuses, {
    'bruno-promissory-note': 'pending_file_upload',
    'carmen-loan-agreement': 'ready_to_finalize',
    'ana-loan-agreement': 'finalized',
    'andes-credit-line': 'pending_file_upload',
  })
  const audit = await svc.call({
    method: 'GET', url: `/v1/document/${first.ids['document.andes-credit-line']}/signature-scan/${first.ids['signature.andes-credit-line']}/audit`, token: svc.adminToken,
  })
  t.match(audit.json().data.entries, [{ field: 'image', reason: /does not match/ }])
})

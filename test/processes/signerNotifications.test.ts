import net from 'node:net'
import { filter, firstValueFrom } from 'rxjs'
import t from 'tap'
import { notificationAggregate } from '../../src/commands/notification.js'
import type { RecordedOf } from '../../src/events/catalogue.js'
import type { Notifier, OutgoingMessage } from '../../src/notifications/notifier.js'
import { exportBlobJobName } from '../../src/processes/exportJobs.js'
import { signerNotificationsProcess } from '../../src/processes/signerNotifications.js'
import { ManualClock } from '../../src/shared/clock.js'
import { deterministicId } from '../../src/shared/ids.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { pngBytes } from '../helpers/files.js'
import { smtpServer } from '../helpers/smtp.js'

/** A port nothing listens on. */
const closedPort = async (): Promise<number> => {
  const probe = net.createServer()
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve))
  const address = probe.address()
  await new Promise<void>((resolve) => probe.close(() => resolve()))
  if (address === null || typeof address === 'string') throw new Error('no port')
  return address.port
}

const documentId = deterministicId('test', 'document')

/** A signature with one uploaded image, and the function deleting it. */
const signatureWithImage = async (svc: TestApp, email: string | undefined) => {
  const headers = { 'config-organization-id': svc.organizationId, 'organization-id': svc.organizationId }
  const profile = await svc.call({
    method: 'POST', url: '/v1/profiles', token: svc.adminToken, headers,
    payload: { type: 'natural', natural: { firstName: 'Ana', lastName: 'Gómez', documentType: 'CC', documentNumber: '1020304050', ...(email === undefined ? {} : { email }) } },
  })
  const signerId: string = profile.json().data.ID
  const created = await svc.call({
    method: 'POST', url: `/v1/document/${documentId}/signature-scan`, token: svc.adminToken, organizationId: svc.organizationId,
    payload: { signerId, requiredFiles: [['image']] },
  })
  const signatureId: string = created.json().data.id
  const base = `/v1/document/${documentId}/signature-scan/${signatureId}`
  const uploaded = await svc.call({ method: 'PUT', url: `${base}/signature-file/image`, token: svc.adminToken, headers: { 'content-type': 'image/png' }, payload: pngBytes })
  const fileId: string = uploaded.json().data.fileId
  return {
    signatureId,
    remove: (reason: string) => svc.call({ method: 'DELETE', url: `${base}/signature-file/${fileId}/image?reason=${encodeURIComponent(reason)}`, token: svc.adminToken }),
    audit: async () => (await svc.call({ method: 'GET', url: `${base}/audit`, token: svc.adminToken })).json().data.entries[0],
  }
}

/** A notifier that keeps what it is asked to send. */
const recordingNotifier = () => {
  const sent: OutgoingMessage[] = []
  const notifier: Notifier = {
    channel: 'smtp', needsRecipient: true,
    send: async (message) => { sent.push(message); return { messageId: `<${sent.length}@test>` } },
    close: async () => undefined,
  }
  return { sent, notifier }
}

const outcomeOf = (svc: TestApp) =>
  firstValueFrom(svc.runtime.hub.events$.pipe(filter((e) => e.type === 'NotificationDelivered' || e.type === 'NotificationFailed')))

t.test('with SMTP_URL the signer gets an e-mail rendered from the templates, over SMTP', async (t) => {
  const smtp = await smtpServer(t)
  const svc = await createTestApp(t, { config: { smtpUrl: `smtp://127.0.0.1:${smtp.port}`, smtpFrom: 'Lender <no-reply@lender.example>' } })
  const signature = await signatureWithImage(svc, 'ana@example.co')
  const outcome = outcomeOf(svc)
  t.equal((await signature.remove('La imagen está borrosa.\n\tVuelva a escanearla.')).statusCode, 200, 'a reason over two lines')
  t.equal((await outcome).type, 'NotificationDelivered')
  t.equal(smtp.received.length, 1)
  const mail = smtp.received[0]
  t.same(mail?.to, ['ana@example.co'])
  t.equal(mail?.from, 'no-reply@lender.example')
  t.match(mail?.raw, /Subject: .*a file of your signature was removed/)
  t.match(mail?.raw, /multipart\/alternative/, 'text and HTML parts')
  t.match(await signature.audit(), { notification: { status: 'delivered', channel: 'smtp', recipient: 'ana@example.co', error: null } })
})

t.test('a failed notification never fails the deletion; the failure is recorded', async (t) => {
  const svc = await createTestApp(t, { config: { smtpUrl: `smtp://127.0.0.1:${await closedPort()}`, smtpTimeoutMs: 2000 } })
  const signature = await signatureWithImage(svc, 'ana@example.co')
  const outcome = outcomeOf(svc)
  const deleted = await signature.remove('wrong person')
  t.equal(deleted.statusCode, 200, 'the deletion succeeds while the mail server is down')
  t.equal((await outcome).type, 'NotificationFailed')
  t.match(await signature.audit(), { notification: { status: 'failed', channel: 'smtp', error: /ECONNREFUSED|connect/ } })
})

t.test('a signer without an e-mail address: recorded as failed over SMTP', async (t) => {
  const smtp = await smtpServer(t)
  const svc = await createTestApp(t, { config: { smtpUrl: `smtp://127.0.0.1:${smtp.port}` } })
  const signature = await signatureWithImage(svc, undefined)
  const outcome = outcomeOf(svc)
  t.equal((await signature.remove('duplicate')).statusCode, 200)
  t.equal((await outcome).type, 'NotificationFailed')
  t.match(await signature.audit(), { notification: { status: 'failed', error: 'the signer has no e-mail address' } })
  t.equal(smtp.received.length, 0)
})

t.test('the day\'s logs file tells that a notice failed and that a reason was given, without the texts that name or describe the signer', async (t) => {
  const smtp = await smtpServer(t, { rejectRecipients: true })
  const clock = new ManualClock('2026-03-10T12:00:00.000Z')
  const svc = await createTestApp(t, { clock, config: { smtpUrl: `smtp://127.0.0.1:${smtp.port}`, smtpTimeoutMs: 2000 } })
  const rejected = await signatureWithImage(svc, 'ana@example.co')
  const failed = outcomeOf(svc)
  t.equal((await rejected.remove('Firma de otra persona')).statusCode, 200)
  t.equal((await failed).type, 'NotificationFailed')
  t.match(await rejected.audit(), { reason: 'Firma de otra persona', notification: { status: 'failed', error: /ana@example\.co/ } }, 'the audit keeps both texts')
  const addressless = await signatureWithImage(svc, undefined)
  const noAddress = outcomeOf(svc)
  t.equal((await addressless.remove('')).statusCode, 200, 'an empty reason is none given')
  t.equal((await noAddress).type, 'NotificationFailed')

  clock.set('2026-03-11T00:30:00.000Z')
  await svc.runtime.scheduler.runNow(exportBlobJobName('logs'))
  const token = await svc.clientToken(svc.config.adminClientId ?? '', svc.config.adminClientSecret ?? '')
  const logs = await svc.call({ method: 'GET', url: '/v1/exports/blobs/logs', token, organizationId: svc.organizationId })
  t.equal(logs.statusCode, 200)
  const rows = logs.body.trim().split('\r\n').filter((row) => row.startsWith('signature_audit,')).map((row) => row.split(','))
  t.same(rows.map((row) => [row[13], row[14], row[15]]), [['send_failed', 'given', 'failed'], ['no_address', '', 'failed']],
    'error_message, reason, notification_status')
  t.notMatch(logs.body, /ana@example|Firma de otra persona|Recipient address rejected/)
})

t.test('a redelivered deletion event sends nothing again, and a send cut short by a crash is not repeated', async (t) => {
  const svc = await createTestApp(t, { config: { processesEnabled: false } })
  const { sent, notifier } = recordingNotifier()
  const services = { ...svc.runtime, notifier }
  const deletionEvent = async (signatureId: string): Promise<RecordedOf<'SignatureFileDeleted'>> => {
    for await (const event of svc.runtime.eventStore.readStream(`signature-${signatureId}`)) {
      if (event.type === 'SignatureFileDeleted') return event
    }
    throw new Error('no deletion event')
  }

  const first = await signatureWithImage(svc, 'ana@example.co')
  await first.remove('blurry')
  const event = await deletionEvent(first.signatureId)
  await signerNotificationsProcess.handle(event, services)
  await signerNotificationsProcess.handle(event, services)
  t.equal(sent.length, 1, 'handled twice, sent once')
  t.match(sent[0], { to: 'ana@example.co', subject: /a file of your signature was removed/, text: /Reason given: blurry/ })

  const second = await signatureWithImage(svc, 'bea@example.co')
  await second.remove('crash test')
  const interrupted = await deletionEvent(second.signatureId)
  const notificationId = deterministicId('notification', interrupted.id)
  await svc.runtime.commands.execute(notificationAggregate, notificationId, {
    type: 'DispatchNotification', notificationId, organizationId: svc.organizationId, topic: 'signature-file-deleted', topicId: interrupted.data.auditId,
    channel: 'smtp', recipient: 'bea@example.co', subject: 's', causationEventId: interrupted.id, now: new Date().toISOString(),
  }, { organizationId: svc.organizationId, actorId: null, correlationId: 'crash' })
  await signerNotificationsProcess.handle(interrupted, services)
  t.equal(sent.length, 1, 'a dispatch without an outcome is not sent again')
  const { state } = await svc.runtime.commands.load(notificationAggregate, notificationId)
  t.equal(state.status, 'failed', 'it is recorded as failed with an unknown outcome')
})

t.test('a notice handled late describes the signature as the deletion left it, not as it is by then', async (t) => {
  const svc = await createTestApp(t, { config: { processesEnabled: false } })
  const { sent, notifier } = recordingNotifier()
  const signature = await signatureWithImage(svc, 'ana@example.co')
  await signature.remove('blurry')
  const base = `/v1/document/${documentId}/signature-scan/${signature.signatureId}`
  const again = await svc.call({ method: 'PUT', url: `${base}/signature-file/image`, token: svc.adminToken, headers: { 'content-type': 'image/png' }, payload: pngBytes })
  t.equal(again.statusCode, 201, 'the signer uploaded a new image before the notice went out')
  let deletion: RecordedOf<'SignatureFileDeleted'> | null = null
  for await (const event of svc.runtime.eventStore.readStream(`signature-${signature.signatureId}`)) if (event.type === 'SignatureFileDeleted') deletion = event
  if (deletion === null) throw new Error('no deletion event')
  await signerNotificationsProcess.handle(deletion, { ...svc.runtime, notifier })
  t.match(sent[0]?.text, /The signature now needs a new file before it can be completed\. Still required:\n {2}- one of: signature image/)
  t.notMatch(sent[0]?.text, /No further file is needed/)
})

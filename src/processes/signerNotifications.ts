import type { CommandContext } from '../commands/handler.js'
import { notificationAggregate } from '../commands/notification.js'
import { profileAggregate, type ProfileState } from '../commands/profile.js'
import { missingGroups, signatureAggregate } from '../commands/signature.js'
import type { RecordedOf } from '../events/catalogue.js'
import { SEND_CUT_SHORT, SIGNER_WITHOUT_ADDRESS } from '../events/notification.js'
import type { SignatureField } from '../events/signature.js'
import { renderSignatureFileDeleted } from '../notifications/messages.js'
import type { Services } from '../services.js'
import { errorMessage } from '../shared/errors.js'
import { deterministicId } from '../shared/ids.js'
import { defineProcess } from './process.js'

const signerContact = (profile: ProfileState): { name: string; email: string | null } => {
  if (profile.natural !== null) {
    return { name: [profile.natural.firstName, profile.natural.lastName].join(' '), email: profile.natural.email ?? null }
  }
  if (profile.legal !== null) {
    const representative = profile.legal.legalRepresentative
    return {
      name: representative === undefined ? profile.legal.businessName : `${representative.firstName} ${representative.lastName} (${profile.legal.businessName})`,
      email: representative?.email ?? profile.legal.email ?? null,
    }
  }
  return { name: 'signer', email: null }
}

const errorText = (error: unknown): string => errorMessage(error).slice(0, 1000)

const notify = async (event: RecordedOf<'SignatureFileDeleted'>, services: Services): Promise<void> => {
  const { commands, clock, notifier } = services
  const { data } = event
  const notificationId = deterministicId('notification', event.id)
  const context: CommandContext = { organizationId: data.organizationId, actorId: null, correlationId: event.metadata.correlationId, causationId: event.id }
  const record = (command: { type: 'RecordNotificationDelivered'; messageId: string | null } | { type: 'RecordNotificationFailed'; error: string }) =>
    commands.execute(notificationAggregate, notificationId, { ...command, now: clock.now().toISOString() }, context)

  const { state } = await commands.load(notificationAggregate, notificationId)
  if (state.status === 'delivered' || state.status === 'failed') return
  if (state.status === 'dispatched') {
    // A send may or may not have left before the service stopped; sending again could duplicate it.
    await record({ type: 'RecordNotificationFailed', error: SEND_CUT_SHORT })
    return
  }

  const [{ state: signer }, { state: signature }, organization] = await Promise.all([
    commands.load(profileAggregate, data.signerId),
    // The signature as the deletion left it: later deletions, uploads or a finalization are for their own notices.
    commands.load(signatureAggregate, data.signatureId, { before: event.position + 1 }),
    services.queries.organizations.get(data.organizationId),
  ])
  const contact = signerContact(signer)
  const present = new Set<SignatureField>(signature.files.filter((f) => !f.deleted).map((f) => f.field))
  const message = renderSignatureFileDeleted({
    signerName: contact.name, organizationName: organization?.name ?? 'Your lender', documentId: data.documentId, signatureId: data.signatureId,
    field: data.field, deletedAt: data.deletedAt, reason: data.reason, status: data.status,
    missing: missingGroups(signature.requiredFiles, present),
  })
  await commands.execute(notificationAggregate, notificationId, {
    type: 'DispatchNotification', notificationId, organizationId: data.organizationId, topic: 'signature-file-deleted', topicId: data.auditId,
    channel: notifier.channel, recipient: contact.email, subject: message.subject, causationEventId: event.id, now: clock.now().toISOString(),
  }, context)
  if (contact.email === null && notifier.needsRecipient) {
    await record({ type: 'RecordNotificationFailed', error: SIGNER_WITHOUT_ADDRESS })
    return
  }
  try {
    const sent = await notifier.send({ to: contact.email ?? '(no address)', ...message })
    await record({ type: 'RecordNotificationDelivered', messageId: sent.messageId })
  } catch (error) {
    services.logger.warn({ err: error, notificationId, signatureId: data.signatureId }, 'signer notification failed')
    await record({ type: 'RecordNotificationFailed', error: errorText(error) })
  }
}

/**
 * Tells the signer when one of their signature files is deleted. Fed by the
 * deletion event, so a crash loses no notification; the outcome (sent, logged,
 * failed) is recorded as an event and never affects the deletion.
 */
export const signerNotificationsProcess = defineProcess<Services, 'SignatureFileDeleted'>({
  name: 'signerNotifications',
  handles: ['SignatureFileDeleted'],
  handle: notify,
})

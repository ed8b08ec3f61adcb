import t from 'tap'
import { notificationAggregate } from '../../src/commands/notification.js'
import type { NotificationDispatched } from '../../src/events/notification.js'
import { scenario } from '../helpers/deciders.js'

const now = '2026-03-01T10:00:00.000Z'
const notification = scenario(notificationAggregate)
const topic = { topic: 'signature-file-deleted' as const, topicId: 'a1' }
const dispatch = {
  type: 'DispatchNotification' as const, notificationId: 'n1', organizationId: 'o1', ...topic, channel: 'smtp' as const, recipient: 'ana@example.co',
  subject: 'a file was removed', causationEventId: 'e1', now,
}
const dispatched: NotificationDispatched = { type: 'NotificationDispatched', data: {
  notificationId: 'n1', organizationId: 'o1', ...topic, channel: 'smtp', recipient: 'ana@example.co', subject: 'a file was removed', causationEventId: 'e1', dispatchedAt: now,
} }
const delivered = { type: 'NotificationDelivered' as const, data: { notificationId: 'n1', organizationId: 'o1', ...topic, channel: 'smtp' as const, messageId: '<m@x>', deliveredAt: now } }

t.test('a notification is dispatched once, then gets exactly one outcome', async (t) => {
  notification.given().when(dispatch).then(t, [dispatched])
  notification.given(dispatched).when(dispatch).thenNothing(t, 'dispatching again sends nothing again')
  notification.given(dispatched).when({ type: 'RecordNotificationDelivered', messageId: '<m@x>', now }).then(t, [delivered])
  notification.given(dispatched).when({ type: 'RecordNotificationFailed', error: 'ECONNREFUSED', now })
    .then(t, [{ type: 'NotificationFailed', data: { notificationId: 'n1', organizationId: 'o1', ...topic, channel: 'smtp', error: 'ECONNREFUSED', failedAt: now } }])
  notification.given(dispatched, delivered).when({ type: 'RecordNotificationFailed', error: 'late', now }).thenNothing(t, 'an outcome is final')
  notification.given().when({ type: 'RecordNotificationDelivered', messageId: null, now }).thenNothing(t, 'no outcome without a dispatch')
})

import type { NotificationChannel, NotificationEvent, NotificationTopic } from '../events/notification.js'
import type { Aggregate } from './decider.js'

export type NotificationCommand =
  | (NotificationTopic & {
    type: 'DispatchNotification'
    notificationId: string
    organizationId: string
    channel: NotificationChannel
    recipient: string | null
    subject: string
    causationEventId: string
    now: string
  })
  | { type: 'RecordNotificationDelivered'; messageId: string | null; now: string }
  | { type: 'RecordNotificationFailed'; error: string; now: string }

/** none → dispatched → delivered | failed; an outcome is recorded once. */
export type NotificationStatus = 'none' | 'dispatched' | 'delivered' | 'failed'

export interface NotificationState extends NotificationTopic {
  status: NotificationStatus
  notificationId: string
  organizationId: string
  channel: NotificationChannel
}

/**
 * One notification, in a stream keyed by the event it answers: dispatching is
 * recorded before sending, so a redelivered event finds it and sends nothing again.
 */
export const notificationAggregate: Aggregate<NotificationCommand, NotificationEvent, NotificationState> = {
  streamType: 'notification',
  eventTypes: ['NotificationDispatched', 'NotificationDelivered', 'NotificationFailed'],
  initialState: () => ({ status: 'none', notificationId: '', organizationId: '', channel: 'log', topic: 'signature-file-deleted', topicId: '' }),
  decide(command, state) {
    switch (command.type) {
      case 'DispatchNotification':
        if (state.status !== 'none') return []
        return [{ type: 'NotificationDispatched', data: {
          notificationId: command.notificationId, organizationId: command.organizationId, topic: command.topic, topicId: command.topicId,
          channel: command.channel, recipient: command.recipient, subject: command.subject, causationEventId: command.causationEventId,
          dispatchedAt: command.now,
        } }]
      case 'RecordNotificationDelivered':
        if (state.status !== 'dispatched') return []
        return [{ type: 'NotificationDelivered', data: {
          notificationId: state.notificationId, organizationId: state.organizationId, topic: state.topic, topicId: state.topicId,
          channel: state.channel, messageId: command.messageId, deliveredAt: command.now,
        } }]
      case 'RecordNotificationFailed':
        if (state.status !== 'dispatched') return []
        return [{ type: 'NotificationFailed', data: {
          notificationId: state.notificationId, organizationId: state.organizationId, topic: state.topic, topicId: state.topicId,
          channel: state.channel, error: command.error, failedAt: command.now,
        } }]
      default: {
        const _never: never = command
        return _never
      }
    }
  },
  evolve(state, event) {
    switch (event.type) {
      case 'NotificationDispatched':
        return {
          status: 'dispatched', notificationId: event.data.notificationId, organizationId: event.data.organizationId,
          channel: event.data.channel, topic: event.data.topic, topicId: event.data.topicId,
        }
      case 'NotificationDelivered':
        return { ...state, status: 'delivered' }
      case 'NotificationFailed':
        return { ...state, status: 'failed' }
      default: {
        const _never: never = event
        return _never
      }
    }
  },
}

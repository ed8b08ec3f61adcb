import t from 'tap'
import { SEND_CUT_SHORT, SIGNER_WITHOUT_ADDRESS } from '../../src/events/notification.js'
import { notificationFailure } from '../../src/exports/blobProducers/logs.js'

t.test('the logs file gives a failed signer notice\'s kind, never the transport\'s text', async (t) => {
  t.equal(notificationFailure(null), null, 'no failure')
  t.equal(notificationFailure(SIGNER_WITHOUT_ADDRESS), 'no_address')
  t.equal(notificationFailure(SEND_CUT_SHORT), 'outcome_unknown', 'a send a stop cut short may have gone out: not called failed')
  t.equal(notificationFailure("Can't send mail - all recipients were rejected: 550 <ana@example.co>: Recipient address rejected"), 'send_failed')
})

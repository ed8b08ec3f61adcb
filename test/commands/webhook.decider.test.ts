import t from 'tap'
import { webhookAggregate } from '../../src/commands/webhook.js'
import { configurationDefaults } from '../../src/webhooks/configuration.js'
import { scenario } from '../helpers/deciders.js'

const now = '2026-03-01T10:00:00.000Z'
const webhook = scenario(webhookAggregate)
const configuration = { ...configurationDefaults, tag: 'erp', url: 'https://erp.example.com/hook', signingSecret: null }
const create = { type: 'CreateWebhook' as const, webhookId: 'w1', organizationId: 'o1', configuration, now }
const created = { type: 'WebhookCreated' as const, data: { webhookId: 'w1', organizationId: 'o1', configuration, createdAt: now } }
const hidden = { type: 'WebhookCreated' as const, data: { ...created.data, scoresHidden: true as const } }
const moved = { url: 'https://elsewhere.example.com/hook' }

t.test('a creator who may not read scores makes a webhook whose sends hide them; one who may records nothing more unless it asks', async (t) => {
  webhook.given().when({ ...create, mayReadScores: false }).then(t, [hidden])
  webhook.given().when({ ...create, mayReadScores: true }).then(t, [created])
  webhook.given().when({ ...create, mayReadScores: true, scoresHidden: true }).then(t, [hidden], 'one who may read them can still hide them')
  webhook.given().when({ ...create, mayReadScores: false, scoresHidden: false }).thenRefused(t, 'FORBIDDEN')
  t.equal(webhook.given(hidden).state.scoresHidden, true)
  t.equal(webhook.given(created).state.scoresHidden, false, 'as for every webhook stored before the rule')
})

t.test('a webhook that sends scores is changed only by someone who may read them; only a request that asks turns them on', async (t) => {
  webhook.given(created).when({ type: 'UpdateWebhook', changes: moved, mayReadScores: false, now }).thenRefused(t, 'FORBIDDEN')
  webhook.given(created).when({ type: 'UpdateWebhook', changes: { tag: 'erp' }, mayReadScores: false, now }).thenNothing(t, 'no change, no refusal')
  webhook.given(created).when({ type: 'UpdateWebhook', changes: moved, mayReadScores: true, now })
    .then(t, [{ type: 'WebhookUpdated', data: { webhookId: 'w1', organizationId: 'o1', changes: moved, updatedAt: now } }])
  webhook.given(hidden).when({ type: 'UpdateWebhook', changes: moved, mayReadScores: false, now })
    .then(t, [{ type: 'WebhookUpdated', data: { webhookId: 'w1', organizationId: 'o1', changes: moved, updatedAt: now } }], 'hidden stays hidden')
  webhook.given(hidden).when({ type: 'UpdateWebhook', changes: moved, mayReadScores: true, now })
    .then(t, [{ type: 'WebhookUpdated', data: { webhookId: 'w1', organizationId: 'o1', changes: moved, updatedAt: now } }],
      'an administrator\'s change of something else leaves them hidden')
  const shown = { type: 'WebhookUpdated' as const, data: { webhookId: 'w1', organizationId: 'o1', changes: {}, updatedAt: now, scoresHidden: false } }
  webhook.given(hidden).when({ type: 'UpdateWebhook', changes: {}, scoresHidden: false, mayReadScores: true, now }).then(t, [shown], 'asked on its own')
  webhook.given(hidden).when({ type: 'UpdateWebhook', changes: {}, scoresHidden: false, mayReadScores: false, now }).thenRefused(t, 'FORBIDDEN')
  webhook.given(hidden, shown).when({ type: 'UpdateWebhook', changes: {}, scoresHidden: false, mayReadScores: true, now }).thenNothing(t, 'already on')
  t.equal(webhook.given(hidden, shown).state.scoresHidden, false)
  webhook.given(created).when({ type: 'UpdateWebhook', changes: {}, scoresHidden: true, mayReadScores: true, now })
    .then(t, [{ type: 'WebhookUpdated', data: { webhookId: 'w1', organizationId: 'o1', changes: {}, updatedAt: now, scoresHidden: true } }], 'or off')
})

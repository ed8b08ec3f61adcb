import t from 'tap'
import { oauthClientAggregate } from '../../src/commands/oauthClient.js'
import type { OAuthClientEvent } from '../../src/events/oauthClient.js'
import { scenario } from '../helpers/deciders.js'

const client = scenario(oauthClientAggregate)
const registered: OAuthClientEvent = {
  type: 'OAuthClientRegistered',
  data: { clientId: 'c1', name: 'batch job', secretHash: 'h0', scopes: [], organizationId: 'o1', createdAt: '2026-03-01T10:00:00.000Z' },
}
const rotated = (secretHash: string, secretVersion?: number): OAuthClientEvent =>
  ({ type: 'OAuthClientSecretRotated', data: { clientId: 'c1', secretHash, ...(secretVersion === undefined ? {} : { secretVersion }) } })

t.test('each secret rotation counts a new secret version, 1 for the first', async (t) => {
  t.equal(client.given(registered).state.secretVersion, 0, 'a new client is at version 0')
  client.given(registered).when({ type: 'RotateClientSecret', secretHash: 'h1' }).then(t, [rotated('h1', 1)])
  client.given(registered, rotated('h1', 1)).when({ type: 'RotateClientSecret', secretHash: 'h2' }).then(t, [rotated('h2', 2)])
})

t.test('rotations recorded before versions count by their place in the stream', async (t) => {
  const legacy = client.given(registered, rotated('h1'), rotated('h2'))
  t.equal(legacy.state.secretVersion, 2)
  legacy.when({ type: 'RotateClientSecret', secretHash: 'h3' }).then(t, [rotated('h3', 3)])
})

t.test('an unknown client gets no secret', async (t) => {
  client.given().when({ type: 'RotateClientSecret', secretHash: 'h1' }).thenRefused(t, 'NOT_FOUND')
})

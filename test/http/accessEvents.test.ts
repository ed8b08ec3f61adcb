import t from 'tap'
import type { DomainEvent, RecordedEvent } from '../../src/events/catalogue.js'
import { accessEventTypes, concernsAccess } from '../../src/http/accessEvents.js'
import type { Principal } from '../../src/http/context.js'
import { membershipsProjection } from '../../src/projections/memberships.js'
import { organizationsProjection } from '../../src/projections/organizations.js'
import { principalsProjection } from '../../src/projections/principals.js'
import { roleTemplatesProjection } from '../../src/projections/roleTemplates.js'

const recorded = (event: DomainEvent): RecordedEvent => ({
  ...event,
  id: 'event', streamId: 'stream', revision: 0, position: 1, recordedAt: '2026-11-23T00:00:00.000Z',
  metadata: { organizationId: null, actorId: null, correlationId: 'c', causationId: null, occurredAt: '2026-11-23T00:00:00.000Z', schemaVersion: 1 },
})

const user: Principal = {
  kind: 'user', id: 'user-1', clientId: 'client-1', scopes: new Set(), isPlatformAdmin: false, tokenId: 't', signInId: 'family-1',
  passwordVersion: 0, clientSecretVersion: 0, expiresAtMs: 0,
}

t.test('the access events are exactly what the access checks read: principals, organizations, memberships and role templates', async (t) => {
  const read = [...principalsProjection.handles, ...organizationsProjection.handles, ...membershipsProjection.handles, ...roleTemplatesProjection.handles]
  t.same([...accessEventTypes].sort(), [...new Set(read)].sort())
})

t.test('an event concerns a caller\'s access when it is about the caller, its client, its sign-in or the organization it acts in', async (t) => {
  const concerns = concernsAccess(user, 'org-1')
  t.ok(concerns(recorded({ type: 'UserDeactivated', data: { userId: 'user-1' } })), 'the user')
  t.ok(concerns(recorded({ type: 'OAuthClientRevoked', data: { clientId: 'client-1' } })), 'the client it signed in through')
  t.ok(concerns(recorded({ type: 'RefreshTokenFamilyRevoked', data: { familyId: 'family-1', reason: 'revoked', revokedAt: '2026-11-23T00:00:00.000Z' } })), 'its sign-in')
  t.ok(concerns(recorded({ type: 'OrganizationDeactivated', data: { organizationId: 'org-1', reason: 'closing' } })), 'the organization')
  t.ok(concerns(recorded({ type: 'MembershipRoleChanged', data: { membershipId: 'm', organizationId: 'org-1', roleTemplateId: 'r2', previousRoleTemplateId: 'r1' } })), 'a membership in it')
  t.ok(concerns(recorded({ type: 'RoleTemplateUpdated', data: { roleTemplateId: 'r1', organizationId: 'org-1', permissions: [], updatedAt: '2026-11-23T00:00:00.000Z' } })), 'a role template of it')

  t.notOk(concerns(recorded({ type: 'UserDeactivated', data: { userId: 'user-2' } })), 'another user')
  t.notOk(concerns(recorded({ type: 'OAuthClientRevoked', data: { clientId: 'client-2' } })), 'another client')
  t.notOk(concerns(recorded({ type: 'RefreshTokenFamilyRevoked', data: { familyId: 'family-2', reason: 'revoked', revokedAt: '2026-11-23T00:00:00.000Z' } })), 'another sign-in')
  t.notOk(concerns(recorded({ type: 'OrganizationDeactivated', data: { organizationId: 'org-2', reason: 'closing' } })), 'another organization')
  t.notOk(concerns(recorded({ type: 'MembershipRoleChanged', data: { membershipId: 'm', organizationId: 'org-2', roleTemplateId: 'r2', previousRoleTemplateId: 'r1' } })), 'a membership elsewhere')
  t.notOk(concerns(recorded({ type: 'OrganizationDeactivated', data: { organizationId: 'user-1x', reason: 'x' } })), 'an id that only starts like the caller\'s')
})

t.test('a client-credentials caller has no sign-in, and events of the organization it acts in still concern it', async (t) => {
  const client: Principal = { ...user, kind: 'client', id: 'client-9', clientId: 'client-9', signInId: null }
  const concerns = concernsAccess(client, 'org-1')
  t.ok(concerns(recorded({ type: 'OAuthClientSecretRotated', data: { clientId: 'client-9', secretHash: 'h', secretVersion: 1 } })))
  t.ok(concerns(recorded({ type: 'OrganizationActivated', data: { organizationId: 'org-1' } })))
  t.notOk(concerns(recorded({ type: 'UserDeactivated', data: { userId: 'user-1' } })))
})

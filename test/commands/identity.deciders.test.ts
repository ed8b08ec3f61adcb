import t from 'tap'
import { membershipAggregate } from '../../src/commands/membership.js'
import { organizationAggregate } from '../../src/commands/organization.js'
import { refreshTokenFamilyAggregate } from '../../src/commands/refreshTokenFamily.js'
import { roleTemplateAggregate } from '../../src/commands/roleTemplate.js'
import { userAggregate, usernameAggregate } from '../../src/commands/user.js'
import { scenario } from '../helpers/deciders.js'

const now = '2026-03-01T10:00:00.000Z'

t.test('organization', async (t) => {
  const org = scenario(organizationAggregate)
  const created = { type: 'OrganizationCreated' as const, data: { organizationId: 'o1', name: 'Acme', defaultConfigId: 'c1', createdAt: now } }
  t.test('is created once', async (t) => {
    org.given().when({ type: 'CreateOrganization', organizationId: 'o1', name: 'Acme', defaultConfigId: 'c1', now }).then(t, [created])
    org.given(created).when({ type: 'CreateOrganization', organizationId: 'o1', name: 'Acme', defaultConfigId: 'c1', now }).thenRefused(t, 'ALREADY_EXISTS')
  })
  t.test('under an Idempotency-Key records the Key; one that finds the organization made decides nothing', async (t) => {
    const idempotency = { key: 'k1', requestHash: 'h1' }
    const keyed = { type: 'CreateOrganization' as const, organizationId: 'o1', name: 'Acme', defaultConfigId: 'c2', now, idempotency }
    org.given().when(keyed).then(t, [{ type: 'OrganizationCreated', data: { ...created.data, defaultConfigId: 'c2', idempotency } }])
    org.given(created).when(keyed).thenNothing(t, 'the caller compares its request with the one recorded')
  })
  t.test('renaming to the same name changes nothing', async (t) => {
    org.given(created).when({ type: 'RenameOrganization', name: 'Acme' }).thenNothing(t)
    org.given(created).when({ type: 'RenameOrganization', name: 'Acme Bank' })
      .then(t, [{ type: 'OrganizationRenamed', data: { organizationId: 'o1', name: 'Acme Bank' } }])
  })
  t.test('deactivates and activates; an unknown organization is refused', async (t) => {
    org.given(created).when({ type: 'DeactivateOrganization', reason: 'closed' })
      .then(t, [{ type: 'OrganizationDeactivated', data: { organizationId: 'o1', reason: 'closed' } }])
    org.given(created, { type: 'OrganizationDeactivated', data: { organizationId: 'o1', reason: 'x' } }).when({ type: 'ActivateOrganization' })
      .then(t, [{ type: 'OrganizationActivated', data: { organizationId: 'o1' } }])
    org.given(created).when({ type: 'ActivateOrganization' }).thenNothing(t)
    org.given().when({ type: 'DeactivateOrganization', reason: 'x' }).thenRefused(t, 'NOT_FOUND')
  })
})

t.test('role template', async (t) => {
  const rt = scenario(roleTemplateAggregate)
  const created = { type: 'RoleTemplateCreated' as const, data: {
    roleTemplateId: 'r1', organizationId: 'o1', name: 'Ops', description: '', permissions: ['ReadCredit'], isDefault: false, createdAt: now,
  } }
  const assigned = { type: 'RoleTemplateAssigned' as const, data: { roleTemplateId: 'r1', organizationId: 'o1', membershipId: 'm1' } }
  t.test('refuses permissions outside the catalogue, listing each', async (t) => {
    rt.given().when({ type: 'CreateRoleTemplate', roleTemplateId: 'r1', organizationId: 'o1', name: 'x', description: '', permissions: ['ReadCredit', 'Fly'], isDefault: false, now })
      .thenRefused(t, 'VALIDATION_ERROR')
  })
  t.test('a template in use cannot be deleted; an unused one can', async (t) => {
    rt.given(created, assigned).when({ type: 'DeleteRoleTemplate', grantor: 'all', now }).thenRefused(t, 'ROLE_TEMPLATE_IN_USE')
    rt.given(created, assigned, { type: 'RoleTemplateUnassigned', data: assigned.data }).when({ type: 'DeleteRoleTemplate', grantor: 'all', now })
      .then(t, [{ type: 'RoleTemplateDeleted', data: { roleTemplateId: 'r1', organizationId: 'o1', deletedAt: now } }])
  })
  t.test('assigning is idempotent per membership and checks the organization', async (t) => {
    rt.given(created, assigned).when({ type: 'AssignRoleTemplate', grantor: 'all', membershipId: 'm1', organizationId: 'o1' }).thenNothing(t)
    rt.given(created).when({ type: 'AssignRoleTemplate', grantor: 'all', membershipId: 'm2', organizationId: 'other' }).thenRefused(t, 'NOT_FOUND')
  })
  t.test('an update carries only what changed', async (t) => {
    rt.given(created).when({ type: 'UpdateRoleTemplate', grantor: 'all', name: 'Ops', description: 'runs things', now })
      .then(t, [{ type: 'RoleTemplateUpdated', data: { roleTemplateId: 'r1', organizationId: 'o1', description: 'runs things', updatedAt: now } }])
    rt.given(created).when({ type: 'UpdateRoleTemplate', grantor: 'all', name: 'Ops', now }).thenNothing(t)
  })
})

t.test('refresh-token family', async (t) => {
  const family = scenario(refreshTokenFamilyAggregate)
  const issued = { type: 'RefreshTokenIssued' as const, data: {
    familyId: 'f1', clientId: 'c1', userId: 'u1', scope: 'users:read', tokenHash: 'h1', expiresAt: '2026-04-01T00:00:00.000Z', issuedAt: now,
  } }
  const rotated = { type: 'RefreshTokenRotated' as const, data: {
    familyId: 'f1', previousTokenHash: 'h1', tokenHash: 'h2', expiresAt: '2026-04-02T00:00:00.000Z', rotatedAt: now,
  } }
  const rotate = (presentedHash: string, at = now) =>
    ({ type: 'RotateRefreshToken' as const, clientId: 'c1', presentedHash, newHash: 'h3', expiresAt: '2026-05-01T00:00:00.000Z', maxAgeSeconds: 365 * 86_400, now: at })
  t.test('rotates the current token', async (t) => {
    family.given(issued, rotated).when(rotate('h2')).then(t, [{ type: 'RefreshTokenRotated', data: {
      familyId: 'f1', previousTokenHash: 'h2', tokenHash: 'h3', expiresAt: '2026-05-01T00:00:00.000Z', rotatedAt: now,
    } }])
  })
  t.test('a rotated token presented again revokes the whole family', async (t) => {
    family.given(issued, rotated).when(rotate('h1'))
      .then(t, [{ type: 'RefreshTokenFamilyRevoked', data: { familyId: 'f1', reason: 'reuse_detected', revokedAt: now } }])
    family.given(issued, rotated, { type: 'RefreshTokenFamilyRevoked', data: { familyId: 'f1', reason: 'reuse_detected', revokedAt: now } })
      .when(rotate('h2')).thenRefused(t, 'INVALID_REFRESH_TOKEN', 'even the newest token is dead after a reuse')
  })
  t.test('a family keeps the password version of its sign-in; families from before versions have 0', async (t) => {
    const issue = { type: 'IssueRefreshToken' as const, familyId: 'f1', clientId: 'c1', userId: 'u1', passwordVersion: 3, scope: 'users:read',
      tokenHash: 'h1', expiresAt: '2026-04-01T00:00:00.000Z', now }
    family.given().when(issue).then(t, [{ ...issued, data: { ...issued.data, passwordVersion: 3 } }])
    t.equal(family.given({ ...issued, data: { ...issued.data, passwordVersion: 3 } }).state.passwordVersion, 3)
    t.equal(family.given(issued).state.passwordVersion, 0)
  })
  t.test('a sign-in lives no longer than its longest life, however often rotated: the new token ends there, then it is refused', async (t) => {
    const days = (n: number) => n * 86_400
    const signInEnd = new Date(Date.parse(now) + days(40) * 1000).toISOString()
    family.given(issued, rotated).when({ ...rotate('h2'), maxAgeSeconds: days(40) }).then(t, [{ type: 'RefreshTokenRotated', data: {
      familyId: 'f1', previousTokenHash: 'h2', tokenHash: 'h3', expiresAt: signInEnd, rotatedAt: now,
    } }])
    const late = { ...rotated, data: { ...rotated.data, expiresAt: '2027-01-01T00:00:00.000Z' } }
    family.given(issued, late).when({ ...rotate('h2', signInEnd), maxAgeSeconds: days(40) })
      .thenRefused(t, 'INVALID_REFRESH_TOKEN', 'at the end of the sign-in, even an unexpired token')
  })
  t.test('refuses unknown, expired and other clients\' tokens', async (t) => {
    family.given(issued).when(rotate('nope')).thenRefused(t, 'INVALID_REFRESH_TOKEN')
    family.given(issued).when(rotate('h1', '2026-04-01T00:00:00.000Z')).thenRefused(t, 'INVALID_REFRESH_TOKEN')
    family.given(issued).when({ ...rotate('h1'), clientId: 'c2' }).thenRefused(t, 'INVALID_REFRESH_TOKEN')
    family.given().when(rotate('h1')).thenRefused(t, 'INVALID_REFRESH_TOKEN')
  })
})

t.test('user and username', async (t) => {
  const user = scenario(userAggregate)
  const registered = { type: 'UserRegistered' as const, data: { userId: 'u1', username: 'ana', passwordHash: 'x', organizationId: 'o1', createdAt: now } }
  t.test('a one-time code is accepted once per time step', async (t) => {
    user.given(registered).when({ type: 'AcceptOtp', timeStep: 100, now }).then(t, [{ type: 'UserOtpAccepted', data: { userId: 'u1', timeStep: 100 } }])
    user.given(registered, { type: 'UserOtpAccepted', data: { userId: 'u1', timeStep: 100 } }).when({ type: 'AcceptOtp', timeStep: 100, now })
      .thenRefused(t, 'OTP_ALREADY_USED')
    user.given(registered, { type: 'UserOtpAccepted', data: { userId: 'u1', timeStep: 100 } }).when({ type: 'AcceptOtp', timeStep: 99, now })
      .thenRefused(t, 'OTP_ALREADY_USED', 'an older code neither')
  })
  t.test('a user asked for with a TOTP secret is registered and enrolled in one append, never one without the other', async (t) => {
    const register = { type: 'RegisterUser' as const, userId: 'u1', username: 'ana', passwordHash: 'x', organizationId: 'o1', now }
    user.given().when({ ...register, encryptedTotpSecret: 'sealed' })
      .then(t, [registered, { type: 'UserTotpEnrolled', data: { userId: 'u1', encryptedSecret: 'sealed' } }])
    user.given().when({ ...register, encryptedTotpSecret: null }).then(t, [registered])
    user.given(registered).when({ ...register, encryptedTotpSecret: null }).thenRefused(t, 'ALREADY_EXISTS')
  })
  t.test('a password change counts the versions and is refused if another change came between', async (t) => {
    const changed = (passwordVersion: number, passwordHash: string) =>
      ({ type: 'UserPasswordChanged' as const, data: { userId: 'u1', passwordHash, passwordVersion } })
    user.given(registered).when({ type: 'ChangePassword', passwordHash: 'y', expectedPasswordVersion: 0, now }).then(t, [changed(1, 'y')])
    user.given(registered, changed(1, 'y')).when({ type: 'ChangePassword', passwordHash: 'z', expectedPasswordVersion: 1, now }).then(t, [changed(2, 'z')])
    user.given(registered, changed(1, 'y')).when({ type: 'ChangePassword', passwordHash: 'z', expectedPasswordVersion: 0, now })
      .thenRefused(t, 'CONFLICT', 'the current password verified was the one before')
    user.given(registered, { type: 'UserDeactivated', data: { userId: 'u1' } }).when({ type: 'ChangePassword', passwordHash: 'y', expectedPasswordVersion: 0, now })
      .thenRefused(t, 'NOT_ACTIVE')
    user.given().when({ type: 'ChangePassword', passwordHash: 'y', expectedPasswordVersion: 0, now }).thenRefused(t, 'NOT_FOUND')
  })
  t.test('wrong passwords or codes in a row lock the sign-in for the policy\'s time, and then count again from zero', async (t) => {
    const policy = { maxFailures: 3, lockoutSeconds: 600 }
    const fail = (reason: 'password' | 'otp', at = now) => ({ type: 'RecordSignInFailure' as const, reason, policy, now: at })
    const failed = (failures: number, reason: 'password' | 'otp' = 'password') =>
      ({ type: 'UserSignInFailed' as const, data: { userId: 'u1', reason, failedAt: now, failures } })
    const lockedUntil = new Date(Date.parse(now) + 600_000).toISOString()
    const locked = { type: 'UserSignInLocked' as const, data: { userId: 'u1', lockedAt: now, lockedUntil } }
    user.given(registered).when(fail('password')).then(t, [failed(1)])
    user.given(registered, failed(1)).when(fail('otp')).then(t, [failed(2, 'otp')], 'a wrong code counts with the wrong passwords')
    user.given(registered, failed(1), failed(2)).when(fail('password')).then(t, [failed(3), locked], 'the third locks')
    const during = new Date(Date.parse(now) + 599_000).toISOString()
    user.given(registered, failed(1), failed(2), failed(3), locked).when(fail('password', during))
      .thenRefused(t, 'SIGN_IN_LOCKED', 'while locked nothing more is recorded')
    user.given(registered, failed(1), failed(2), failed(3), locked).when({ type: 'AcceptPassword', completesSignIn: true, now: during })
      .thenRefused(t, 'SIGN_IN_LOCKED', 'the right password neither')
    user.given(registered, failed(1), failed(2), failed(3), locked).when({ type: 'AcceptOtp', timeStep: 100, now: during })
      .thenRefused(t, 'SIGN_IN_LOCKED', 'nor the right code')
    user.given(registered, failed(1), failed(2), failed(3), locked)
      .when({ type: 'ChangePassword', passwordHash: 'y', expectedPasswordVersion: 0, now: during })
      .thenRefused(t, 'SIGN_IN_LOCKED', 'nor a password change')
    const after = lockedUntil
    user.given(registered, failed(1), failed(2), failed(3), locked).when(fail('password', after))
      .then(t, [{ ...failed(1), data: { ...failed(1).data, failedAt: after } }], 'at its end the count starts again')
    try {
      userAggregate.decide({ type: 'AcceptPassword', completesSignIn: true, now: during }, [registered, failed(1), failed(2), failed(3), locked]
        .reduce(userAggregate.evolve, userAggregate.initialState()))
      t.fail('refused')
    } catch (error) {
      t.match(error, { code: 'SIGN_IN_LOCKED', details: { lockedUntil, retryAfter: 1 }, headers: { 'retry-after': '1' } }, 'the refusal says until when')
    }
  })
  t.test('a complete sign-in clears the count; a right password before a code to come does not', async (t) => {
    const failed = { type: 'UserSignInFailed' as const, data: { userId: 'u1', reason: 'otp' as const, failedAt: now, failures: 1 } }
    const cleared = { type: 'UserSignInFailuresCleared' as const, data: { userId: 'u1', clearedAt: now } }
    user.given(registered, failed).when({ type: 'AcceptPassword', completesSignIn: true, now }).then(t, [cleared])
    user.given(registered, failed).when({ type: 'AcceptPassword', completesSignIn: false, now }).then(t, [], 'the code is still to come')
    user.given(registered).when({ type: 'AcceptPassword', completesSignIn: true, now }).then(t, [], 'nothing to clear')
    user.given(registered, failed).when({ type: 'AcceptOtp', timeStep: 100, now })
      .then(t, [{ type: 'UserOtpAccepted', data: { userId: 'u1', timeStep: 100 } }, cleared], 'the code completes it')
    const policy = { maxFailures: 2, lockoutSeconds: 60 }
    user.given(registered, failed, { type: 'UserPasswordChanged', data: { userId: 'u1', passwordHash: 'y', passwordVersion: 1 } })
      .when({ type: 'RecordSignInFailure', reason: 'password', policy, now })
      .then(t, [{ type: 'UserSignInFailed', data: { userId: 'u1', reason: 'password', failedAt: now, failures: 1 } }], 'a password change starts it again')
  })
  t.test('an administrator\'s reset changes the password without the current one and lifts a lock; an unlock lifts it alone', async (t) => {
    const lockedUntil = new Date(Date.parse(now) + 60_000).toISOString()
    const failed = { type: 'UserSignInFailed' as const, data: { userId: 'u1', reason: 'password' as const, failedAt: now, failures: 1 } }
    const locked = { type: 'UserSignInLocked' as const, data: { userId: 'u1', lockedAt: now, lockedUntil } }
    const unlocked = { type: 'UserSignInUnlocked' as const, data: { userId: 'u1', unlockedAt: now } }
    const changed = { type: 'UserPasswordChanged' as const, data: { userId: 'u1', passwordHash: 'y', passwordVersion: 1 } }
    user.given(registered, failed, locked).when({ type: 'ResetPassword', passwordHash: 'y', now }).then(t, [unlocked, changed])
    user.given(registered).when({ type: 'ResetPassword', passwordHash: 'y', now }).then(t, [changed], 'nothing to lift')
    user.given(registered, { type: 'UserDeactivated', data: { userId: 'u1' } }).when({ type: 'ResetPassword', passwordHash: 'y', now })
      .thenRefused(t, 'NOT_ACTIVE')
    user.given(registered, failed, locked).when({ type: 'UnlockSignIn', now }).then(t, [unlocked])
    user.given(registered, failed).when({ type: 'UnlockSignIn', now }).then(t, [unlocked], 'failures short of a lock are cleared too')
    user.given(registered).when({ type: 'UnlockSignIn', now }).then(t, [], 'a user neither locked nor failing is left as it is')
    user.given(registered, failed, locked).when({ type: 'UnlockSignIn', now: lockedUntil }).then(t, [], 'an ended lock needs no unlock')
    user.given(registered, failed, locked, unlocked).when({ type: 'AcceptPassword', completesSignIn: true, now }).then(t, [], 'after it, sign-in is open')
  })
  t.test('a deactivated user is reactivated with a new password version and without a lock; an active one is refused', async (t) => {
    const deactivated = { type: 'UserDeactivated' as const, data: { userId: 'u1' } }
    const changed = { type: 'UserPasswordChanged' as const, data: { userId: 'u1', passwordHash: 'y', passwordVersion: 2 } }
    const reactivated = { type: 'UserReactivated' as const, data: { userId: 'u1', reactivatedAt: now } }
    const earlier = { type: 'UserPasswordChanged' as const, data: { userId: 'u1', passwordHash: 'x2', passwordVersion: 1 } }
    user.given(registered, earlier, deactivated).when({ type: 'ReactivateUser', passwordHash: 'y', now })
      .then(t, [changed, reactivated], 'the password changes before the user is active again')
    const lockedUntil = new Date(Date.parse(now) + 60_000).toISOString()
    const failed = { type: 'UserSignInFailed' as const, data: { userId: 'u1', reason: 'password' as const, failedAt: now, failures: 1 } }
    const locked = { type: 'UserSignInLocked' as const, data: { userId: 'u1', lockedAt: now, lockedUntil } }
    user.given(registered, earlier, failed, locked, deactivated).when({ type: 'ReactivateUser', passwordHash: 'y', now })
      .then(t, [{ type: 'UserSignInUnlocked', data: { userId: 'u1', unlockedAt: now } }, changed, reactivated], 'a lock is lifted')
    const back = user.given(registered, earlier, deactivated, changed, reactivated).state
    t.match(back, { active: true, passwordHash: 'y', passwordVersion: 2 })
    user.given(registered).when({ type: 'ReactivateUser', passwordHash: 'y', now }).thenRefused(t, 'CONFLICT', 'an active user is refused')
    user.given(registered, earlier, deactivated, changed, reactivated).when({ type: 'ReactivateUser', passwordHash: 'z', now })
      .thenRefused(t, 'CONFLICT', 'a second reactivation too')
    user.given().when({ type: 'ReactivateUser', passwordHash: 'y', now }).thenRefused(t, 'NOT_FOUND')
    user.given(registered, earlier, deactivated, changed, reactivated).when({ type: 'ResetPassword', passwordHash: 'z', now })
      .then(t, [{ type: 'UserPasswordChanged', data: { userId: 'u1', passwordHash: 'z', passwordVersion: 3 } }],
        'a reactivated user\'s password can be reset again')
  })
  t.test('a username is claimed by one user only', async (t) => {
    const username = scenario(usernameAggregate)
    const claimed = { type: 'UsernameClaimed' as const, data: { username: 'ana', userId: 'u1' } }
    username.given(claimed).when({ type: 'ClaimUsername', username: 'ana', userId: 'u2' }).thenRefused(t, 'USERNAME_TAKEN')
    username.given(claimed).when({ type: 'ClaimUsername', username: 'ana', userId: 'u1' }).thenNothing(t, 'a retry by the same user is a no-op')
  })
  t.test('a username is released only by the user holding it, and can then be claimed again', async (t) => {
    const username = scenario(usernameAggregate)
    const claimed = { type: 'UsernameClaimed' as const, data: { username: 'ana', userId: 'u1' } }
    const released = { type: 'UsernameReleased' as const, data: { username: 'ana', userId: 'u1' } }
    username.given(claimed).when({ type: 'ReleaseUsername', username: 'ana', userId: 'u1' }).then(t, [released])
    username.given(claimed).when({ type: 'ReleaseUsername', username: 'ana', userId: 'u2' }).thenNothing(t, 'another user\'s release changes nothing')
    username.given(claimed, released).when({ type: 'ReleaseUsername', username: 'ana', userId: 'u1' }).thenNothing(t, 'a second release changes nothing')
    username.given(claimed, released).when({ type: 'ClaimUsername', username: 'ana', userId: 'u2' })
      .then(t, [{ type: 'UsernameClaimed', data: { username: 'ana', userId: 'u2' } }])
  })
})

t.test('membership', async (t) => {
  const membership = scenario(membershipAggregate)
  const granted = { type: 'MembershipGranted' as const, data: { membershipId: 'm1', organizationId: 'o1', principalId: 'u1', principalType: 'user' as const, roleTemplateId: 'r1' } }
  membership.given(granted).when({ type: 'ChangeMembershipRole', roleTemplateId: 'r2' }).then(t, [{ type: 'MembershipRoleChanged', data: {
    membershipId: 'm1', organizationId: 'o1', roleTemplateId: 'r2', previousRoleTemplateId: 'r1',
  } }])
  membership.given(granted).when({ type: 'GrantMembership', membershipId: 'm1', organizationId: 'o1', principalId: 'u1', principalType: 'user', roleTemplateId: 'r2' })
    .thenRefused(t, 'ALREADY_EXISTS')
  membership.given().when({ type: 'ChangeMembershipRole', roleTemplateId: 'r2' }).thenRefused(t, 'NOT_FOUND')
})

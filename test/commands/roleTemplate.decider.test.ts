import t from 'tap'
import { builtInRoleTemplateId, roleTemplateAggregate } from '../../src/commands/roleTemplate.js'
import { allPermissions } from '../../src/shared/permissions.js'
import { scenario } from '../helpers/deciders.js'

const now = '2026-03-01T10:00:00.000Z'
const template = scenario(roleTemplateAggregate)
const created = { type: 'RoleTemplateCreated' as const, data: {
  roleTemplateId: 'r1', organizationId: 'o1', name: 'Desk', description: 'd', permissions: ['ReadCredit', 'ReadOrder'], isDefault: false, createdAt: now,
} }

t.test('an update records only what changes', async (t) => {
  template.given(created).when({ type: 'UpdateRoleTemplate', grantor: 'all', name: 'Desk', permissions: ['ReadCredit', 'ReadOrder'], isDefault: false, now }).thenNothing(t)
  template.given(created).when({ type: 'UpdateRoleTemplate', grantor: 'all', permissions: ['ReadCredit', 'ReadCredit', 'ReadOrder'], now }).thenNothing(t, 'repeats are dropped before comparing')
  template.given(created).when({ type: 'UpdateRoleTemplate', grantor: 'all', permissions: ['ReadOrder', 'ReadCredit'], description: 'd', now })
    .thenNothing(t, 'the same permissions in another order are the same set')
  template.given(created).when({ type: 'UpdateRoleTemplate', grantor: 'all', permissions: ['ReadOrder', 'ReadTax'], now })
    .then(t, [{ type: 'RoleTemplateUpdated', data: { roleTemplateId: 'r1', organizationId: 'o1', permissions: ['ReadOrder', 'ReadTax'], updatedAt: now } }])
  template.given(created).when({ type: 'UpdateRoleTemplate', grantor: 'all', permissions: ['Fly'], now }).thenRefused(t, 'VALIDATION_ERROR')
})

t.test('a membership of another organization cannot use the template', async (t) => {
  template.given(created).when({ type: 'AssignRoleTemplate', grantor: 'all', membershipId: 'm1', organizationId: 'o2' }).thenRefused(t, 'NOT_FOUND')
  template.given(created, { type: 'RoleTemplateDeleted', data: { roleTemplateId: 'r1', organizationId: 'o1', deletedAt: now } })
    .when({ type: 'AssignRoleTemplate', grantor: 'all', membershipId: 'm1', organizationId: 'o1' }).thenRefused(t, 'NOT_FOUND', 'nor can anyone use a deleted one')
})

t.test('a blank name is refused, at creation and at an update', async (t) => {
  template.given().when({ type: 'CreateRoleTemplate', roleTemplateId: 'r1', organizationId: 'o1', name: '   ', description: '', permissions: [], isDefault: false, now })
    .thenRefused(t, 'VALIDATION_ERROR')
  template.given(created).when({ type: 'UpdateRoleTemplate', grantor: 'all', name: ' ', now }).thenRefused(t, 'VALIDATION_ERROR')
})

t.test('the built-in Administrator keeps every permission: one taken away is refused, one added (a new one of the catalogue) is recorded', async (t) => {
  const id = builtInRoleTemplateId('o1', 'administrator')
  const administrator = { type: 'RoleTemplateCreated' as const, data: {
    roleTemplateId: id, organizationId: 'o1', name: 'Administrator', description: '', permissions: allPermissions.slice(1), isDefault: false, createdAt: now,
  } }
  template.given(administrator).when({ type: 'UpdateRoleTemplate', grantor: 'all', permissions: allPermissions.slice(2), now }).thenRefused(t, 'BUILT_IN_ROLE_TEMPLATE')
  template.given(administrator).when({ type: 'UpdateRoleTemplate', grantor: 'all', permissions: [...allPermissions], now })
    .then(t, [{ type: 'RoleTemplateUpdated', data: { roleTemplateId: id, organizationId: 'o1', permissions: [...allPermissions], updatedAt: now } }])
  template.given(administrator).when({ type: 'UpdateRoleTemplate', grantor: 'all', name: 'Owners', now })
    .then(t, [{ type: 'RoleTemplateUpdated', data: { roleTemplateId: id, organizationId: 'o1', name: 'Owners', updatedAt: now } }], 'renaming it is allowed')
  template.given(created).when({ type: 'UpdateRoleTemplate', grantor: 'all', permissions: ['ReadCredit'], now })
    .then(t, [{ type: 'RoleTemplateUpdated', data: { roleTemplateId: 'r1', organizationId: 'o1', permissions: ['ReadCredit'], updatedAt: now } }], 'any other template narrows')
})

t.test('a creation under an Idempotency-Key records the Key; one that finds the template made decides nothing, one without a Key is refused', async (t) => {
  const idempotency = { key: 'desk', requestHash: 'h1' }
  const create = { type: 'CreateRoleTemplate' as const, roleTemplateId: 'r1', organizationId: 'o1', name: 'Desk', description: 'd', permissions: ['ReadCredit'], isDefault: false, now }
  template.given().when({ ...create, idempotency }).then(t, [{ type: 'RoleTemplateCreated', data: {
    roleTemplateId: 'r1', organizationId: 'o1', name: 'Desk', description: 'd', permissions: ['ReadCredit'], isDefault: false, createdAt: now, idempotency,
  } }])
  template.given(created).when({ ...create, idempotency }).thenNothing(t, 'the caller compares its request with the one recorded')
  template.given(created, { type: 'RoleTemplateDeleted', data: { roleTemplateId: 'r1', organizationId: 'o1', deletedAt: now } })
    .when({ ...create, idempotency }).thenNothing(t, 'nor is a deleted template made again under its Key')
  template.given(created).when(create).thenRefused(t, 'ALREADY_EXISTS')
})

t.test('the granting rule on the template as the command finds it: an edit, a deletion or an assignment by a grantor lacking a permission of it is refused', async (t) => {
  const holds = new Set(['ReadCredit', 'ReadOrder'])
  const widened = { type: 'RoleTemplateUpdated' as const, data: { roleTemplateId: 'r1', organizationId: 'o1', permissions: ['ReadCredit', 'ReadOrder', 'ReadTax'], updatedAt: now } }
  template.given(created).when({ type: 'UpdateRoleTemplate', grantor: holds, name: 'Desk 2', now })
    .then(t, [{ type: 'RoleTemplateUpdated', data: { roleTemplateId: 'r1', organizationId: 'o1', name: 'Desk 2', updatedAt: now } }])
  template.given(created, widened).when({ type: 'UpdateRoleTemplate', grantor: holds, name: 'Desk 2', now })
    .thenRefused(t, 'FORBIDDEN', 'widened since the caller looked: it holds more than the grantor')
  template.given(created).when({ type: 'UpdateRoleTemplate', grantor: holds, permissions: ['ReadCredit', 'ReadTax'], now })
    .thenRefused(t, 'FORBIDDEN', 'nor may it add what it lacks')
  template.given(created, widened).when({ type: 'DeleteRoleTemplate', grantor: holds, now }).thenRefused(t, 'FORBIDDEN')
  template.given(created).when({ type: 'DeleteRoleTemplate', grantor: holds, now })
    .then(t, [{ type: 'RoleTemplateDeleted', data: { roleTemplateId: 'r1', organizationId: 'o1', deletedAt: now } }])
  template.given(created, widened).when({ type: 'AssignRoleTemplate', grantor: holds, membershipId: 'm1', organizationId: 'o1' }).thenRefused(t, 'FORBIDDEN')
  template.given(created, widened).when({ type: 'AssignRoleTemplate', grantor: 'all', membershipId: 'm1', organizationId: 'o1' })
    .then(t, [{ type: 'RoleTemplateAssigned', data: { roleTemplateId: 'r1', organizationId: 'o1', membershipId: 'm1' } }], 'an administrator grants anything')
})

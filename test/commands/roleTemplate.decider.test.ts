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
  template.given(created).when({ type: 'UpdateRoleTemplate', name: 'Desk', permissions: ['ReadCredit', 'ReadOrder'], isDefault: false, now }).thenNothing(t)
  template.given(created).when({ type: 'UpdateRoleTemplate', permissions: ['ReadCredit', 'ReadCredit', 'ReadOrder'], now }).thenNothing(t, 'repeats are dropped before comparing')
  template.given(created).when({ type: 'UpdateRoleTemplate', permissions: ['ReadOrder', 'ReadCredit'], description: 'd', now })
    .thenNothing(t, 'the same permissions in another order are the same set')
  template.given(created).when({ type: 'UpdateRoleTemplate', permissions: ['ReadOrder', 'ReadTax'], now })
    .then(t, [{ type: 'RoleTemplateUpdated', data: { roleTemplateId: 'r1', organizationId: 'o1', permissions: ['ReadOrder', 'ReadTax'], updatedAt: now } }])
  template.given(created).when({ type: 'UpdateRoleTemplate', permissions: ['Fly'], now }).thenRefused(t, 'VALIDATION_ERROR')
})

t.test('a membership of another organization cannot use the template', async (t) => {
  template.given(created).when({ type: 'AssignRoleTemplate', membershipId: 'm1', organizationId: 'o2' }).thenRefused(t, 'NOT_FOUND')
  template.given(created, { type: 'RoleTemplateDeleted', data: { roleTemplateId: 'r1', organizationId: 'o1', deletedAt: now } })
    .when({ type: 'AssignRoleTemplate', membershipId: 'm1', organizationId: 'o1' }).thenRefused(t, 'NOT_FOUND', 'nor can anyone use a deleted one')
})

t.test('a blank name is refused, at creation and at an update', async (t) => {
  template.given().when({ type: 'CreateRoleTemplate', roleTemplateId: 'r1', organizationId: 'o1', name: '   ', description: '', permissions: [], isDefault: false, now })
    .thenRefused(t, 'VALIDATION_ERROR')
  template.given(created).when({ type: 'UpdateRoleTemplate', name: ' ', now }).thenRefused(t, 'VALIDATION_ERROR')
})

t.test('the built-in Administrator keeps every permission: one taken away is refused, one added (a new one of the catalogue) is recorded', async (t) => {
  const id = builtInRoleTemplateId('o1', 'administrator')
  const administrator = { type: 'RoleTemplateCreated' as const, data: {
    roleTemplateId: id, organizationId: 'o1', name: 'Administrator', description: '', permissions: allPermissions.slice(1), isDefault: false, createdAt: now,
  } }
  template.given(administrator).when({ type: 'UpdateRoleTemplate', permissions: allPermissions.slice(2), now }).thenRefused(t, 'BUILT_IN_ROLE_TEMPLATE')
  template.given(administrator).when({ type: 'UpdateRoleTemplate', permissions: [...allPermissions], now })
    .then(t, [{ type: 'RoleTemplateUpdated', data: { roleTemplateId: id, organizationId: 'o1', permissions: [...allPermissions], updatedAt: now } }])
  template.given(administrator).when({ type: 'UpdateRoleTemplate', name: 'Owners', now })
    .then(t, [{ type: 'RoleTemplateUpdated', data: { roleTemplateId: id, organizationId: 'o1', name: 'Owners', updatedAt: now } }], 'renaming it is allowed')
  template.given(created).when({ type: 'UpdateRoleTemplate', permissions: ['ReadCredit'], now })
    .then(t, [{ type: 'RoleTemplateUpdated', data: { roleTemplateId: 'r1', organizationId: 'o1', permissions: ['ReadCredit'], updatedAt: now } }], 'any other template narrows')
})

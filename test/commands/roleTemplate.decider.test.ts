import t from 'tap'
import { roleTemplateAggregate } from '../../src/commands/roleTemplate.js'
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
    .then(t, [{ type: 'RoleTemplateUpdated', data: { roleTemplateId: 'r1', organizationId: 'o1', permissions: ['ReadOrder', 'ReadCredit'], updatedAt: now } }])
  template.given(created).when({ type: 'UpdateRoleTemplate', permissions: ['Fly'], now }).thenRefused(t, 'VALIDATION_ERROR')
})

t.test('a membership of another organization cannot use the template', async (t) => {
  template.given(created).when({ type: 'AssignRoleTemplate', membershipId: 'm1', organizationId: 'o2' }).thenRefused(t, 'NOT_FOUND')
  template.given(created, { type: 'RoleTemplateDeleted', data: { roleTemplateId: 'r1', organizationId: 'o1', deletedAt: now } })
    .when({ type: 'AssignRoleTemplate', membershipId: 'm1', organizationId: 'o1' }).thenRefused(t, 'NOT_FOUND', 'nor can anyone use a deleted one')
})

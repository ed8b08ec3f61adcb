import { builtInRoleTemplateId } from '../../src/commands/identity.js'
import { profileAggregate } from '../../src/commands/profile.js'
import type { LegalPerson, NaturalPerson } from '../../src/events/profile.js'
import type { Permission } from '../../src/shared/permissions.js'
import { newId } from '../../src/shared/ids.js'
import type { TestApp } from './app.js'

export interface TestOrganization {
  id: string
  defaultConfigId: string
}

/** A new organization, created by the platform administrator. */
export const createOrganization = async (svc: TestApp, name: string): Promise<TestOrganization> => {
  const response = await svc.call({ method: 'POST', url: '/v1/organizations', token: svc.adminToken, payload: { name } })
  if (response.statusCode !== 201) throw new Error(`organization not created: ${response.body}`)
  const organization: { id: string; defaultConfigId: string } = response.json().data.organization
  return { id: organization.id, defaultConfigId: organization.defaultConfigId }
}

export const defaultConfigOf = async (svc: TestApp, organizationId: string): Promise<string> => {
  const response = await svc.call({ method: 'GET', url: `/v1/organizations/${organizationId}`, token: svc.adminToken })
  const organization: { defaultConfigId: string } = response.json().data.organization
  return organization.defaultConfigId
}

/** A client-credentials token of a member of the organization holding a role template with exactly these permissions (or a built-in one). */
export const memberToken = async (svc: TestApp, organizationId: string, role: readonly Permission[] | 'analyst' | 'administrator'): Promise<string> => {
  let roleTemplateId: string
  if (typeof role === 'string') {
    roleTemplateId = builtInRoleTemplateId(organizationId, role)
  } else {
    const template = await svc.call({
      method: 'POST', url: `/v1/organization/${organizationId}/role-template`, token: svc.adminToken,
      payload: { name: `role ${newId()}`, permissions: role },
    })
    if (template.statusCode !== 201) throw new Error(`role template not created: ${template.body}`)
    roleTemplateId = template.json().data.id
  }
  const client = await svc.call({
    method: 'POST', url: '/v1/oauth/clients', token: svc.adminToken,
    payload: { name: `member ${newId()}`, scopes: [], organizationId, roleTemplateId },
  })
  if (client.statusCode !== 201) throw new Error(`client not created: ${client.body}`)
  const { client_id, client_secret } = client.json().data.client
  return svc.clientToken(client_id, client_secret)
}

/** A profile created through its aggregate (the profile HTTP API belongs to another area). */
export const createProfile = async (
  svc: TestApp,
  organizationId: string,
  person: { natural: NaturalPerson } | { legal: LegalPerson },
  ownerId = 'test',
): Promise<string> => {
  const profileId = newId()
  const natural = 'natural' in person ? person.natural : null
  const legal = 'legal' in person ? person.legal : null
  const result = await svc.runtime.execute(profileAggregate, profileId, {
    type: 'CreateProfile', profileId, organizationId, ownerId, profileType: natural === null ? 'legal' : 'natural', natural, legal,
    copiedFrom: null, now: svc.runtime.clock.now().toISOString(),
  }, { organizationId, actorId: 'test', correlationId: newId() })
  await svc.runtime.settle(result.position)
  return profileId
}

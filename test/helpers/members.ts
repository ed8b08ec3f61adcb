import { builtInRoleTemplateId } from '../../src/commands/identity.js'
import type { Permission } from '../../src/shared/permissions.js'
import { requestToken, type TestApp } from './app.js'

export interface Member {
  userId: string
  token: string
}

const PASSWORD = 'correct horse battery'

/** A role template of an organization granting exactly these permissions. */
export const roleTemplateWith = async (svc: TestApp, organizationId: string, permissions: readonly Permission[]): Promise<string> => {
  const response = await svc.call({
    method: 'POST', url: `/v1/organization/${organizationId}/role-template`, token: svc.adminToken,
    payload: { name: `role ${permissions.join(' ')} ${Math.random()}`.slice(0, 100), permissions },
  })
  if (response.statusCode !== 201) throw new Error(`role template: ${response.body}`)
  const body: { data: { id: string } } = response.json()
  return body.data.id
}

/**
 * A user of the organization signed in with the password grant. `role` is a
 * built-in template key or the exact permissions to grant.
 */
export const addMember = async (
  svc: TestApp,
  organizationId: string,
  username: string,
  role: 'administrator' | 'analyst' | readonly Permission[],
): Promise<Member> => {
  const roleTemplateId = typeof role === 'string' ? builtInRoleTemplateId(organizationId, role) : await roleTemplateWith(svc, organizationId, role)
  const created = await svc.call({
    method: 'POST', url: `/v1/organization/${organizationId}/users`, token: svc.adminToken,
    payload: { username, password: PASSWORD, roleTemplateId },
  })
  if (created.statusCode !== 201) throw new Error(`user: ${created.body}`)
  const user: { data: { user: { id: string } } } = created.json()
  const login = await requestToken(svc.app, {
    grant_type: 'password', username, password: PASSWORD, client_id: svc.config.adminClientId ?? '', client_secret: svc.config.adminClientSecret ?? '',
  })
  if (login.statusCode !== 200) throw new Error(`login: ${login.body}`)
  const tokens: { access_token: string } = login.json()
  return { userId: user.data.user.id, token: tokens.access_token }
}

/** An OAuth client of the organization (client-credentials token), e.g. a webhook receiver fetching files. */
export const addClient = async (svc: TestApp, organizationId: string, name: string, role: 'administrator' | 'analyst' | readonly Permission[]): Promise<Member> => {
  const roleTemplateId = typeof role === 'string' ? builtInRoleTemplateId(organizationId, role) : await roleTemplateWith(svc, organizationId, role)
  const created = await svc.call({
    method: 'POST', url: '/v1/oauth/clients', token: svc.adminToken, payload: { name, scopes: [], organizationId, roleTemplateId },
  })
  if (created.statusCode !== 201) throw new Error(`client: ${created.body}`)
  const body: { data: { client: { client_id: string; client_secret: string } } } = created.json()
  return { userId: body.data.client.client_id, token: await svc.clientToken(body.data.client.client_id, body.data.client.client_secret) }
}

export const createOrganization = async (svc: TestApp, name: string): Promise<string> => {
  const response = await svc.call({ method: 'POST', url: '/v1/organizations', token: svc.adminToken, payload: { name } })
  if (response.statusCode !== 201) throw new Error(`organization: ${response.body}`)
  const body: { data: { organization: { id: string } } } = response.json()
  return body.data.organization.id
}

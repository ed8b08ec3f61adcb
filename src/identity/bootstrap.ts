import fs from 'node:fs'
import path from 'node:path'
import { builtInRoleTemplateId, clientStreamId, createClient, createOrganization, ensureDefaultRoleTemplates } from '../commands/identity.js'
import { oauthClientAggregate } from '../commands/oauthClient.js'
import { organizationAggregate } from '../commands/organization.js'
import { systemAggregate } from '../commands/system.js'
import type { Services } from '../services.js'
import { baseUrl } from '../shared/config.js'
import { deterministicId } from '../shared/ids.js'
import { ADMIN_SCOPE } from '../shared/permissions.js'
import { generateSecret, hashSecret, verifySecret } from './passwords.js'

export interface AdminCredentials {
  client_id: string
  client_secret: string
  organization_id: string
  token_url: string
}

export interface BootstrapResult {
  created: boolean
  organizationId: string
  adminClientId: string
  /** Present when this start generated credentials that nobody has seen yet. */
  generated?: AdminCredentials
}

const BOOTSTRAP_ID = 'bootstrap'
const credentialsFile = (dataDir: string) => path.join(dataDir, 'admin-credentials.json')

const readCredentials = (file: string): AdminCredentials | null => {
  try {
    const parsed: unknown = JSON.parse(fs.readFileSync(file, 'utf8'))
    if (typeof parsed !== 'object' || parsed === null) return null
    const get = (key: string) => {
      const value: unknown = Reflect.get(parsed, key)
      return typeof value === 'string' ? value : ''
    }
    return { client_id: get('client_id'), client_secret: get('client_secret'), organization_id: get('organization_id'), token_url: get('token_url') }
  } catch {
    return null
  }
}

/**
 * First start on an empty store: one organization and one administrator client
 * (scope `*`). Ids are derived, and generated credentials are written to
 * DATA_DIR/admin-credentials.json (0600) before the client is registered, so a
 * crash half-way is finished by the next start without a second organization.
 */
export const bootstrap = async (services: Services): Promise<BootstrapResult> => {
  const { config, commands, clock } = services
  const context = { organizationId: null, actorId: 'system', correlationId: deterministicId('bootstrap', clock.now().toISOString()) }
  const { state: system } = await commands.load(systemAggregate, BOOTSTRAP_ID)

  if (system.bootstrapped) {
    await syncAdminSecret(services, system.adminClientId)
    await completeBuiltInTemplates(services)
    return { created: false, organizationId: system.organizationId, adminClientId: system.adminClientId }
  }

  const file = credentialsFile(config.dataDir)
  const saved = readCredentials(file)
  const organizationId = deterministicId('bootstrap', 'organization')
  const clientId = config.adminClientId ?? (saved?.client_id || deterministicId('bootstrap', 'admin-client'))
  const secret = config.adminClientSecret ?? (saved !== null && saved.client_id === clientId && saved.client_secret !== '' ? saved.client_secret : generateSecret())
  const generated = config.adminClientId === undefined || config.adminClientSecret === undefined
  const credentials: AdminCredentials = { client_id: clientId, client_secret: secret, organization_id: organizationId, token_url: `${baseUrl(config)}/v1/oauth/token` }
  if (generated) fs.writeFileSync(file, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 })

  const now = clock.now().toISOString()
  const { state: organization } = await commands.load(organizationAggregate, organizationId)
  if (organization.status === 'none') {
    const created = await createOrganization(commands, {
      organizationId, name: config.bootstrapOrganizationName, defaultConfigId: deterministicId('bootstrap', 'configuration'), now,
    }, context)
    await services.settle(created.position)
  }
  const { state: client } = await commands.load(oauthClientAggregate, clientStreamId(clientId))
  if (!client.exists) {
    const created = await createClient(commands, { grantor: 'all',
      clientId, name: 'Administrator', secretHash: await hashSecret(secret), scopes: [ADMIN_SCOPE], organizationId,
      roleTemplateId: builtInRoleTemplateId(organizationId, 'administrator'), now,
    }, context)
    await services.settle(created.position)
  }
  const recorded = await commands.execute(systemAggregate, BOOTSTRAP_ID, { type: 'RecordBootstrap', organizationId, adminClientId: clientId, now }, context)
  await services.settle(recorded.position)
  return { created: true, organizationId, adminClientId: clientId, ...(generated ? { generated: credentials } : {}) }
}

/** On every start, the built-in Administrator templates gain the permissions added to the catalogue since. */
const completeBuiltInTemplates = async (services: Services): Promise<void> => {
  const now = services.clock.now().toISOString()
  const context = { organizationId: null, actorId: 'system', correlationId: deterministicId('catalogue-upgrade', now) }
  const pageSize = 100
  for (let offset = 0; ; offset += pageSize) {
    const { items } = await services.queries.organizations.list({ offset, limit: pageSize })
    for (const organization of items) {
      const position = await ensureDefaultRoleTemplates(services.commands, organization._id, now, { ...context, organizationId: organization._id })
      await services.settle(position)
    }
    if (items.length < pageSize) return
  }
}

/** ADMIN_CLIENT_SECRET set to a new value on a later start rotates the administrator's secret. */
const syncAdminSecret = async (services: Services, adminClientId: string): Promise<void> => {
  const wanted = services.config.adminClientSecret
  if (wanted === undefined || (services.config.adminClientId ?? adminClientId) !== adminClientId) return
  const { state } = await services.commands.load(oauthClientAggregate, clientStreamId(adminClientId))
  if (!state.exists || (await verifySecret(wanted, state.secretHash))) return
  await services.execute(oauthClientAggregate, clientStreamId(adminClientId), { type: 'RotateClientSecret', secretHash: await hashSecret(wanted) }, {
    organizationId: state.organizationId, actorId: 'system', correlationId: deterministicId('rotate-admin', services.clock.now().toISOString()),
  })
}

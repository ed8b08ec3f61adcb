import { builtInRoleTemplateId, createClient, createOrganization, createUser } from '../commands/identity.js'
import { oauthClientAggregate } from '../commands/oauthClient.js'
import { organizationAggregate } from '../commands/organization.js'
import { userAggregate } from '../commands/user.js'
import { hashSecret } from '../identity/passwords.js'
import { deterministicId } from '../shared/ids.js'
import type { DemoStep } from './index.js'

/** Fixed, documented demo credentials: the demo is for trying the service out, never for production data. */
export const DEMO_PASSWORD = 'demo-password-1'
export const DEMO_CLIENT_SECRET = 'demo-client-secret'

export const foundationDemo: DemoStep = {
  name: 'organization, users and clients',
  async run(runtime, state) {
    const { commands, clock } = runtime
    const now = clock.now().toISOString()
    const organizationId = deterministicId('demo', 'organization')
    const context = { organizationId, actorId: 'demo', correlationId: deterministicId('demo', now) }
    const { state: organization } = await commands.load(organizationAggregate, organizationId)
    if (organization.status === 'none') {
      await createOrganization(commands, { organizationId, name: 'Demo Lending S.A.S.', defaultConfigId: deterministicId('demo', 'configuration'), now }, context)
    }
    state.organizationId = organizationId
    state.defaultConfigId = deterministicId('demo', 'configuration')
    state.adminRoleTemplateId = builtInRoleTemplateId(organizationId, 'administrator')
    state.analystRoleTemplateId = builtInRoleTemplateId(organizationId, 'analyst')
    const users = [['demo.admin', state.adminRoleTemplateId], ['demo.analyst', state.analystRoleTemplateId]] as const
    for (const [username, roleTemplateId] of users) {
      const userId = deterministicId('demo', 'user', username)
      const { state: user } = await commands.load(userAggregate, userId)
      if (!user.exists) {
        await createUser(commands, { grantor: 'all',
          userId, username, passwordHash: await hashSecret(DEMO_PASSWORD), organizationId, roleTemplateId, encryptedTotpSecret: null, now,
        }, context)
      }
      state.users[username] = userId
    }
    const clientId = 'demo-integration'
    const { state: client } = await commands.load(oauthClientAggregate, deterministicId('oauthClient', clientId))
    if (!client.exists) {
      await createClient(commands, { grantor: 'all',
        clientId, name: 'Demo integration', secretHash: await hashSecret(DEMO_CLIENT_SECRET),
        scopes: ['users:read', 'settings:read'], organizationId, roleTemplateId: state.adminRoleTemplateId, now,
      }, context)
    }
    state.clients['integration'] = { clientId, clientSecret: DEMO_CLIENT_SECRET }
  },
}

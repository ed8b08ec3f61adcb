import { ensureDefaultRoleTemplates } from '../commands/identity.js'
import type { Services } from '../services.js'
import { defineProcess } from './process.js'

/** Every organization gets its built-in role templates, even when the request that created it died half-way. */
export const organizationSetupProcess = defineProcess<Services, 'OrganizationCreated'>({
  name: 'organizationSetup',
  handles: ['OrganizationCreated'],
  async handle(event, services) {
    await ensureDefaultRoleTemplates(services.commands, event.data.organizationId, event.data.createdAt, {
      organizationId: event.data.organizationId,
      actorId: event.metadata.actorId,
      correlationId: event.metadata.correlationId,
      causationId: event.id,
    })
  },
})

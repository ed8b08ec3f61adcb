import { withdrawLeftUse } from '../commands/identity.js'
import { membershipAggregate } from '../commands/membership.js'
import { usernameAggregate } from '../commands/user.js'
import { usernameStreamId } from '../events/user.js'
import type { Services } from '../services.js'
import { newId } from '../shared/ids.js'
import type { ScheduledJob } from './scheduler.js'

/**
 * How long a user or client creation may stay between its steps before it
 * counts as cut off. A creation runs its steps within one request, each a
 * command that answers in milliseconds or fails; an hour is far beyond
 * that, so the recovery does not race a creation still under way.
 */
export const REGISTRATION_GRACE_MS = 60 * 60 * 1000

const BATCH = 200

/**
 * Finishes or undoes user and client creations cut off between their steps
 * (src/commands/identity.ts): a principal registered without its membership
 * is granted it, as asked; a role template's use recorded for a principal
 * never registered, or by a role change that never reached the membership,
 * is withdrawn, so the template can be deleted again; a
 * username claimed for a user never registered is released, so it can be
 * taken again. Every command is idempotent: a second run, or one racing
 * another instance, changes nothing more.
 */
export const registrationRecoveryJob: ScheduledJob<Services> = {
  name: 'registrationRecovery',
  schedule: '*/10 * * * *',
  async run(services) {
    const { commands, queries, logger } = services
    const before = new Date(services.clock.now().getTime() - REGISTRATION_GRACE_MS).toISOString()
    const context = { actorId: null, correlationId: newId(), causationId: null }
    let position = 0
    const attempt = async (what: Record<string, string>, step: () => Promise<{ events: readonly unknown[]; position: number }>) => {
      try {
        const result = await step()
        position = Math.max(position, result.position)
        // Nothing appended: another instance, or the creation itself, got there first.
        if (result.events.length > 0) logger.info(what, 'cut-off registration recovered')
      } catch (error) {
        // One that cannot be recovered now must not hold back the others; the next run retries it.
        logger.warn({ ...what, err: error }, 'cut-off registration not recovered')
      }
    }
    // Cut-off creations are rare: a batch of each kind per run, and any more wait for the next run.
    for (const doc of await queries.pendingRegistrations.membershipsPendingSince(before, BATCH)) {
      const organization = { ...context, organizationId: doc.organizationId }
      const { principalId, principalType } = doc
      await attempt({ membershipId: doc._id, outcome: principalId === null ? 'role template use withdrawn' : 'membership granted' }, () =>
        principalId === null || principalType === null
          ? withdrawLeftUse(commands, doc._id, doc.roleTemplateId, organization)
          : commands.execute(membershipAggregate, doc._id, {
            type: 'GrantMembership', membershipId: doc._id, organizationId: doc.organizationId, principalId, principalType, roleTemplateId: doc.roleTemplateId,
          }, organization))
    }
    for (const doc of await queries.pendingRegistrations.usernamesPendingSince(before, BATCH)) {
      await attempt({ userId: doc._id, outcome: 'username released' }, () => commands.execute(usernameAggregate, usernameStreamId(doc.username), {
        type: 'ReleaseUsername', username: doc.username, userId: doc._id,
      }, { ...context, organizationId: null }))
    }
    await services.settle(position)
  },
}

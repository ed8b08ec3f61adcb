import type { SystemEvent } from '../events/system.js'
import type { Aggregate } from './decider.js'

export type SystemCommand = { type: 'RecordBootstrap'; organizationId: string; adminClientId: string; now: string }
export interface SystemState { bootstrapped: boolean; organizationId: string; adminClientId: string }

/** Stream `system-bootstrap`: the first start happens once. */
export const systemAggregate: Aggregate<SystemCommand, SystemEvent, SystemState> = {
  streamType: 'system',
  eventTypes: ['ServiceBootstrapped'],
  initialState: () => ({ bootstrapped: false, organizationId: '', adminClientId: '' }),
  decide(command, state) {
    if (state.bootstrapped) return []
    return [{ type: 'ServiceBootstrapped', data: {
      organizationId: command.organizationId, adminClientId: command.adminClientId, bootstrappedAt: command.now,
    } }]
  },
  evolve: (_state, event) => ({ bootstrapped: true, organizationId: event.data.organizationId, adminClientId: event.data.adminClientId }),
}

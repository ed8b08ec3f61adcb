import type { Event } from './types.js'

/** Written once, on the first start on an empty store (stream `system-bootstrap`). */
export type ServiceBootstrapped = Event<'ServiceBootstrapped', {
  organizationId: string
  adminClientId: string
  bootstrappedAt: string
}>

export type SystemEvent = ServiceBootstrapped

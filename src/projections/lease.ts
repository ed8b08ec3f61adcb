import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Clock } from '../shared/clock.js'
import type { ReadStore } from './readStore.js'

export interface LeaseOptions {
  clock: Clock
  ttlMs: number
  /** How often a waiter asks again for a lease another holder has. */
  pollMs: number
  logger: { info(object: object, message: string): void; error(object: object, message: string): void }
}

interface HeldLease {
  lost: boolean
  renewing: Promise<void>
}

/**
 * Runs `work` holding the store's lease `name`: waits while another holder has
 * it, renews it every third of its time, and releases it after `work`, once a
 * renewal still in flight has settled (which would otherwise take it again). A
 * renewal that fails or finds another holder counts as lost: `stillHeld`, which
 * `work` calls before each step that must not race another holder, then throws.
 */
export const withLease = async <T>(store: ReadStore, name: string, options: LeaseOptions, work: (stillHeld: () => void) => Promise<T>): Promise<T> => {
  const { clock, ttlMs, logger } = options
  const holder = randomUUID()
  let told = false
  while (!(await store.acquireLease(name, holder, clock.now(), ttlMs))) {
    if (!told) logger.info({ lease: name }, 'another instance holds the lease: waiting for it to finish')
    told = true
    await sleep(options.pollMs)
  }
  const lease: HeldLease = { lost: false, renewing: Promise.resolve() }
  const renew = async () => {
    try {
      if (await store.acquireLease(name, holder, clock.now(), ttlMs)) return
      logger.error({ lease: name }, 'the lease ran out while this instance held it')
    } catch (error) {
      logger.error({ err: error, lease: name }, 'renewing the lease failed')
    }
    lease.lost = true
  }
  const renewal = setInterval(() => { lease.renewing = renew() }, ttlMs / 3)
  try {
    return await work(() => {
      if (lease.lost) throw new Error(`the lease ${name} was lost while this instance held it (another instance may hold it now): start again`)
    })
  } finally {
    clearInterval(renewal)
    await lease.renewing
    await store.releaseLease(name, holder)
  }
}

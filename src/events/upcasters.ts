/**
 * Events are never edited: when an event's shape changes, its schemaVersion goes
 * up and an upcaster here turns the older data into the newer shape at read time.
 * Keyed by event type, then by the version being upgraded from.
 */
export type Upcaster = (data: unknown) => unknown

const upcasters = new Map<string, Map<number, { to: number; upgrade: Upcaster }>>()

export const currentSchemaVersions = new Map<string, number>()

export const registerUpcaster = (type: string, fromVersion: number, upgrade: Upcaster): void => {
  const byVersion = upcasters.get(type) ?? new Map<number, { to: number; upgrade: Upcaster }>()
  byVersion.set(fromVersion, { to: fromVersion + 1, upgrade })
  upcasters.set(type, byVersion)
  currentSchemaVersions.set(type, Math.max(currentSchemaVersions.get(type) ?? 1, fromVersion + 1))
}

export const schemaVersionOf = (type: string): number => currentSchemaVersions.get(type) ?? 1

export const upcast = (type: string, data: unknown, version: number): { type: string; data: unknown; schemaVersion: number } => {
  const byVersion = upcasters.get(type)
  let current = data
  let at = version
  while (byVersion !== undefined) {
    const step = byVersion.get(at)
    if (step === undefined) break
    current = step.upgrade(current)
    at = step.to
  }
  return { type, data: current, schemaVersion: at }
}

/**
 * Version 2 of these events means more than version 1 did, in data that reads
 * the same: a payoff's negative interest (interest paid ahead, credited), an
 * allocation reaching an installment already paid, a first period weighed by
 * its days. A release that reads only version 1 would fold them into other
 * figures, so it refuses them instead (serialization.ts); version 1 data needs
 * no change.
 */
for (const type of ['CreditRequested', 'CreditDisbursed', 'CreditPaymentApplied']) registerUpcaster(type, 1, (data) => data)

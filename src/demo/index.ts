import type { Runtime } from '../runtime.js'
import { foundationDemo } from './identity.js'
import { profilesDemo } from './profiles.js'
import { signaturesDemo } from './signatures.js'
import { creditsDemo } from './credits.js'
import { organizationConfigurationDemo } from './organizationConfiguration.js'

export interface DemoStep {
  name: string
  /** Loads the step's data through commands; must be safe to run twice (skips what exists). */
  run(runtime: Runtime, state: DemoState): Promise<void>
}

/** What earlier steps created, for later steps to build on. */
export interface DemoState {
  organizationId: string
  defaultConfigId: string
  adminRoleTemplateId: string
  analystRoleTemplateId: string
  users: Record<string, string>
  clients: Record<string, { clientId: string; clientSecret: string }>
  ids: Record<string, string>
}

/** The demo data set, step by step (each area adds its own). */
export const demoSteps: readonly DemoStep[] = [
  foundationDemo,
  profilesDemo,
  signaturesDemo,
  creditsDemo,
  organizationConfigurationDemo,
]

export const loadDemo = async (runtime: Runtime, log: (line: string) => void = () => undefined): Promise<DemoState> => {
  const state: DemoState = {
    organizationId: '', defaultConfigId: '', adminRoleTemplateId: '', analystRoleTemplateId: '', users: {}, clients: {}, ids: {},
  }
  for (const step of demoSteps) {
    await step.run(runtime, state)
    log(`demo: ${step.name} loaded`)
  }
  return state
}

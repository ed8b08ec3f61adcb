import type { WebhookConfiguration } from '../events/webhook.js'
import type { DataKey } from '../identity/dataKey.js'
import { invalidFields } from '../shared/errors.js'
import type { SendableConfiguration } from './sender.js'
import { signingSecretError, validateConfiguration } from './validation.js'

/** Values of the fields a create (or a test) leaves out. */
export const configurationDefaults: Omit<WebhookConfiguration, 'tag' | 'url' | 'signingSecret'> = {
  requestHeader: '', requestBody: '', authEnabled: false, authUrl: '', authMethod: 'POST', authRequestBody: '', authRequestHeader: '',
  tokenSourceKey: '', tokenType: 'Bearer', authHeader: 'Authorization', tokenHeader: '', responseQueries: {},
}

export type ConfigurationInput = Partial<Omit<WebhookConfiguration, 'signingSecret'>> & { signingSecret?: string | null }

/** Merges input over a base (sealed secret kept unless the input names one), checks the whole, and seals a new secret. */
export const resolveConfiguration = (base: WebhookConfiguration, input: ConfigurationInput, dataKey: DataKey): WebhookConfiguration => {
  const { signingSecret, ...fields } = input
  const merged = { ...base, ...fields }
  const signed = (signingSecret === undefined ? base.signingSecret : signingSecret) !== null
  const errors = [...validateConfiguration(merged, { signed })]
  const secretError = signingSecretError(signingSecret)
  if (secretError !== null) errors.push(secretError)
  if (errors.length > 0) throw invalidFields(errors)
  return { ...merged, signingSecret: signingSecret === undefined ? base.signingSecret : signingSecret === null ? null : dataKey.encrypt(signingSecret) }
}

/** The stored configuration with its secret unsealed, ready for the sender. */
export const unsealed = (configuration: WebhookConfiguration, dataKey: DataKey): SendableConfiguration => ({
  ...configuration,
  signingSecret: configuration.signingSecret === null ? null : dataKey.decrypt(configuration.signingSecret),
})

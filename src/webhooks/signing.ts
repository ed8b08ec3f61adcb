import { Webhook } from 'standardwebhooks'

/**
 * Optional Standard Webhooks signatures (https://www.standardwebhooks.com):
 * `webhook-id`, `webhook-timestamp` (Unix seconds) and `webhook-signature`
 * (`v1,<base64 HMAC-SHA256 of id.timestamp.body>`), made by the project's
 * reference library. Secrets are `whsec_` + base64 of 24 to 64 random bytes.
 */
export const signingSecretProblem = (secret: string): string | null => {
  const match = /^whsec_([A-Za-z0-9+/]+={0,2})$/.exec(secret)
  if (match === null) return 'must be "whsec_" followed by base64'
  const bytes = Buffer.from(match[1] ?? '', 'base64').length
  return bytes < 24 || bytes > 64 ? `must hold 24 to 64 bytes, it holds ${bytes}` : null
}

/** The headers the service adds to a signed send. */
const signatureHeaderNames = ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const

/** HTTP names are case-insensitive: `Webhook-Id` given by a template would reach the receiver as a second webhook-id. */
export const isSignatureHeader = (name: string): boolean => signatureHeaderNames.some((reserved) => reserved === name.trim().toLowerCase())

export const signatureHeaders = (secret: string, messageId: string, at: Date, body: string): Record<typeof signatureHeaderNames[number], string> => ({
  'webhook-id': messageId,
  'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
  'webhook-signature': new Webhook(secret).sign(messageId, at, body),
})

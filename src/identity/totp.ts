import { Secret, TOTP } from 'otpauth'

const PERIOD = 30

const totpFor = (secretBase32: string, label: string) =>
  new TOTP({ issuer: 'credit-service', label, algorithm: 'SHA1', digits: 6, period: PERIOD, secret: Secret.fromBase32(secretBase32) })

/** A new RFC 6238 secret (base32) and the otpauth:// URI an authenticator app scans. */
export const enrolTotp = (username: string): { secret: string; uri: string } => {
  const secret = new Secret({ size: 20 }).base32
  return { secret, uri: totpFor(secret, username).toString() }
}

const CODE = /^[0-9]{6}$/

/** The time step a code belongs to (±1 step of drift), or null when it is wrong (anything but six ASCII digits is). */
export const verifyTotp = (secretBase32: string, code: string, now: Date): number | null => {
  // otpauth compares bytes and throws on a code of six characters but more bytes (`١٢٣٤٥٦`).
  if (!CODE.test(code)) return null
  const delta = totpFor(secretBase32, '').validate({ token: code, timestamp: now.getTime(), window: 1 })
  return delta === null ? null : Math.floor(now.getTime() / 1000 / PERIOD) + delta
}

export const totpCode = (secretBase32: string, at: Date): string => totpFor(secretBase32, '').generate({ timestamp: at.getTime() })

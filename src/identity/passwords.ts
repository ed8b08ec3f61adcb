import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto'
import { invalidFields, type FieldError } from '../shared/errors.js'

let N = 16384
const r = 8
const p = 1
const KEY_LENGTH = 32

const derive = (secret: string, salt: Buffer, options: ScryptOptions, length: number) =>
  new Promise<Buffer>((resolve, reject) =>
    scrypt(secret.normalize('NFKC'), salt, length, options, (error, key) => (error === null ? resolve(key) : reject(error))))

/**
 * A seam for tests only; the service never calls it. The scrypt cost (N, a power of two) of the hashes this
 * process makes from now on: a test process hashes and checks hundreds of secrets (each app's administrator
 * client, every user and client a test creates), at tens of milliseconds each at the real cost. Verification
 * reads the cost stored in each hash, so it is the same code whatever the cost; DECOY_HASH keeps the real one.
 */
export const setHashCostForTests = (cost: number): void => {
  N = cost
}

/** `scrypt$N$r$p$salt$hash` (base64url parts): the only form in which secrets and passwords are stored. */
export const hashSecret = async (secret: string): Promise<string> => {
  const salt = randomBytes(16)
  const key = await derive(secret, salt, { N, r, p }, KEY_LENGTH)
  return ['scrypt', N, r, p, salt.toString('base64url'), key.toString('base64url')].join('$')
}

export const verifySecret = async (secret: string, stored: string): Promise<boolean> => {
  const [scheme, n, rr, pp, salt, hash] = stored.split('$')
  if (scheme !== 'scrypt' || salt === undefined || hash === undefined) return false
  const expected = Buffer.from(hash, 'base64url')
  const key = await derive(secret, Buffer.from(salt, 'base64url'), { N: Number(n), r: Number(rr), p: Number(pp) }, expected.length)
  return key.length === expected.length && timingSafeEqual(key, expected)
}

/** A hash that never matches, verified against when a client or user is unknown, so timing tells nothing. */
export const DECOY_HASH = 'scrypt$16384$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'

export const generateSecret = (bytes = 32): string => randomBytes(bytes).toString('base64url')

/**
 * What a new password must not be beyond its length: only spaces, or the
 * username (in any case, spaces around ignored), the first guess of anyone
 * who knows the name. Named under `field` as a validation error.
 */
export const passwordErrors = (password: string, username: string, field: string): FieldError[] => {
  if (password.trim() === '') return [{ field, message: 'must not be only spaces' }]
  return password.trim().toLowerCase() === username.trim().toLowerCase() ? [{ field, message: 'must not be the username' }] : []
}

export const refuseWeakPassword = (password: string, username: string, field: string): void => {
  const errors = passwordErrors(password, username, field)
  if (errors.length > 0) throw invalidFields(errors)
}

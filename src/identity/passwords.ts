import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto'

const N = 16384
const r = 8
const p = 1
const KEY_LENGTH = 32

const derive = (secret: string, salt: Buffer, options: ScryptOptions, length: number) =>
  new Promise<Buffer>((resolve, reject) =>
    scrypt(secret.normalize('NFKC'), salt, length, options, (error, key) => (error === null ? resolve(key) : reject(error))))

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

import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, type JsonWebKey, type KeyObject } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { ConfigError } from '../shared/config.js'
import { errorCode, errorMessage } from '../shared/errors.js'

export type SigningAlgorithm = 'ES256' | 'RS256'

export interface SigningKey {
  kid: string
  algorithm: SigningAlgorithm
  privateKeyPem: string
  publicKeyPem: string
  publicJwk: JsonWebKey & { kid: string; alg: SigningAlgorithm; use: 'sig' }
}

/** RFC 7638 thumbprint: SHA-256 over the required members in lexicographic order. */
const thumbprint = (jwk: JsonWebKey): string => {
  const members = jwk.kty === 'EC' ? { crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y } : { e: jwk.e, kty: jwk.kty, n: jwk.n }
  return createHash('sha256').update(JSON.stringify(members)).digest('base64url')
}

const algorithmOf = (key: KeyObject): SigningAlgorithm => {
  if (key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1') return 'ES256'
  if (key.asymmetricKeyType === 'rsa' && (key.asymmetricKeyDetails?.modulusLength ?? 0) >= 2048) return 'RS256'
  throw new Error('the JWT signing key must be an EC P-256 key (ES256) or an RSA key of at least 2048 bits (RS256)')
}

export const signingKeyFromPem = (privateKeyPem: string): SigningKey => {
  const privateKey = createPrivateKey(privateKeyPem)
  const publicKey = createPublicKey(privateKey)
  const algorithm = algorithmOf(privateKey)
  const jwk = publicKey.export({ format: 'jwk' })
  const kid = thumbprint(jwk)
  return {
    kid,
    algorithm,
    privateKeyPem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    publicKeyPem: publicKey.export({ format: 'pem', type: 'spki' }).toString(),
    publicJwk: { ...jwk, kid, alg: algorithm, use: 'sig' },
  }
}

export const generateSigningKeyPem = (): string =>
  generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'pem', type: 'pkcs8' }).toString()

/** A key the operator configured: what is wrong with it (unreadable, not a key, a key of another kind) is a setting to fix, said in one line. */
const configuredKey = (setting: string, read: () => string): SigningKey => {
  let pem: string
  try {
    pem = read()
  } catch (error) {
    throw new ConfigError(`${setting} cannot be read: ${errorMessage(error)}`)
  }
  try {
    return signingKeyFromPem(pem)
  } catch (error) {
    throw new ConfigError(`${setting} must hold a PEM private key: ${errorMessage(error)}`)
  }
}

/**
 * The token signing key: from JWT_PRIVATE_KEY or JWT_PRIVATE_KEY_FILE when
 * given, else DATA_DIR/keys/signing-key.pem, generated (ES256) on first start.
 */
export const loadSigningKey = (options: { pem?: string | undefined; file?: string | undefined; dataDir: string }): SigningKey => {
  const { pem, file: given } = options
  if (pem !== undefined) return configuredKey('JWT_PRIVATE_KEY', () => pem)
  if (given !== undefined) return configuredKey('JWT_PRIVATE_KEY_FILE', () => fs.readFileSync(given, 'utf8'))
  const file = path.join(options.dataDir, 'keys', 'signing-key.pem')
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 })
  try {
    fs.writeFileSync(file, generateSigningKeyPem(), { flag: 'wx', mode: 0o600 })
  } catch (error) {
    if (errorCode(error) !== 'EEXIST') throw error
  }
  return signingKeyFromPem(fs.readFileSync(file, 'utf8'))
}

export const jwks = (keys: readonly SigningKey[]) => ({ keys: keys.map((k) => k.publicJwk) })

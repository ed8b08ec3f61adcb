import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { errorCode } from '../shared/errors.js'

/**
 * Encrypts the few secrets the service must read back (TOTP seeds) before they
 * go into events: AES-256-GCM with a key kept in DATA_DIR/keys/data.key.
 */
export class DataKey {
  /** Derived, so the encryption key is never used for anything but encryption. */
  private readonly digestKey: Buffer

  private constructor(private readonly key: Buffer) {
    this.digestKey = createHmac('sha256', key).update('credit-service request digest v1').digest()
  }

  static load(dataDir: string): DataKey {
    const file = path.join(dataDir, 'keys', 'data.key')
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 })
    try {
      fs.writeFileSync(file, randomBytes(32).toString('base64'), { flag: 'wx', mode: 0o600 })
    } catch (error) {
      if (errorCode(error) !== 'EEXIST') throw error
    }
    const key = Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'base64')
    if (key.length !== 32) throw new Error(`${file} must hold 32 bytes in base64`)
    return new DataKey(key)
  }

  /**
   * HMAC-SHA-256 of text that may hold secrets (a request with a token
   * endpoint's password): recorded, it lets the service compare requests but
   * lets nobody holding the log confirm a guessed secret without this key.
   */
  digest(text: string): string {
    return createHmac('sha256', this.digestKey).update(text).digest('hex')
  }

  encrypt(plain: string): string {
    const iv = randomBytes(12)
    const cipher = createCipheriv('aes-256-gcm', this.key, iv)
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()])
    return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), body.toString('base64url')].join('.')
  }

  decrypt(sealed: string): string {
    const [version, iv, tag, body] = sealed.split('.')
    if (version !== 'v1' || iv === undefined || tag === undefined || body === undefined) throw new Error('unknown sealed format')
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'))
    decipher.setAuthTag(Buffer.from(tag, 'base64url'))
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8')
  }
}

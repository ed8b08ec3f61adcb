import { createHash } from 'node:crypto'
import { Transform } from 'node:stream'

/** A pass-through stream that counts and hashes (SHA-256) what flows through it; `digest()` once it has ended. */
export const digestStream = (): { stream: Transform; digest(): { bytes: number; sha256: string } } => {
  const hash = createHash('sha256')
  let bytes = 0
  const stream = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      hash.update(chunk)
      bytes += chunk.length
      callback(null, chunk)
    },
  })
  return { stream, digest: () => ({ bytes, sha256: hash.digest('hex') }) }
}

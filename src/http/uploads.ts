import path from 'node:path'
import { Readable, Transform, finished, pipeline } from 'node:stream'
import multipart from '@fastify/multipart'
import { create as contentDisposition } from 'content-disposition'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { fileTypeStream } from 'file-type'
import { Type } from 'typebox'
import type { FileStore, StoredFile } from '../files/fileStore.js'
import type { Config } from '../shared/config.js'
import { AppError, errorMessage } from '../shared/errors.js'

export interface UploadPolicy {
  maxBytes: number
  allowedTypes: readonly string[]
}

export const uploadPolicy = (config: Config): UploadPolicy => ({ maxBytes: config.uploadMaxBytes, allowedTypes: config.uploadAllowedTypes })

/** Bytes the sniffer looks at: enough for every signature file-type knows. */
const SAMPLE_BYTES = 4100

/**
 * Errors of the request body itself (busboy's missing boundary or a body
 * that ends inside a part, a client aborting the upload) are the client's:
 * a 400, not a failure of ours.
 */
const brokenUpload = (error: unknown): Error => {
  // @fastify/multipart's own refusals carry their status (406, 413) and keep it.
  if (error instanceof AppError || (error instanceof Error && 'statusCode' in error)) return error
  return new AppError('BAD_REQUEST', `the upload is malformed or ended early: ${errorMessage(error)}`)
}

const tooLarge = (policy: UploadPolicy) =>
  new AppError('PAYLOAD_TOO_LARGE', `the file is larger than ${policy.maxBytes} bytes`, { maxBytes: policy.maxBytes }, { connection: 'close' })

/** Query of upload routes: the file name to record for a raw (non-multipart) body. */
export const UploadQuery = Type.Object({
  filename: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'file name to record for a raw body (multipart bodies carry their own)' })),
}, { additionalProperties: false })

export const uploadDescription = (policy: UploadPolicy): string =>
  `The body is the file itself (any Content-Type, e.g. application/octet-stream) or multipart/form-data with one file part. ` +
  `At most ${policy.maxBytes} bytes (UPLOAD_MAX_BYTES). The content type is sniffed from the bytes, never taken from the request; ` +
  `accepted: ${policy.allowedTypes.join(', ')} (UPLOAD_ALLOWED_TYPES). 413 when too large, 415 when the content is of another type.`

/**
 * Makes an encapsulated scope take request bodies as streams: multipart/form-data
 * through @fastify/multipart, anything else as the raw bytes. Only upload routes
 * live in such a scope.
 */
export const acceptUploads = async (app: FastifyInstance, policy: UploadPolicy): Promise<void> => {
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('*', (_request, payload, done) => done(null, payload))
  // One byte over the limit reaches our counter, which answers 413; busboy would otherwise truncate silently.
  await app.register(multipart, { throwFileSizeLimit: false, limits: { fileSize: policy.maxBytes + 1, files: 1, fields: 10, parts: 11, fieldSize: 1024 } })
}

export interface IncomingUpload {
  source: Readable
  filename: string | null
}

const cleanFilename = (name: string | null | undefined): string | null => {
  if (name === null || name === undefined) return null
  const base = path.basename(name.replace(/\\/g, '/')).replace(/[\p{Cc}"]/gu, '').trim().slice(0, 255)
  return base === '' ? null : base
}

/** The uploaded file's bytes and name, from a raw body or the file part of a multipart body. */
export const readUpload = async (request: FastifyRequest, policy: UploadPolicy, filename: string | undefined): Promise<IncomingUpload> => {
  if (request.isMultipart()) {
    const part = await request.file().catch((error: unknown) => { throw brokenUpload(error) })
    if (part === undefined) throw new AppError('BAD_REQUEST', 'the multipart body has no file part')
    return { source: part.file, filename: cleanFilename(part.filename) }
  }
  const declared = Number(request.headers['content-length'] ?? Number.NaN)
  if (declared > policy.maxBytes) throw tooLarge(policy)
  if (declared === 0) throw new AppError('BAD_REQUEST', 'the file is empty')
  const body: unknown = request.body
  if (!(body instanceof Readable)) throw new AppError('BAD_REQUEST', 'the request has no body; send the file as the body')
  return { source: body, filename: cleanFilename(filename) }
}

/** Counts bytes and fails the stream once there are more than allowed. */
const byteLimit = (policy: UploadPolicy): Transform => {
  let seen = 0
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      seen += chunk.length
      callback(seen > policy.maxBytes ? tooLarge(policy) : null, chunk)
    },
  })
}

/**
 * Stores an upload under `fileId` once its sniffed type is allowed and its size
 * within bounds; on any refusal nothing is kept. The request stream itself is
 * only drained, never destroyed, so the refusal still reaches the client.
 */
export const storeUpload = async (
  files: FileStore,
  fileId: string,
  upload: IncomingUpload,
  meta: { organizationId: string; defaultName: string },
  policy: UploadPolicy,
): Promise<StoredFile> => {
  let received = 0
  const guard = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      received += chunk.length
      done(null, chunk)
    },
  })
  // pipe() does not pass errors on: a body that breaks off mid-file (even before this point) must fail the store, not leave it waiting.
  finished(upload.source, (error) => {
    if (error !== undefined && error !== null) guard.destroy(brokenUpload(error))
  })
  upload.source.pipe(guard)
  const release = () => {
    upload.source.unpipe(guard)
    upload.source.resume()
  }
  try {
    const sniffed = await fileTypeStream(guard, { sampleSize: SAMPLE_BYTES })
    const detected = sniffed.fileType
    // The sniffer read to the end of a body without a byte: an empty file, whatever type it claims.
    if (detected === undefined && received === 0) throw new AppError('BAD_REQUEST', 'the file is empty')
    if (detected === undefined || !policy.allowedTypes.includes(detected.mime)) {
      throw new AppError('UNSUPPORTED_MEDIA_TYPE', detected === undefined
        ? `the content is not of a recognised type; accepted: ${policy.allowedTypes.join(', ')}`
        : `content of type ${detected.mime} is not accepted; accepted: ${policy.allowedTypes.join(', ')}`,
      { detected: detected?.mime ?? null, allowed: [...policy.allowedTypes] })
    }
    const limited = pipeline(sniffed, byteLimit(policy), () => undefined)
    const filename = upload.filename ?? `${meta.defaultName}.${detected.ext}`
    const stored = await files.put(fileId, limited, { contentType: detected.mime, filename, organizationId: meta.organizationId })
    if (stored.size === 0) throw new AppError('BAD_REQUEST', 'the file is empty')
    return stored
  } catch (error) {
    release()
    await files.delete(fileId).catch(() => false)
    throw error
  }
}

/** Sends stored bytes as they are: the recorded content type and length, no JSON wrapper. */
export const sendFile = async (reply: FastifyReply, files: FileStore, fileId: string, meta: { contentType: string; filename: string }) => {
  const opened = await files.open(fileId)
  if (opened === null) return null
  // An ASCII `filename` for every client, and the name itself as RFC 8187 `filename*` when it differs.
  const asciiName = meta.filename.replace(/[^\x20-\x7e]/g, '_')
  return reply
    .header('content-type', meta.contentType)
    .header('content-length', String(opened.file.size))
    .header('content-disposition', contentDisposition(meta.filename, { fallback: asciiName }))
    .header('cache-control', 'private, no-store')
    .header('x-content-type-options', 'nosniff')
    .header('etag', `"${opened.file.sha256}"`)
    .send(opened.stream)
}

/** The OpenAPI shape of a binary answer. */
export const BinaryResponse = {
  description: 'the file\'s bytes, with its Content-Type and Content-Length',
  content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
}

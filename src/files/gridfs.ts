import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { GridFSBucket, ObjectId, type Db } from 'mongodb'
import { digestStream } from '../shared/digestStream.js'
import type { FileMetadata, FileStore, OpenedFile, StoredFile } from './fileStore.js'

interface GridFile {
  _id: ObjectId
  length: number
  uploadDate: Date
  /** Our file id; GridFS indexes filename, and its own ids are ObjectIds. */
  filename: string
  metadata?: { contentType?: string; organizationId?: string; sha256?: string; originalName?: string }
}

const toStored = (file: GridFile): StoredFile => ({
  fileId: file.filename,
  size: file.length,
  filename: file.metadata?.originalName ?? file.filename,
  contentType: file.metadata?.contentType ?? 'application/octet-stream',
  organizationId: file.metadata?.organizationId ?? '',
  sha256: file.metadata?.sha256 ?? '',
  storedAt: file.uploadDate.toISOString(),
})

/** Files in MongoDB GridFS, next to the read models. */
export class GridFsFileStore implements FileStore {
  readonly kind = 'gridfs' as const
  private readonly bucket: GridFSBucket
  private readonly files
  private readonly chunks

  constructor(db: Db, private readonly bucketName = 'files') {
    this.bucket = new GridFSBucket(db, { bucketName })
    this.files = db.collection<GridFile>(`${bucketName}.files`)
    this.chunks = db.collection<{ files_id: ObjectId; n: number }>(`${bucketName}.chunks`)
  }

  /**
   * An upload cut off by a crash leaves chunks and no files document. Its GridFS id is an ObjectId made when the
   * upload opened, so one opened before `now − idleMs` and still without a files document will never get one.
   */
  async removeLeftovers(idleMs: number, now: Date): Promise<number> {
    const openedBefore = ObjectId.createFromTime(Math.floor((now.getTime() - idleMs) / 1000))
    const orphans = await this.chunks.aggregate<{ files_id: ObjectId }>([
      { $match: { files_id: { $lt: openedBefore }, n: 0 } },
      { $lookup: { from: `${this.bucketName}.files`, localField: 'files_id', foreignField: '_id', as: 'file' } },
      { $match: { file: { $size: 0 } } },
      { $project: { _id: 0, files_id: 1 } },
    ]).toArray()
    for (const { files_id: uploadId } of orphans) await this.chunks.deleteMany({ files_id: uploadId })
    return orphans.length
  }

  async put(fileId: string, content: Readable | Buffer, metadata: FileMetadata): Promise<StoredFile> {
    const measure = digestStream()
    // GridFS writes the files document after the last chunk, so a file is visible only once complete.
    const upload = this.bucket.openUploadStream(fileId, {
      metadata: { contentType: metadata.contentType, organizationId: metadata.organizationId, originalName: metadata.filename },
    })
    await pipeline(Buffer.isBuffer(content) ? Readable.from([content]) : content, measure.stream, upload)
    await this.files.updateOne({ _id: upload.id }, { $set: { 'metadata.sha256': measure.digest().sha256 } })
    const stored = await this.stat(fileId)
    if (stored === null) throw new Error(`GridFS lost file ${fileId}`)
    return stored
  }

  private find(fileId: string) {
    return this.files.findOne({ filename: fileId }, { sort: { uploadDate: -1 } })
  }

  async stat(fileId: string): Promise<StoredFile | null> {
    const file = await this.find(fileId)
    return file === null ? null : toStored(file)
  }

  async open(fileId: string): Promise<OpenedFile | null> {
    const file = await this.find(fileId)
    if (file === null) return null
    return { file: toStored(file), stream: this.bucket.openDownloadStream(file._id) }
  }

  async delete(fileId: string): Promise<boolean> {
    const file = await this.find(fileId)
    if (file === null) return false
    await this.bucket.delete(file._id)
    return true
  }
}

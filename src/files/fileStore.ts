import type { Readable } from 'node:stream'

export interface FileMetadata {
  contentType: string
  filename: string
  organizationId: string
}

export interface StoredFile extends FileMetadata {
  fileId: string
  size: number
  /** Hex SHA-256 of the content, computed while storing. */
  sha256: string
  storedAt: string
}

export interface OpenedFile {
  file: StoredFile
  stream: Readable
}

/**
 * Binary content (profile files, signature scans, export files, blobs). The
 * caller picks the id (ids come with commands); metadata about the file lives
 * in events, this port only keeps bytes. Writes are atomic: a file is either
 * fully stored under its id or absent.
 */
export interface FileStore {
  readonly kind: 'filesystem' | 'gridfs'
  put(fileId: string, content: Readable | Buffer, metadata: FileMetadata): Promise<StoredFile>
  stat(fileId: string): Promise<StoredFile | null>
  open(fileId: string): Promise<OpenedFile | null>
  delete(fileId: string): Promise<boolean>
  /**
   * Removes what writes cut off by a crash left behind (never a stored file), once nothing has written to it for
   * `idleMs`; answers how many were removed. At start-up.
   */
  removeLeftovers(idleMs: number, now: Date): Promise<number>
}

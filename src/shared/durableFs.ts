import fs from 'node:fs/promises'

/** fsync of a file or a directory (a directory's, so that the names created or renamed in it are durable). */
export const syncPath = async (file: string): Promise<void> => {
  const handle = await fs.open(file, 'r')
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}
